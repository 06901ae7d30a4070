"""The upstream bundle: collect the minimal case's files, logs, IR and statistics, redact local facts,
render ISSUE.md and repro.py from templates, and publish the folder and a .tar.gz atomically."""

from __future__ import annotations

import ast
import contextlib
import getpass
import io
import itertools
import json
import os
import pprint
import re
import shutil
import socket
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from reducer.compile.akg import CheckProgram
from reducer.compile.identity import Kind, Signature
from reducer.core.case import Case, Expectation, TensorSpec
from reducer.core.errors import InputError
from reducer.core.files import user_cache_dir, write_atomic
from reducer.core.targets import TARGETS, Target
from reducer.core.templates import templates
from reducer.diagnosis.boundary import OtherBug
from reducer.diagnosis.diagnose import Diagnosis, other_bug_folder
from reducer.diagnosis.stage import FailingStage
from reducer.diagnosis.targets import summary
from reducer.diagnosis.triage import Triage
from reducer.in_mindspore.mismatch_run import DETAIL as MISMATCH_DETAIL
from reducer.in_mindspore.mismatch_run import TOLERANCE, make_inputs
from reducer.inputs.crash_yaml import case_to_yaml
from reducer.kernels.info import attr_data_type, dtype_format
from reducer.kernels.kinds import kind_of, outputs_of
from reducer.kernels.size import Size
from reducer.toolchain.builds import AkgBuild
from reducer.toolchain.launch import Toolchain

MARKER = ".akg-reduce-bundle"
CHECKOUT = Path(__file__).resolve().parents[2]  # akg-reduce's own folder: its checkout, or site-packages
SECRET_NAME = re.compile(r"TOKEN|KEY|PASSWORD|SECRET|PASSWD|CREDENTIAL", re.IGNORECASE)
KEY_LOG_LINES = 12  # of a failure whose own line the log does not hold: the log's last lines
STACK_LINES = 8  # of the C++ stack AKG prints under a failed check
TRACEBACK_LINES = 16  # innermost lines of a Python traceback
FRAME_ARGS_CHARS = 60  # a stack frame's argument list longer than this is cut to (...)
TITLE_CHARS = 99
JSON_LINE_CHARS = 120  # the kernel JSON in ISSUE.md: a list or object this short stays on one line
QUOTED_LINE_CHARS = 200  # a line of the user's run quoted in ISSUE.md
INLINE_SCRIPT_CHARS = 20_000  # a longer repro.py (a wrong-result check with its reference) is attached, not inlined
# Lines AKG prints on every compile, which place nothing.
NOTICES = ("Please set tiling repo path",)
_PY_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit)\b")
SHOWN_INPUT = 64  # inputs of at most this many elements are shown in a wrong-result ISSUE.md
_PATH_LIKE = re.compile(r"[^\s'\"(),;=]*[/@][^\s'\"(),;=]*")  # a path, a URL, user@host


class Redactor:
    """Replaces local paths, the user and the host name in text that leaves this machine."""

    def __init__(self, toolchain: Toolchain, env: dict[str, str]) -> None:
        pairs: list[tuple[str, str]] = [(v, "<redacted>") for k, v in env.items() if SECRET_NAME.search(k)]
        if toolchain.mindspore_dir:
            pairs += _spellings(str(Path(toolchain.mindspore_dir).parent), "<site-packages>")
        # The interpreters first (a venv's python is under the checkout), then the folders, the longest first.
        for path, placeholder in [
            (toolchain.python, "python"),
            (sys.executable, "python"),
            (str(Path(toolchain.compiler_script).parent), "<compiler-dir>"),
            (str(user_cache_dir()), "<akg-reduce-cache>"),
            (sys.prefix, "<venv>"),
            (str(CHECKOUT), "<akg-reduce>"),
            (tempfile.gettempdir().rstrip("/") + "/", "<tmp>/"),
            ("/tmp/", "<tmp>/"),  # a captured run's own temp dir: the user's TMPDIR need not be ours
            (os.getcwd(), "<cwd>"),
            (str(Path.home()), "~"),
        ]:
            pairs += _spellings(path, placeholder)
        chosen: dict[str, str] = {}
        for path, placeholder in pairs:  # one folder, two names (the checkout is site-packages): the first
            chosen.setdefault(path, placeholder)
        self.pairs = sorted(((a, b) for a, b in chosen.items() if len(a) > 1), key=lambda p: -len(p[0]))
        self.words = [w for w in {getpass.getuser(), socket.gethostname()} if len(w) > 2 and w != "root"]

    def text(self, text: str) -> str:
        for old, new in self.pairs:
            text = text.replace(old, new)
        if self.words:  # inside paths and user@host only: the same word in a kernel is the user's code
            text = _PATH_LIKE.sub(self._words_in, text)
        return re.sub(r"<tmp>/akg-reduce-[\w-]+", "<workdir>", text)

    def _words_in(self, token: re.Match[str]) -> str:
        text = token.group()
        for word in self.words:
            text = re.sub(rf"\b{re.escape(word)}\b", "<redacted>", text)
        return text

    @staticmethod
    def env(env: dict[str, str]) -> dict[str, str]:
        return {k: ("<redacted>" if SECRET_NAME.search(k) else v) for k, v in env.items()}


def _spellings(path: str, placeholder: str) -> list[tuple[str, str]]:
    """`path` as given and as resolved (a venv's python is a symlink, /tmp may be one): a log may say either."""
    resolved = os.path.realpath(path) + ("/" if path.endswith("/") else "")
    return [(path, placeholder), (resolved, placeholder)]


@dataclass(frozen=True)
class RunWorkaround:
    """A setting tried on the user's run itself (a graph-kernel flag) and what the run then did."""

    setting: str  # e.g. "MS_DEV_GRAPH_KERNEL_FLAGS='--disable_cluster_ops=Transpose'"
    outcome: str  # e.g. "the run passes (exit status 0)"
    passes: bool

    def to_dict(self) -> dict[str, Any]:
        return {"setting": self.setting, "outcome": self.outcome, "passes": self.passes}


@dataclass(frozen=True)
class Origin:
    """Where a kernel captured from a user's MindSpore run came from, as the user saw that run."""

    run: str  # e.g. "`python train.py` (exit status 1)" or "the log run.log"
    kernel_from: str  # e.g. "akg_kernel_meta/Fused_Custom_1.info, written by the run"
    final_error: str  # the run's last error line, e.g. "RuntimeError: Response is empty."
    run_workarounds: tuple[RunWorkaround, ...] = ()  # tried on the run itself, in order

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "kernel_from": self.kernel_from,
            "final_error": self.final_error,
            "run_workarounds": [w.to_dict() for w in self.run_workarounds],
        }


@dataclass
class BundleInput:
    """What a bundle says, every fact handed by the session that learnt it: the bundle only renders."""

    original: Case
    original_files: dict[str, str]  # name -> text, the input as given
    reduced: Case
    outputs: tuple[Any, ...]
    signature: Signature
    expectation: Expectation
    log: str
    ir_dir: Path | None
    toolchain: Toolchain
    sizes: dict[str, Size]
    stats: dict[str, Any]
    confirmed: int
    confirm_runs: int
    stage: FailingStage  # where in AKG the minimal case fails
    host: dict[str, str]  # this machine, the compiler and the build (compile/akg.py host_facts)
    side_files: dict[str, str]  # besides the .info, what the minimal case's compile dir holds
    diagnosis: Diagnosis | None = None
    edits: list[dict[str, str]] = field(default_factory=list)  # the search's accepted edits, in order
    origin: Origin | None = None  # set when the kernel was captured from a user's run
    build: AkgBuild | None = None  # the AKG build that compiled it (None: a compiler outside MindSpore)
    triage: Triage | None = None  # compiler bug, usage error or environment problem
    check: CheckProgram | None = None  # the wrong-result check of a mismatch case, as repro.py runs it


def issue_title(signature: Signature, target: Target) -> str:
    """The issue's title, from the bug's identity as the signature holds it: `[AKG][CPU] SIGSEGV in <place>`,
    `[AKG][GPU] Check failed: <message> at file:line`, `[AKG][Ascend] hang in <pass>`, `[AKG][CPU] wrong
    results: <kind> in <ops>`; shortened to TITLE_CHARS."""
    head = f"[AKG][{target.device}] "
    said = (signature.raw or signature.message).rstrip(" :")
    what, where = {
        Kind.SIGNAL: (signature.message, f" in {signature.place}" if signature.place else ""),
        Kind.TIMEOUT: ("hang", f" in {signature.place}" if signature.place else ""),
        Kind.MISMATCH: (signature.message.replace("wrong result:", "wrong results:"), f" in {signature.place}"),
        Kind.INVALID_CUDA: (f"nvcc rejects the CUDA AKG generates: {said}", ""),
    }.get(signature.kind, (said, f" at {signature.location}" if signature.location else ""))
    room = TITLE_CHARS - len(head)
    if len(what) + len(where) > room:
        where = where if len(where) <= room // 2 else where[: room // 2 - 1] + "…"
        what = what if len(what) + len(where) <= room else what[: room - len(where) - 1] + "…"
    return head + what + where


def related_log(log: str, signature: Signature) -> str:
    """The text that places the bug, for "Related log": a crash's backtrace (the frames its signature was read
    from), a hang's sampled stack, a failed check's line with the C++ stack AKG printed under it, a Python
    error's whole traceback, a wrong result's check output; else the failure's own line and the lines after it.
    Never a notice AKG prints on every compile, nor a traceback cut at its first line."""
    lines = [ln.rstrip() for ln in log.splitlines() if ln.strip() and not ln.startswith(MISMATCH_DETAIL)]
    if signature.kind in (Kind.SIGNAL, Kind.TIMEOUT) and signature.frames:
        return "\n".join([_stack_heading(signature), *(f"  {frame}" for frame in signature.frames)])
    if signature.kind is Kind.MISMATCH:
        return "\n".join(_output_lines(lines))
    # By the masked message: the log is the minimal case's compile, the signature may be the original's, and an
    # address or a number in the message differs between the two.
    said = re.compile(signature.message_pattern) if signature.message else None
    own = [i for i, ln in enumerate(lines) if said and said.search(ln)]
    if not own:
        if signature.kind is Kind.SIGNAL:  # no backtrace: what it died of is all there is
            return signature.raw or signature.message
        return "\n".join([ln for ln in lines if not ln.startswith(NOTICES)][-KEY_LOG_LINES:])
    # AKG's own line of a check over the Python exception that carries it up; of a check AKG printed twice, the last,
    # with the whole stack (it prints a short one first).
    at = ([i for i in own if lines[i].startswith("[ERROR]")] or own)[-1]
    if _PY_EXCEPTION.match(lines[at]):
        return "\n".join(_traceback(lines, at))
    stack = itertools.takewhile(lambda ln: ln.lstrip().startswith(("Stack trace:", "[bt]")), lines[at + 1 :])
    return "\n".join([lines[at], *map(_short_frame, itertools.islice(stack, STACK_LINES + 1))])


def _stack_heading(signature: Signature) -> str:
    tool = signature.read_by or "a stack sampler"
    if signature.kind is Kind.SIGNAL:
        return (
            f"{signature.raw or signature.message}; backtrace by {tool} of the same compile (AKG's and TVM's own "
            "frames, innermost first: where it died, then its callers; generic IRMutator and std:: frames left out):"
        )
    return (
        f"{signature.raw or signature.message}; its stack sampled by {tool} at the deadline (innermost first, "
        "from the pass it hangs in):"
    )


def _output_lines(lines: list[str]) -> list[str]:
    """What a wrong-result check printed of each output: its `output N: ...` line and the elements under it."""
    found: list[str] = []
    inside = False
    for line in lines:
        inside = line.startswith("output ") or (inside and line.startswith("  "))
        if inside:
            found.append(line)
    return found


def _traceback(lines: list[str], at: int) -> list[str]:
    """The Python traceback that ends with the exception on line `at`, its first line and its innermost frames."""
    start = next((i for i in range(at, -1, -1) if lines[i].startswith("Traceback (most recent call last):")), at)
    body = lines[start + 1 : at]
    if len(body) > TRACEBACK_LINES:
        body = ["  ...", *body[-TRACEBACK_LINES:]]
    return [lines[start], *body, lines[at]] if start < at else [lines[at]]


def _short_frame(line: str) -> str:
    """A `[bt]` line of AKG's stack with the library's folder left out and a long argument list cut to `(...)`:
    the function is what a maintainer looks for."""
    line = re.sub(r"\S*/(lib\w+\.so)\(", r"\1(", line)
    symbol = re.search(r"\.so\((?P<name>[^()]*(?:<[^()]*>)?)(?P<args>\(.*\))(?P<rest>[^()]*\+0x[0-9a-f]+)\)", line)
    if symbol is None or len(symbol["args"]) <= FRAME_ARGS_CHARS:
        return line
    return line[: symbol.start("args")] + "(...)" + line[symbol.end("args") :]


def _stage_sentence(stage: FailingStage, signature: Signature) -> str:
    """Where in AKG the minimal case fails, as far as it is known ('' when nothing is)."""
    parts = []
    if stage.stage:
        parts.append(f"Failing stage: **{stage.stage}**" + (f", in `{stage.component}`" if stage.component else ""))
    elif stage.component:
        parts.append(f"It fails in `{stage.component}`")
    if parts and stage.innermost:
        parts[-1] += f" (innermost frame `{stage.innermost}`)"
    failure = "hang" if signature.kind is Kind.TIMEOUT else "failure"
    if stage.after_pass:
        parts.append(f"the last pass that wrote IR before the {failure} is `{stage.after_pass}`")
    if stage.source and signature.kind is Kind.ERROR:  # of a crash or a hang it is only where it was
        parts.append(f"the failing check is at `{stage.source}`")
    if not parts:
        return ""
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def _pretty_json(value: Any, indent: str = "") -> str:
    """JSON a person reads: a list or object on one line when it fits in JSON_LINE_CHARS, else one item a line."""
    flat = json.dumps(value)
    if len(indent) + len(flat) <= JSON_LINE_CHARS or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = indent + "  "
    items = (
        [f"{json.dumps(k)}: {_pretty_json(v, inner)}" for k, v in value.items()]
        if isinstance(value, dict)
        else [_pretty_json(v, inner) for v in value]
    )
    ends = "{}" if isinstance(value, dict) else "[]"
    return ends[0] + "\n" + ",\n".join(inner + item for item in items) + "\n" + indent + ends[1]


def _one_line(text: str) -> str:
    """A line of a user's run as ISSUE.md quotes it: a kernel JSON it carries is left out (the JSON is below)."""
    if len(text) <= QUOTED_LINE_CHARS:
        return text
    brace = text.find("{")
    if 0 <= brace < QUOTED_LINE_CHARS:
        return text[:brace] + "{…}"
    return text[: QUOTED_LINE_CHARS - 1] + "…"


def _render(template: str, **context: Any) -> str:
    return templates("reducer.bundle", trim_blocks=True).get_template(template).render(**context)


def _mismatch_repro(check: CheckProgram) -> str:
    """The wrong-result runner up to its main guard, with the case's spec, the numpy reference of a graph, and
    a main guard that runs it: a script that needs only MindSpore."""
    guard = next(
        node
        for node in ast.parse(check.runner).body
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
    )
    return _render(
        "mismatch_repro.py.j2",
        runner="\n".join(check.runner.splitlines()[: guard.lineno - 1]),
        spec=pprint.pformat(check.spec, sort_dicts=False, width=110),
        reference=check.reference,
    )


def _repro_timeout(case: Case) -> int:
    """How long repro.py lets the compile run: the case's limit, at least a minute (a machine slower than
    this one must not make a kernel that compiles look like a hang)."""
    return int(max(case.time_limit, 60))


def _compile_repro(b: BundleInput, reduced: Case, info: dict[str, Any], mindspore: str) -> str:
    return _render(
        "repro.py.j2",
        name=reduced.name,
        mindspore=mindspore,
        info_json=pprint.pformat(info, sort_dicts=False, width=110),
        attrs_json=repr(reduced.attrs),
        env_json=repr(reduced.env),
        files_json=repr(b.side_files),
        kind=b.signature.kind,
        message_regex=b.signature.message_pattern,
        where=b.signature.location.split(":")[0] if b.signature.location else "",
        timeout=_repro_timeout(reduced),
        akg_build=b.build.name if b.build else TARGETS[reduced.target].build_prefix,
        get_build=_getting_build(TARGETS[reduced.target], mindspore),
        codegen_stop=TARGETS[reduced.target].codegen_stop,
    )


def _getting_build(target: Target, mindspore: str) -> str:
    """How a maintainer gets the AKG build of `target` when the current wheels do not ship it: the MindSpore
    release that compiled the bundle (`mindspore`, when it is a version), else the one the tool installs."""
    release = target.toolchain
    if release is None:
        return ""
    if re.fullmatch(r"\d+\.\d+\.\d+\S*", mindspore):
        release = replace(release, mindspore=mindspore)
    return (
        f"MindSpore {release.mindspore}'s CPU wheel ships it (later wheels do not): {release.by_hand}, then "
        "run this script with that venv's python."
    )


def _well_formed(b: BundleInput) -> dict[str, Any] | None:
    """Whether the minimal kernel is well-formed and how that is known, and whether the search required it;
    None for kinds that say nothing of it (a fused graph is well-formed by construction too)."""
    kind = kind_of(b.reduced)
    if not kind.well_formedness:
        return None
    why_not = kind.ill_formed(b.reduced)
    if not b.reduced.allow_ill_formed:
        required = "yes"
    elif kind.ill_formed(b.original):
        required = "no: the original kernel is not well-formed"
    else:
        required = "no: --allow-ill-formed"
    undecided = () if why_not else kind.undecided(b.reduced)
    return {"holds": not why_not, "why_not": why_not, "required": required, "undecided": undecided}


def _custom_op(reduced: Case, outputs: tuple[TensorSpec, ...]) -> str:
    """A script that runs the kernel as its user does, through `ops.Custom(..., func_type="akg")`."""
    shapes = [list(t.shape) for t in outputs]
    dtypes = [f"ms.{t.dtype}" for t in outputs]
    return _render(
        "custom_op.py.j2",
        device=TARGETS[reduced.target].device,
        source=reduced.source.rstrip(),
        function=reduced.function,
        out_shapes=shapes[0] if len(shapes) == 1 else shapes,
        out_dtypes=dtypes[0] if len(dtypes) == 1 else "(" + ", ".join(dtypes) + ")",
        func_type=kind_of(reduced).custom_func_type,
        wrapper=kind_of(reduced).custom_wrapper,
        compile_attrs_dict=repr(reduced.attrs),
        inputs=reduced.inputs,
        outputs=outputs,
        dtype_formats=[f"DataType.{dtype_format(t.dtype)}" for t in (*reduced.inputs, *outputs)],
        op_attrs=[(name, attr_data_type(value), repr(value)) for name, value in reduced.op_attrs.items()],
        compile_attrs=repr(json.dumps(reduced.attrs, sort_keys=True)) if reduced.attrs else "",
    )


def _issue(b: BundleInput, reduced: Case, info: dict[str, Any], repro: str) -> str:
    kind = kind_of(reduced)
    target = TARGETS[reduced.target]
    return _render(
        "issue.md.j2",
        title=issue_title(b.signature, target),
        device=target.template_device,
        hardware=target.device,
        env=b.host,
        target=reduced.target,
        wheel=target.wheel.format(build=b.host.get("akg_build_name") or f"{target.build_prefix}*"),
        fixed_without_codegen=target.fixed_without_codegen,
        kernel_kind=kind.describe(reduced),
        kernel_file=kind.kernel_file,
        function=reduced.function or info.get("op", ""),
        graph_text=kind.listing(reduced),
        inputs=reduced.inputs,
        inputs_text=", ".join(f"{list(t.shape)} {t.dtype}" for t in reduced.inputs),
        signature=b.signature,
        stage_sentence=_stage_sentence(b.stage, b.signature),
        source=reduced.source,
        attrs_json=json.dumps(reduced.attrs),
        env_vars=" ".join(f"{k}={v}" for k, v in reduced.env.items()),
        needs_decorator=True,
        custom_op=_custom_op(reduced, b.outputs) if kind.python_function else "",
        custom_func_type=kind.custom_func_type,
        told_from_source=kind.told_from_source,
        repro=repro if len(repro) <= INLINE_SCRIPT_CHARS else "",
        repro_kb=round(len(repro) / 1000),
        kernel_json=_pretty_json(info),
        related_log=related_log(b.log, b.signature),
        original_size=kind.size_in_full(b.sizes["original"]),
        reduced_size=kind.size_in_full(b.sizes["reduced"]),
        kind_label=kind.label,
        stats=b.stats,
        confirmed=b.confirmed,
        confirm_runs=b.confirm_runs,
        diagnosis=b.diagnosis,
        targets_summary=summary(b.diagnosis.targets) if b.diagnosis else "",
        mismatch=reduced.mismatch,
        results=_results(b, reduced) if reduced.mismatch else None,
        origin=b.origin,
        final_error=_one_line(b.origin.final_error) if b.origin else "",
        triage=b.triage,
        well_formed=_well_formed(b),
        well_formedness=kind.well_formedness,
        repro_timeout=_repro_timeout(reduced),
    )


def _readme(b: BundleInput, files: list[str]) -> str:
    """README.md, for the user who ran akg-reduce: what the files are, the verdict and what to do, what to
    attach to the issue, the workarounds."""
    return _render(
        "readme.md.j2",
        name=b.reduced.bundle_name,
        title=issue_title(b.signature, TARGETS[b.reduced.target]),
        files=files,
        other_bugs=any(name.startswith("other_bugs/") for name in files),
        kernel_file=kind_of(b.reduced).kernel_file,
        triage=b.triage,
        run_workarounds=[w for w in b.origin.run_workarounds if w.passes] if b.origin else [],
        workarounds=b.diagnosis.workarounds if b.diagnosis else [],
        mismatch=b.reduced.mismatch,
    )


def _results(b: BundleInput, reduced: Case) -> dict[str, Any]:
    """What ISSUE.md says of a wrong result: how the kernel ran and against what, the tolerance, the worst
    output's max error and wrong elements and what else the kernel did wrong (the check's detail line in the
    final log), and the inputs (the small ones in full)."""
    kind = kind_of(reduced)
    detail: dict[str, Any] = {}
    for line in b.log.splitlines():
        if line.startswith(MISMATCH_DETAIL):
            with contextlib.suppress(ValueError):
                detail = json.loads(line[len(MISMATCH_DETAIL) :])
    assert reduced.mismatch is not None
    if reduced.mismatch.tolerance is not None:
        given = reduced.mismatch.tolerance
        tolerance = (
            f"|actual - expected| > tolerance x (1 + |expected|){kind.results_slack}, with the tolerance {given:g}"
        )
    elif kind.error_model:
        tolerance = (
            "|actual - expected| is more than a right kernel's error may be: what the ops' dtypes, conditioning "
            "and reduction lengths allow and a few times MindSpore's own kernels' error (akg-reduce's "
            "docs/wrong-results.md); the bound at the worst element is in the check's output below"
        )
    else:
        dtypes = ", ".join(f"{d} {t:g}" for d, t in TOLERANCE.items())
        tolerance = (
            f"|actual - expected| > tolerance x (1 + |expected|){kind.results_slack}, with the tolerance of each "
            f"output's dtype ({dtypes}; integers exactly)"
        )
    arrays = make_inputs(kind.drawn_inputs(reduced), 0)
    names = kind.input_names(reduced)
    shown = {
        names[i]: np.array2string(a, precision=4, separator=", ", threshold=SHOWN_INPUT, prefix=f"{names[i]} = ")
        for i, a in enumerate(arrays)
        if a.size <= SHOWN_INPUT
    }
    return {
        "run": kind.results_run,
        "reference": kind.results_reference,
        "tolerance": tolerance,
        "detail": detail,
        "inputs": shown,
    }


def _reduction(b: BundleInput, stage: FailingStage) -> dict[str, Any]:
    """reduction.json: the signature, where AKG fails, the sizes, the statistics and the accepted edits, and
    the akg-reduce that made it (a script reading it can tell which rules of identity it applied)."""
    return {
        "akg_reduce": b.host["akg_reduce"],
        "signature": b.signature.to_dict(),
        "triage": b.triage.to_dict() if b.triage else None,
        "stage": stage.to_dict(),
        "original": b.sizes["original"].to_dict(),
        "reduced": b.sizes["reduced"].to_dict(),
        **b.stats,
        "confirmations": b.confirmed,
        "confirmation_runs": b.confirm_runs,
        "diagnosis": b.diagnosis.to_dict() if b.diagnosis else None,
        "edits": b.edits,
        "well_formed": _well_formed(b),
        "origin": b.origin.to_dict() if b.origin else None,
        "target": b.reduced.target,
        "akg_build": b.build.to_dict() if b.build else None,
    }


def _files(b: BundleInput, redact: Redactor) -> dict[str, str]:
    reduced = b.reduced.with_(env=redact.env(b.reduced.env))
    kind = kind_of(reduced)
    info = kind.info(reduced, b.outputs)
    env_facts = b.host
    stage = b.stage
    env_json = {**env_facts, "compile_env": reduced.env, "attrs": reduced.attrs, "target": reduced.target}
    env_json["akg_build"] = b.build.to_dict() if b.build else None
    repro = _mismatch_repro(b.check) if b.check else _compile_repro(b, reduced, info, env_facts["mindspore"])
    files = {
        "ISSUE.md": _issue(b, reduced, info, repro),
        "repro.py": repro,
        "kernel.info": json.dumps(info, indent=4),
        kind.kernel_file: kind.kernel_text(reduced, b.outputs),
        "crash.yaml": case_to_yaml(reduced, kind.kernel_file, b.expectation),
        "compile.log": b.log,
        "env.json": json.dumps(env_json, indent=2),
        "reduction.json": json.dumps(_reduction(b, stage), indent=2, default=str),
    }
    for name, text in b.original_files.items():
        files[f"original/{name}"] = text
    for bug in b.diagnosis.other_bugs if b.diagnosis else []:
        files.update(_other_bug_files(bug, redact))
    files["README.md"] = _readme(b, [*files, *(["ir/"] if b.ir_dir is not None and b.ir_dir.exists() else [])])
    return {name: redact.text(text) for name, text in files.items()}


def _other_bug_files(bug: OtherBug, redact: Redactor) -> dict[str, str]:
    """The case of another bug met by the shape map: a crash.yaml and its kernel, ready for corpus/."""
    folder = other_bug_folder(bug)
    case = bug.case.with_(name=f"{bug.case.name}_{bug.signature.key()}", env=redact.env(bug.case.env))
    kind = kind_of(case)
    kernel = kind.kernel_text(case, outputs_of(case))
    return {
        f"{folder}/crash.yaml": f"# found by the shape map at {bug.found}: {bug.signature.one_line()}\n"
        + case_to_yaml(case, kind.kernel_file, bug.signature.expectation()),
        f"{folder}/{kind.kernel_file}": kernel,
    }


def bundle_triage(bundle: Path) -> dict[str, Any] | None:
    """The triage a written bundle holds (reduction.json's `triage`)."""
    return json.loads((bundle / "reduction.json").read_text()).get("triage")


def refuse_foreign(target: Path) -> None:
    """An existing folder that akg-reduce did not write is never replaced."""
    if target.exists() and not (target / MARKER).exists():
        raise InputError(f"{target} exists and is not an akg-reduce bundle; not overwriting it (choose another -o)")


def _publish(staging: Path, target: Path) -> None:
    """Replace `target` by `staging` with renames only, so a reader never sees half a bundle."""
    if target.exists():
        refuse_foreign(target)
        old = target.with_name(f".{target.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
        staging.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        staging.rename(target)


def write_bundle(b: BundleInput, out_dir: Path) -> Path:
    """Write OUT/<bundle name>/ and OUT/<bundle name>.tar.gz (the case's name, `-cuda` appended for target
    cuda); returns the bundle folder."""
    out_dir.mkdir(parents=True, exist_ok=True)
    redact = Redactor(b.toolchain, b.original.env)
    staging = Path(tempfile.mkdtemp(prefix=f".{b.reduced.bundle_name}.", dir=out_dir))
    try:
        for name, text in _files(b, redact).items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        if b.ir_dir is not None and b.ir_dir.exists():
            _copy_redacted(b.ir_dir, staging / "ir", redact.text)
        (staging / MARKER).write_text("written by akg-reduce\n")
        os.chmod(staging, 0o755)
        target = out_dir / b.reduced.bundle_name
        _publish(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _archive(target)
    return target


def _copy_redacted(src: Path, dst: Path, redact: Callable[[str], str]) -> None:
    for path in sorted(src.rglob("*")):
        if path.is_file():
            out = dst / path.relative_to(src)
            out.parent.mkdir(parents=True, exist_ok=True)
            try:
                out.write_text(redact(path.read_text(encoding="utf-8")), encoding="utf-8")
            except UnicodeDecodeError:
                shutil.copyfile(path, out)


def _archive(folder: Path) -> Path:
    final = folder.with_name(folder.name + ".tar.gz")
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        tar.add(folder, arcname=folder.name, filter=lambda ti: None if ti.name.endswith(MARKER) else ti)
    write_atomic(final, data.getvalue())
    return final
