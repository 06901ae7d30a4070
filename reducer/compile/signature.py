"""A compile's outcome read into its identity (compile/identity.py decides what is the same bug): the check
that ended it and its backtrace, the signal it died of and where (crash_stack), the pass it hangs in
(hang_stack), the wrong result the check found, what nvcc said of the CUDA AKG generated, or nothing. A
wrong-result check's output is read through its record (wire.Record: how far it got, whose code raised), so
that a check whose reference or own code fails, or is stopped while no AKG code runs, is the check's failure
(harness), never AKG's."""

from __future__ import annotations

import json
import re
import signal as signals

from reducer.compile.crash_stack import AKG_LIBRARY, KEEP_FRAMES, bare, function, is_generic
from reducer.compile.hang_stack import hang_place
from reducer.compile.identity import IMPRECISE, NO_FAILURE, WRITES_OUTSIDE, Kind, Signature, mask
from reducer.compile.sandbox import Outcome
from reducer.core.targets import TARGETS
from reducer.in_mindspore.mismatch_run import DETAIL as MISMATCH_DETAIL
from reducer.in_mindspore.mismatch_run import VERDICT as MISMATCH_VERDICT
from reducer.in_mindspore.wire import AKG, REFERENCE, RUNS_IN, SETUP, Record
from reducer.toolchain.nvcc import STOPPED

# The check's kinds of wrong (mismatch_run.wrong_kind), as a wrong result's message says them; the identity keeps
# only whether it writes outside its outputs (identity.WRITES_OUTSIDE), the rest being one kernel at other sizes.
WRONG_KINDS = {
    "nan": "NaN where the reference has a number",
    "outside": WRITES_OUTSIDE,
    "precision": f"{IMPRECISE} (each off by at most 1 %)",
    "values": "wrong values",
}

# [ERROR] AKG:2026-12-02-15:22:22.025.224 [tiling_utils.cc:193] [tiling] Check failed: ...
# AKG's GPU pipeline ran to its end and handed the kernel to nvcc, which this machine cannot run.
_CUDA_CODEGEN = ("arch(sm_xy) is not passed", "cannot find nvcc", "No such file or directory: 'nvcc'")
# ... or which ran and failed (AKG's tvm/contrib/nvcc.py raises this with nvcc's output).
_NVCC_FAILED = re.compile(r"^(RuntimeError: )?Compilation error:?")
# nvcc's diagnostics: `/tmp/x/my_kernel.cu(282): error: ...`, `nvcc fatal   : Unsupported gpu architecture`.
_NVCC_DIAGNOSTIC = re.compile(r"^(?P<file>\S+?)(?:\((?P<line>\d+)\))?: (?:catastrophic )?error: (?P<msg>.*)$")
_NVCC_FATAL = re.compile(r"^(?:nvcc|ptxas) fatal\s*: (?P<msg>.*)$")
# ptxas, which nvcc runs on the PTX of AKG's CUDA: `ptxas error   : Entry function '...' uses too much shared data`.
_PTXAS_ERROR = re.compile(r"^ptxas error\s*: (?P<msg>.*)$")
_GENERATED = "my_kernel.cu"  # the CUDA source AKG writes and hands to nvcc
# An error in AKG's CUDA that a header of this CUDA release causes: AKG's float16 code defines what CUDA 13's
# cuda_fp16.hpp defines (`function "htanh" has already been defined (previous definition at line 2975 of
# .../cuda_fp16.hpp)`); with the CUDA of AKG's build it compiles.
_CLASH_WITH_HEADER = re.compile(r"previous (?:definition|declaration) at line \d+ of \S+/include/")
# Where a target's pipeline stops on a machine without its code generator (core/targets.py), and what it means.
_CODEGEN_STOPS = [(re.compile(t.codegen_stop), t.codegen_stop_means) for t in TARGETS.values() if t.codegen_stop]
CUDA_MESSAGE = "reaches CUDA code generation, which needs nvcc and a GPU"
NVCC_NOT_RUN = "reaches nvcc, which this compile did not run"
UNCHECKED_MESSAGE = "the wrong-result check compared too few elements"
NVCC_REFUSES = "this machine's nvcc refuses to compile AKG's CUDA"
CUDA_HEADERS_CLASH = "this machine's CUDA headers clash with the CUDA AKG generates (its GPU build is for CUDA 11)"
# A C++ exception as Python gets it: the file and line of the check that raised it, then its message.
_RAISED_AT = re.compile(r'^\s*File "(?P<file>[^"]+\.(?:cc|h|cpp))", line (?P<line>\d+)$')
HANG_MESSAGE = "compile did not finish within its time limit"
_AKG_ERROR = re.compile(r"^\[ERROR\] AKG:\S+ \[(?P<loc>[\w./-]+:\d+)\] \[(?P<comp>[^\]]*)\] (?P<msg>.*)$")
_BT = re.compile(r"\[bt\] \((?P<index>\d+)\) (?P<lib>[^(]*)\((?P<sym>.*)\+0x[0-9a-f]+\) \[0x[0-9a-f]+\]$")
_PY_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_PY_EXC = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit)): ?(?P<msg>.*)$")
_NOISE_FRAMES = ("LogMessageFatal", "LogMessage", "Backtrace", "__libc", "_start")
_GENERIC_EXC = {"Compile error", "Traceback (most recent call last):"}
_MISSING_MODULE = ("ModuleNotFoundError", "ImportError")  # how a Python exception says a module is not here
_WHAT = re.compile(r"^\s*what\(\):\s*(?P<what>.+)$")  # the C++ exception that ended in std::terminate


def _backtrace(lines: list[str], start: int) -> tuple[str, ...]:
    """The functions of AKG's library in the `[bt]` block after line `start` (an error's), innermost first, each
    named as a crash's frame is (crash_stack.function: with its template arguments and an overload's parameter
    types, without its return type); logging and generic frames dropped."""
    numbered: list[tuple[int, str]] = []
    for line in lines[start + 1 :]:
        m = _BT.search(line)
        if m is None:
            if numbered:
                break
            continue
        sym = function(m["sym"]) if m["sym"] and m["lib"].endswith(AKG_LIBRARY) else ""
        if sym and not any(n in sym for n in _NOISE_FRAMES) and not is_generic(bare(sym)):
            numbered.append((int(m["index"]), sym))
    frames: list[str] = []
    for _, sym in sorted(numbered):  # MindSpore's log prints some backtraces outermost first
        if sym not in frames:
            frames.append(sym)
    return tuple(frames[:KEEP_FRAMES])  # where it died (identity.Signature.died_in) and context


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


def _raised_error(akg: list[tuple[int, re.Match[str]]], lines: list[str]) -> tuple[int, re.Match[str]] | None:
    """The AKG error whose check raised the exception the compile died of (the last `File "x.cc", line N`
    Python shows), with its line number; None when no raised check names a logged one."""
    raised = [m for m in map(_RAISED_AT.match, lines) if m]
    if raised:
        place = f"{raised[-1]['file'].rsplit('/', 1)[-1]}:{raised[-1]['line']}"
        for number, error in reversed(akg):
            if error.group("loc") == place:
                return number, error
    return None


def hang_signature(stack: tuple[str, ...], seconds: float, read_by: str = "") -> Signature:
    """A compile killed after `seconds` with `stack` (hang_stack.sample): where it hangs, not how long it
    was given, is the bug (candidates get shorter limits than the original)."""
    frames = tuple(f for f in stack if "::" in f)
    place = hang_place(frames)
    # The frames from the hang's pass outward: the ones below it depend on the instant of the sample.
    outward = frames[frames.index(place) :] if place else ()
    raw = f"compile did not finish within {seconds:.3g} s"
    return Signature(Kind.TIMEOUT, HANG_MESSAGE, place, outward[:4], "", raw, read_by if place else "")


def _wrong_result(lines: list[str], verdict: str) -> Signature:
    """The check's verdict of a wrong result: the kind of wrong as its message, each op's role and dtypes
    (kinds' `ops`, echoed by the check's detail line) as its place."""
    detail = next((ln.split(" ", 1)[1] for ln in lines if ln.startswith(MISMATCH_DETAIL + " ")), "{}")
    try:
        facts = json.loads(detail)
    except ValueError:
        facts = {}
    message = f"wrong result: {WRONG_KINDS.get(facts.get('wrong_kind', ''), WRONG_KINDS['values'])}"
    said = verdict.split("mismatch:", 1)[-1].strip()  # the worst output's error, as the check printed it
    return Signature(Kind.MISMATCH, message, facts.get("ops", ""), (), "akg-vs-reference", f"{message} ({said})")


def _nvcc_failure(lines: list[str], loc: str, comp: str) -> Signature:
    """nvcc ran on AKG's CUDA and failed: an error in that source is AKG's (invalid CUDA), unless a header
    of this CUDA release causes it; nvcc refusing to run (an architecture it dropped) or an error in a
    header is this machine's CUDA, not AKG."""
    for line in lines:
        text = line.strip()
        fatal = _NVCC_FATAL.match(text)
        if fatal:
            return Signature(Kind.ENVIRONMENT, NVCC_REFUSES, loc, (), comp, text)
        if ptxas := _PTXAS_ERROR.match(text):  # the kernel AKG generated is beyond the GPU: AKG's bug
            said = re.sub(r"'[^']*'", "'KERNEL'", ptxas["msg"])  # the entry's name is the kernel's, not the bug's
            return Signature(Kind.INVALID_CUDA, mask(said), _GENERATED, (), "ptxas", text)
        diagnostic = _NVCC_DIAGNOSTIC.match(text)
        if diagnostic is None:
            continue
        said = f"{diagnostic['file'].rsplit('/', 1)[-1]}: error: {diagnostic['msg']}"
        if diagnostic["file"].endswith(_GENERATED) and not _CLASH_WITH_HEADER.search(text):
            return Signature(Kind.INVALID_CUDA, mask(diagnostic["msg"]), _GENERATED, (), "nvcc", said)
        return Signature(Kind.ENVIRONMENT, CUDA_HEADERS_CLASH, loc, (), comp, said)
    return Signature(Kind.ENVIRONMENT, "nvcc fails without a diagnostic", loc, (), comp, lines[-1] if lines else "")


def _past_akg(py: tuple[str, str, str, str], output: str, lines: list[str]) -> Signature | None:
    """A compile that ended past AKG's passes, or could not run at all, by the Python exception it ended with:
    at CUDA code generation without nvcc or a GPU, where the nvcc shim stopped it, in nvcc (AKG's CUDA rejected,
    or this machine's CUDA or gcc unfit for it), or missing a module it imports (the environment's, named);
    None for any other exception."""
    raw, loc, comp, _ = py
    if any(marker in raw for marker in _CUDA_CODEGEN):
        return Signature(Kind.CODEGEN, CUDA_MESSAGE, loc, (), comp, raw)
    if STOPPED in output:
        return Signature(Kind.CODEGEN, NVCC_NOT_RUN, loc, (), comp, STOPPED)
    if _NVCC_FAILED.match(raw) and loc.startswith("nvcc.py"):
        return _nvcc_failure(lines, loc, comp)
    if loc.startswith("nvcc.py") and "gcc" in raw:  # AKG's nvcc.py checks the host compiler nvcc needs
        return Signature(Kind.ENVIRONMENT, "this machine's gcc cannot serve nvcc", loc, (), comp, raw)
    if raw.startswith(_MISSING_MODULE):
        return Signature(Kind.ENVIRONMENT, "a module the compile imports is missing here", loc, (), comp, raw)
    return None


def _check_failed(record: Record, outcome: Outcome, timeout: float) -> Signature | None:
    """The failure of a wrong-result check itself, by its record: its reference or our code raised, or it was
    stopped (its limit, its memory cap, a signal) while no AKG code ran; an environment the check cannot run
    in. None when AKG's code raised or was running, or the check reached its verdict."""
    who = record.raised_by
    runs = RUNS_IN.get(record.stage, "harness")  # a stage this version does not know: a check of another's
    if record.done or who == "akg" or (not who and runs == AKG):
        return None
    if who == "environment":
        return Signature(Kind.ENVIRONMENT, "the wrong-result check cannot run here", "", (), who, record.trace)
    doer = f"the {record.against} reference" if record.stage == REFERENCE else f"the check's {record.stage} code"
    if who:
        return Signature(Kind.HARNESS, f"{doer} raised", "", (), who, record.trace, record.read_by)
    if outcome.timed_out:
        raw = f"the check did not finish within {min(timeout, outcome.seconds):.3g} s, in {doer}"
        return Signature(Kind.HARNESS, f"{doer} ran past its limit", "", (), runs, raw)
    if outcome.out_of_memory or outcome.over_quota:
        return Signature(Kind.HARNESS, f"{doer} exceeded the memory cap", "", (), runs)
    if outcome.signal is not None:
        raw = f"the check died of {_signal_name(outcome.signal)} in {doer}"
        return Signature(Kind.HARNESS, f"{doer} crashed", "", (), runs, raw)
    if outcome.returncode != 0:
        raw = f"the check ended with exit code {outcome.returncode} in {doer}"
        return Signature(Kind.HARNESS, f"{doer} exited", "", (), runs, raw)
    return None


def _signal_name(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _before_any_record(lines: list[str]) -> Record:
    """The record of a check that ended before it wrote its first (it writes one as it sets up): it died
    setting up, in our code or importing what it needs, where no AKG code had run; a module or library
    missing there is the environment's."""
    py = _python_error(lines)
    if py is None:
        return Record(SETUP)
    missing = py[0].startswith(_MISSING_MODULE)
    return Record(SETUP, raised_by="environment" if missing else "harness", trace=py[0], read_by="python")


def _check_verdict(lines: list[str]) -> Signature | None:
    """The verdict line of a wrong-result check: wrong, not checked, or right with what it compared; None when
    the output has none."""
    verdict = next((ln.strip() for ln in lines if ln.startswith(MISMATCH_VERDICT)), "")
    if verdict.startswith(f"{MISMATCH_VERDICT} mismatch"):
        return _wrong_result(lines, verdict)
    if verdict.startswith(f"{MISMATCH_VERDICT} unchecked"):
        said = verdict.split("unchecked:", 1)[-1].strip()
        return Signature(Kind.UNCHECKED, UNCHECKED_MESSAGE, "", (), "akg-vs-reference", said)
    if verdict.startswith(f"{MISMATCH_VERDICT} match"):  # no failure; what it compared, said
        return Signature(Kind.NONE, "", "", (), raw=verdict.split("match:", 1)[-1].strip())
    return NO_FAILURE if verdict else None


def signature_of(outcome: Outcome, timeout: float) -> Signature:
    """Classify one compile, or one wrong-result check by its records."""
    lines = outcome.output.splitlines()
    record = Record.last_in(lines)
    if record is None and outcome.check:
        record = _before_any_record(lines)
    if record is not None and (failed := _check_failed(record, outcome, timeout)) is not None:
        return failed
    if (checked := _check_verdict(lines)) is not None:  # it decides, whatever stopped the process after it
        return checked
    if record is not None and record.done:
        said = "the check compared, then was stopped before it printed its verdict"
        return Signature(Kind.HARNESS, "the check's compare code was stopped", "", (), "harness", said)
    if outcome.timed_out:
        return hang_signature(outcome.stack, min(timeout, outcome.seconds), outcome.stack_by)
    if outcome.out_of_memory:
        return Signature(Kind.MEMORY, "compile exceeded its memory cap", "", ())
    if outcome.over_quota:
        return Signature(Kind.MEMORY, "compile exceeded its temp dir quota", "", ())
    if outcome.returncode == 0:  # what AKG logged and recovered from is no failure
        return NO_FAILURE
    if outcome.signal is not None:
        name = _signal_name(outcome.signal)
        # Where it died is in its native frames (crash_stack); an error AKG logged before it is not the place.
        what = next((m["what"].strip() for m in map(_WHAT.match, lines) if m), "")
        raw = f"{name} ({what})" if what else name
        return Signature(Kind.SIGNAL, name, "", outcome.stack, raw=raw, read_by=outcome.stack_by)
    akg = [(n, m) for n, m in enumerate(_AKG_ERROR.match(line.strip()) for line in lines) if m]
    raised = _raised_error(akg, lines)
    py = _python_error(lines)
    # An error AKG logged and recovered from is not what ended a compile that died past AKG's passes.
    if raised is None and py is not None and (past := _past_akg(py, outcome.output, lines)) is not None:
        return past
    if akg:
        number, key = raised or akg[0]  # with no raised check naming one, the first AKG logged
        raw = key.group("msg").strip()
        if means := next((m for stop, m in _CODEGEN_STOPS if stop.search(key.group(0))), ""):
            return Signature(Kind.CODEGEN, means, key.group("loc"), (), key.group("comp"), raw)
        return Signature(Kind.ERROR, mask(raw), key.group("loc"), _backtrace(lines, number), key.group("comp"), raw)
    if py:
        raw, loc, comp, function = py
        frames = _backtrace(lines, -1) or ((function,) if function else ())
        return Signature(Kind.ERROR, mask(raw), loc, frames, comp, raw)
    last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
    return Signature(Kind.ERROR, mask(last) or f"exit code {outcome.returncode}", "", _backtrace(lines, -1), raw=last)
