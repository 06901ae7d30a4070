"""Where in AKG a failure happens, for maintainers: the stage (poly auto-tiling, poly schedule passes, AKG
or TVM IR passes, code generation, the Hybrid DSL parser, ...) from the failing check's source file and
the backtrace, the component (the innermost AKG class method in the backtrace), and the last pass that
wrote IR before the failure (from the `MS_DEV_DUMP_IR` dump)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path

from reducer.compile.crash_stack import bare
from reducer.compile.identity import Signature

_SOURCE = re.compile(r'akg-src/(?P<path>(?:src|third_party)/[^"]+)", line (?P<line>\d+)')
_PY_SOURCE = re.compile(r'File "[^"]*/(?P<path>akg/[^"]+\.py)", line (?P<line>\d+)')
_PASS_FILE = re.compile(r"^\d+_(?P<name>\w+)\.cc$")
_NAMESPACES = re.compile(r"^(?:akg::ir::poly::|akg::ir::|akg::|air::ir::|air::|tvm::)")

# Most specific first: the first rule any of the clues matches names the stage.
_BY_SOURCE = [
    ("src/poly/tiling/", "poly auto-tiling"),
    ("src/poly/schedule_pass/", "poly schedule passes"),
    ("src/poly/scop", "poly scop construction"),
    ("src/poly/", "polyhedral optimisation"),
    ("src/pass/", "AKG IR passes"),
    ("src/codegen/", "AKG code generation"),
    ("src/composite/", "composite graph lowering"),
    ("third_party/incubator-tvm/src/codegen/", "TVM/LLVM code generation"),
    ("third_party/incubator-tvm/src/pass/", "TVM IR passes"),
    ("third_party/incubator-tvm/src/", "TVM IR construction"),
    ("akg/tvm/hybrid/", "Hybrid DSL parser"),
    ("akg/composite/", "composite graph build"),
    ("akg/", "AKG Python driver"),
]
_BY_SYMBOL = [
    (re.compile(r"poly::\w*(Tiling|Tile(?!OuterBand)|SpaceAnalyzer|TilingAnalyzer)"), "poly auto-tiling"),
    (re.compile(r"poly::(TileOuterBand|\w*Schedule\w*Pass|\w*Fusion|\w*Manager)\b"), "poly schedule passes"),
    (re.compile(r"poly::(Scop|MakeScheduleTree)"), "poly scop construction"),
    (re.compile(r"akg::ir::poly::"), "polyhedral optimisation"),
    (re.compile(r"akg::(ir|codegen)::"), "AKG IR passes"),
    (re.compile(r"air::codegen::|llvm::"), "TVM/LLVM code generation"),
    (re.compile(r"air::ir::"), "TVM IR passes"),
]
_RULES = [stage for _, stage in _BY_SOURCE] + [s for _, s in _BY_SYMBOL if s not in {t for _, t in _BY_SOURCE}]


@dataclass(frozen=True)
class FailingStage:
    stage: str  # "poly auto-tiling", or "" when nothing says
    component: str  # "SpaceAnalyzer::MarkGemmAxes"
    innermost: str  # the innermost frame when it is a helper below the component
    after_pass: str  # the last pass that wrote IR: "AnalyzeSchedule (poly)"
    source: str  # "src/poly/tiling/tiling_utils.cc:193"

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    def one_line(self) -> str:
        """'poly auto-tiling: SpaceAnalyzer::MarkGemmAxes, after AnalyzeSchedule (poly)'"""
        where = self.component + (f" (in {self.innermost})" if self.innermost else "")
        parts = [self.stage or "unknown stage", where]
        text = ": ".join(p for p in parts if p)
        return text + (f", after {self.after_pass}" if self.after_pass else "")


def _short(symbol: str) -> str:
    """A frame's function as the stage line names it: without namespaces and parameter types."""
    return _NAMESPACES.sub("", bare(symbol))


def _source(log: str, signature: Signature) -> str:
    """The failing check's file in the AKG sources (the TVMError's own line comes last), or the AKG
    Python file of a Python error, else the signature's location."""
    found = list(_SOURCE.finditer(log))
    if not found and signature.component == "python":
        found = list(_PY_SOURCE.finditer(log))
    return f"{found[-1]['path']}:{found[-1]['line']}" if found else signature.location


def _stage(source: str, frames: tuple[str, ...]) -> str:
    candidates = []
    if not source.split(":")[0].endswith(".h"):  # a header's inline check says little; the callers do
        candidates += [stage for prefix, stage in _BY_SOURCE if prefix in source][:1]
    for frame in frames:
        candidates += [stage for pattern, stage in _BY_SYMBOL if pattern.search(frame)][:1]
    return min(candidates, key=_RULES.index, default="")


def last_pass(ir_dir: Path | None) -> str:
    """The pass whose IR was written last (by time), '(poly)' for the polyhedral passes."""
    if ir_dir is None or not ir_dir.is_dir():
        return ""
    dumps = [p for p in ir_dir.rglob("*.cc") if _PASS_FILE.match(p.name)]
    if not dumps:
        return ""
    last = max(dumps, key=lambda p: (p.stat().st_mtime_ns, p.parent.name == "poly", p.name))
    name = _PASS_FILE.match(last.name)["name"]  # type: ignore[index]
    return f"{name} (poly)" if last.parent.name == "poly" else name


def failing_stage(log: str, signature: Signature, ir_dir: Path | None) -> FailingStage:
    source = _source(log, signature)
    frames = signature.frames
    methods = [f for f in frames if "::" in _short(f)]
    component = _short(methods[0]) if methods else (_short(frames[0]) if frames else "")
    innermost = _short(frames[0]) if frames and methods and frames[0] != methods[0] else ""
    return FailingStage(_stage(source, frames), component, innermost, last_pass(ir_dir), source)
