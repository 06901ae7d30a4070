"""Outcome -> Signature (what makes a failure "the same bug") and matching against an Expectation."""

from __future__ import annotations

import hashlib
import re
import signal as signals
from dataclasses import dataclass, field
from typing import Any

from reducer.compile.crash_stack import gdb, is_generic
from reducer.compile.hang_stack import hang_place
from reducer.compile.nvcc import STOPPED
from reducer.compile.sandbox import Outcome
from reducer.core.case import Expectation

MISMATCH_VERDICT = "AKG-REDUCE-CHECK"  # the verdict line of reducer/compile/mismatch_run.py

# [ERROR] AKG:2026-12-02-15:22:22.025.224 [tiling_utils.cc:193] [tiling] Check failed: ...
# AKG's GPU pipeline ran to its end and handed the kernel to nvcc, which this machine cannot run.
_CUDA_CODEGEN = ("arch(sm_xy) is not passed", "cannot find nvcc", "No such file or directory: 'nvcc'")
# ... or which ran and failed (AKG's tvm/contrib/nvcc.py raises this with nvcc's output): a CUDA of another
# release than the AKG build's (sm_70 dropped, a header defining what AKG's code defines), not AKG's passes.
_NVCC_FAILED = re.compile(r"^(RuntimeError: )?Compilation error:?")
_NVCC_MESSAGE = re.compile(r"\b(error|fatal)\b")
_NVCC_SOURCE = re.compile(r"\S*/my_kernel\.cu")
CODEGEN = "codegen"  # the Signature kind of it: not a failure of AKG, not a pass either
# AKG's Ascend pipeline ran to its end and handed the CCE source to CANN's compiler (ccec), which is not here:
# AKG then fails to read the object ccec did not write (akg::codegen::BinFile2String <- CompileCce). A
# standalone repro.py of a target looks for the same line to tell "reached code generation".
CODEGEN_STOPS = {"aicore": r"\[build_cce\.cc:\d+\].*inputfile\.is_open\(\)"}
_CCE_STOP = re.compile(CODEGEN_STOPS["aicore"])
CCE_MESSAGE = "reaches CCE code generation, which needs CANN's compiler"
# A C++ exception as Python gets it: the file and line of the check that raised it, then its message.
_RAISED_AT = re.compile(r'^\s*File "(?P<file>[^"]+\.(?:cc|h|cpp))", line (?P<line>\d+)$')
HANG_MESSAGE = "compile did not finish within its time limit"
_AKG_ERROR = re.compile(r"^\[ERROR\] AKG:\S+ \[(?P<loc>[\w./-]+:\d+)\] \[(?P<comp>[^\]]*)\] (?P<msg>.*)$")
_BT = re.compile(r"\[bt\] \((?P<index>\d+)\) [^(]*\((?P<sym>[^+)]*)")
_PY_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_PY_EXC = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit)): ?(?P<msg>.*)$")
_FATAL_PY = re.compile(r"^(?:Fatal Python error|Segmentation fault|terminate called)")
_NOISE_FRAMES = ("LogMessageFatal", "LogMessage", "Backtrace", "__libc", "_start")
_GENERIC_EXC = {"Compile error", "Traceback (most recent call last):"}

_ADDR = re.compile(r"0x[0-9a-fA-F]+")
_PATH = re.compile(r"(?:/[\w.+-]+){2,}")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
# Names AKG generates for variables (cc7, i0): their number changes with the kernel's shape.
_GENERATED_NAME = re.compile(r"\b(?P<prefix>[a-z]{1,2})\d+\b")
_WHAT = re.compile(r"^\s*what\(\):\s*(?P<what>.+)$")  # the C++ exception that ended in std::terminate
_LINE = re.compile(r":\d+$")
# Bump when what a signature holds changes (masking, frames): stored signatures of another format are not
# reused, and a night re-checks the cases it recorded under another format.
SIGNATURE_FORMAT = 4


def mask(text: str) -> str:
    """Hide what changes between runs and shrinks with the case: addresses, paths, numbers, the numbers of
    generated variable names."""
    text = _ADDR.sub("ADDR", text)
    text = _PATH.sub("PATH", text)
    text = _NUMBER.sub("N", text)
    text = _GENERATED_NAME.sub(r"\g<prefix>N", text)
    return re.sub(r"\s+", " ", text).strip(" :")


@dataclass(frozen=True)
class Signature:
    kind: str  # error | signal | timeout | memory | none
    message: str  # masked key message
    location: str  # file:line of the failing check, or of the deepest Python frame
    frames: tuple[str, ...]  # top AKG frames, innermost first
    component: str = ""
    raw: str = field(default="", compare=False)  # the key message as printed: addresses differ between runs

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "message": self.message,
            "location": self.location,
            "frames": list(self.frames),
            "component": self.component,
            "raw": self.raw,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Signature:
        return cls(
            str(data["kind"]),
            str(data["message"]),
            str(data["location"]),
            tuple(data.get("frames", ())),
            str(data.get("component", "")),
            str(data.get("raw", "")),
        )

    @property
    def place(self) -> str:
        """The location without its line: a check's source file (a line moves between releases), a hang's pass."""
        return _file(self.location)

    def bug_key(self) -> str:
        """A short stable id of the bug this signature stands for: kind, message, the file of the failing
        check (not its line), the innermost frame and the component; the same across MindSpore releases
        whose AKG only moved the check to another line."""
        blob = "\0".join([self.kind, self.message, self.place, *self.frames[:1], self.component])
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    @staticmethod
    def bug_of(data: dict[str, Any]) -> str:
        """The bug id of a stored signature (to_dict, with the `target` and the `case` content id its caller
        adds): bug_key, with the target appended when it is not cpu, since a failure of AKG's GPU pipeline is
        not the CPU one; a wrong result's with the case's id too, since nothing in a wrong result tells two
        apart (two kernels that compute wrongly are two bugs unless they are the same kernel)."""
        target = data.get("target", "cpu")
        key = Signature.from_dict(data).bug_key()
        if data.get("kind") == "mismatch":
            key = f"{key}:{data.get('case', '')[:12]}"
        return key if target == "cpu" else f"{key}@{target}"

    def one_line(self) -> str:
        at = f" at {self.location}" if self.location else f" in {self.frames[0]}" if self.frames else ""
        return f"{self.kind}: {self.raw or self.message}{at}"

    def expectation(self) -> Expectation:
        """The exact expectation a reduction of this failure must keep (see matches)."""
        return Expectation(self.kind, self.message, self.location, self.frames[0] if self.frames else "", exact=True)


NO_FAILURE = Signature("none", "", "", ())


def _file(location: str) -> str:
    return _LINE.sub("", location)


def _frames(lines: list[str]) -> tuple[str, ...]:
    """The symbols of AKG's `[bt]` lines, innermost first, logging and generic frames dropped."""
    numbered: list[tuple[int, str]] = []
    for line in lines:
        m = _BT.search(line)
        if m:
            sym = m.group("sym").split("(")[0].strip()
            if sym and not any(n in sym for n in _NOISE_FRAMES) and not is_generic(sym):
                numbered.append((int(m.group("index")), sym))
        if line.startswith("Traceback") and numbered:
            break
    frames: list[str] = []
    for _, sym in sorted(numbered):  # MindSpore's log prints some backtraces outermost first
        if sym not in frames:
            frames.append(sym)
    return tuple(frames[:4])


def _python_error(lines: list[str]) -> tuple[str, str, str, str] | None:
    """The last meaningful Python exception: (raw message, location, component, function)."""
    location = function = ""
    found: tuple[str, str, str, str] | None = None
    for line in lines:
        frame = _PY_FRAME.match(line)
        if frame:
            location = f"{frame.group('file').rsplit('/', 1)[-1]}:{frame.group('line')}"
            function = frame.group("func")
            continue
        exc = _PY_EXC.match(line.strip())
        if exc and exc.group("msg").strip() not in _GENERIC_EXC:
            msg = exc.group("msg").strip()
            found = (f"{exc.group('type').rsplit('.', 1)[-1]}: {msg}", location, "python", function)
    return found


def _ending(akg: list[re.Match[str]], lines: list[str]) -> re.Match[str]:
    """The AKG error that ended the compile: the one whose check raised the exception the compile died of
    (the last `File "x.cc", line N` Python shows), not one AKG logged and recovered from (a UB allocation
    check on Ascend, after which it tiles again); the first logged when no raised check names one."""
    raised = [m for m in map(_RAISED_AT.match, lines) if m]
    if raised:
        place = f"{raised[-1]['file'].rsplit('/', 1)[-1]}:{raised[-1]['line']}"
        for error in reversed(akg):
            if error.group("loc") == place:
                return error
    return akg[0]


def hang_signature(stack: tuple[str, ...], seconds: float) -> Signature:
    """A compile killed after `seconds` with `stack` (hang_stack.sample): where it hangs, not how long it
    was given, is the bug (candidates get shorter limits than the original)."""
    frames = tuple(f for f in stack if "::" in f)
    place = hang_place(frames)
    # The frames from the hang's pass outward: the ones below it depend on the instant of the sample.
    outward = frames[frames.index(place) :] if place else ()
    raw = f"compile did not finish within {seconds:.3g} s"
    return Signature("timeout", HANG_MESSAGE, place, outward[:4], "", raw)


def signature_of(outcome: Outcome, timeout: float) -> Signature:
    """Classify one compile."""
    if outcome.timed_out:
        return hang_signature(outcome.stack, min(timeout, outcome.seconds))
    if outcome.out_of_memory:
        return Signature("memory", "compile exceeded its memory cap", "", ())
    if outcome.over_quota:
        return Signature("memory", "compile exceeded its temp dir quota", "", ())
    lines = outcome.output.splitlines()
    verdict = next((ln.strip() for ln in lines if ln.startswith(MISMATCH_VERDICT)), "")
    if verdict.startswith(f"{MISMATCH_VERDICT} mismatch"):
        return Signature("mismatch", "wrong result: max error above tolerance", "", (), "akg-vs-reference", verdict)
    if verdict:
        return NO_FAILURE
    frames = _frames(lines)
    akg = [m for m in (_AKG_ERROR.match(line.strip()) for line in lines) if m]
    if outcome.signal is not None:
        try:
            name = signals.Signals(outcome.signal).name
        except ValueError:
            name = f"signal {outcome.signal}"
        # Where it died is in its native frames (crash_stack); an error AKG logged before it is not the place.
        what = next((m["what"].strip() for m in map(_WHAT.match, lines) if m), "")
        return Signature("signal", name, "", outcome.stack, raw=f"{name} ({what})" if what else name)
    if outcome.returncode == 0 and not akg:
        return NO_FAILURE
    if akg:
        key = _ending(akg, lines)
        raw = key.group("msg").strip()
        if _CCE_STOP.search(key.group(0)):
            return Signature(CODEGEN, CCE_MESSAGE, key.group("loc"), (), key.group("comp"), raw)
        return Signature("error", mask(raw), key.group("loc"), frames, key.group("comp"), raw)
    py = _python_error(lines)
    if py:
        raw, loc, comp, function = py
        if any(marker in raw for marker in _CUDA_CODEGEN):
            return Signature(CODEGEN, "reaches CUDA code generation, which needs nvcc and a GPU", loc, (), comp, raw)
        if STOPPED in outcome.output:
            return Signature(CODEGEN, "reaches nvcc, which a search candidate does not run", loc, (), comp, STOPPED)
        if _NVCC_FAILED.match(raw) and loc.startswith("nvcc.py"):
            said = next((ln.strip() for ln in lines if _NVCC_MESSAGE.search(ln) and "Error:" not in ln), raw)
            said = _NVCC_SOURCE.sub("my_kernel.cu", said)  # nvcc's temp dir differs from compile to compile
            return Signature(CODEGEN, "reaches nvcc, which fails on the generated CUDA code", loc, (), comp, said)
        return Signature("error", mask(raw), loc, frames or ((function,) if function else ()), comp, raw)
    last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
    if outcome.returncode == 0:
        return NO_FAILURE
    return Signature("error", mask(last) or f"exit code {outcome.returncode}", "", frames, raw=last)


def _same_place(sig: Signature, where: str, frame: str, exact: bool) -> bool:
    """Is `sig` at the place an expectation names: `where` (a check's file:line, a hang's pass; for a user's
    expectation, part of a location or a frame) and `frame` (the innermost AKG frame, where a crash died)?
    The line alone never tells two bugs apart: the same check at another line of the same file, with the
    same innermost frame, is the same place (AKG of another MindSpore release)."""
    if exact:
        if where and sig.location == where:
            return True
        if not frame:
            return not where
        return sig.frames[:1] == (frame,) and (not where or _file(sig.location) == _file(where))
    if frame and not any(frame in f for f in sig.frames):
        return False
    if not where or any(where in p for p in (sig.location, *sig.frames) if p):
        return True
    return bool(frame) and _file(sig.location) == _file(where)


def matches(sig: Signature, expect: Expectation) -> bool:
    """Same bug: kind, message, and place (_same_place). A user-written expectation matches by substring
    (after masking); a learned one must be equal."""
    if sig.kind != expect.kind:
        return False
    if expect.exact:
        return sig.message == expect.message and _same_place(sig, expect.where, expect.frame, exact=True)
    if expect.message and mask(expect.message) not in sig.message:
        return False
    return _same_place(sig, expect.where, expect.frame, exact=False)


def why_unplaced(sig: Signature) -> str | None:
    """Why the place of a crash or hang is unknown, if it is: a crash by a signal is known by its native
    frames and a hang by the pass it hangs in; without them any crash or hang would pass for this one."""
    if sig.kind == "signal" and not sig.frames:
        how = "install gdb: apt-get install gdb" if gdb() is None else "no frame of it is in AKG's library"
        return (
            f"the original dies by {sig.message}, but where it died cannot be told ({how}); without that any "
            "crash would count as this bug, so it is not reduced"
        )
    if sig.kind == "timeout" and not sig.location:
        return (
            "the original hangs, but its stack could not be read (py-spy missing, or not allowed to ptrace: run "
            "as root, set kernel.yama.ptrace_scope to 0, or give the container SYS_PTRACE); without the pass it "
            "hangs in any hang would count as this bug, so it is not reduced"
        )
    return None


def message_regex(masked: str) -> str:
    """A regex that finds a masked message in raw compiler output."""
    pattern = re.escape(masked)
    pattern = pattern.replace("ADDR", r"0x[0-9a-fA-F]+").replace("PATH", r"\S+")
    pattern = re.sub(r"(?<![A-Za-z_])N(?![A-Za-z_])", r"-?\\d+(?:\\.\\d+)?", pattern)
    pattern = re.sub(r"\b(?P<prefix>[a-z]{1,2})N\b", r"\g<prefix>\\d+", pattern)
    return pattern.replace(r"\ ", r"\s+")
