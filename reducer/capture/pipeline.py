"""From the failing kernels of a user's run to bundles: write each as a crash.yaml, check that it fails on
its own the way the run showed, merge kernels that hit one bug, reduce one kernel per bug exactly as
`reduce` does, and write OUT/capture.json listing what was found and what became of it.

With `check_results`, the kernels are those the run built, and "fails" means computes a wrong result (the
wrong-result check, `expect: {kind: mismatch}`): kernels whose wrong results have one identity (the kind of
wrong, the ops; compile/identity.py) are one bug, and the graph-kernel flags that make the run itself pass are
tried before it is reduced. A reduced kernel's bug is its minimal case's, as the night has it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reducer.bundle.write import Origin, RunWorkaround, bundle_triage
from reducer.capture.found import FoundKernel, write_case
from reducer.capture.run_workarounds import Rerun, try_flags
from reducer.compile.identity import Kind, Signature
from reducer.core.case import Case, Expectation
from reducer.core.errors import CompilesFine, InputError, NotChecked, NotFailingError
from reducer.core.files import write_atomic
from reducer.inputs.failure_log import LogFindings, clean
from reducer.inputs.load import load_input, original_files
from reducer.kernels.kinds import size_of
from reducer.session import Events, Settings, original_signature, reduce_case

CASES_DIR = "cases"
WORKAROUND_LOGS = "run-workarounds"
WRONG_RESULT = Expectation("mismatch")
REPORT = "capture.json"
COMPARED = 60  # characters of a failure message looked for in the run's output


@dataclass(frozen=True)
class RunFacts:
    """The run the kernels came from, as a person and as capture.json say it."""

    run: str  # "`python train.py` (exit status 1)", "the log run.log"
    details: dict[str, Any]  # command, cwd, exit status, ... or the log's path
    final_error: str
    python: str | None = None  # each crash.yaml's `python:`: the run's interpreter (interpreter.py)


EventsFor = Callable[[Case], contextlib.AbstractContextManager[Events]]


@contextlib.contextmanager
def no_events(case: Case) -> Iterator[Events]:
    yield Events()


@dataclass(frozen=True)
class CaptureOptions:
    """How to treat the kernels found: the reductions' settings, whether to reduce at all, the live
    progress of each reduction and a line for each step of the capture."""

    settings: Settings
    reduce: bool = True
    events_for: EventsFor = no_events
    say: Callable[[str], None] = lambda line: None
    check_results: bool = False  # the kernels were built fine: check what they compute
    rerun: Rerun | None = None  # the user's command again, to verify a workaround on the run itself


def _seen_in_run(sig: Signature, findings: LogFindings, log: str) -> bool:
    """Whether the run's output agrees with this failure: it shows the message AKG printed, or a crash for
    a signal, or it shows no AKG error at all to compare with (a log with the compile error line alone)."""
    if sig.kind is Kind.SIGNAL:
        return bool(findings.crashed) or not findings.akg_errors
    if sig.kind is Kind.TIMEOUT or not findings.akg_errors:
        return True
    texts = [t.strip()[:COMPARED] for t in (sig.raw, sig.message) if t.strip()]
    return any(t in log for t in texts)


@dataclass
class _Checked:
    kernel: FoundKernel
    crash_yaml: Path
    case: Case
    signature: Signature

    @property
    def bug(self) -> str:
        return self.signature.bug_id(self.case.target)


def _header(kernel: FoundKernel, facts: RunFacts) -> str:
    return f"Captured by akg-reduce from {facts.run}.\nThe kernel: {kernel.where}."


NOT_REPRODUCED, NOT_FAILING, RIGHT, NOT_CHECKED = "not_reproduced", "not_failing", "computes_right", "not_checked"


def _check_result(
    kernel: FoundKernel, env: dict[str, str], out: Path, facts: RunFacts
) -> _Checked | tuple[str, dict[str, Any]]:
    """A kernel the run built, written as a wrong-result case and checked once: the checked case, or the
    report list it goes to (RIGHT, NOT_CHECKED when the check cannot run it, NOT_REPRODUCED) and why."""
    folder = out / CASES_DIR / kernel.name
    crash = write_case(kernel, env, folder, _header(kernel, facts), WRONG_RESULT, facts.python)
    entry: dict[str, Any] = {"name": kernel.name, "found_in": kernel.where, "crash_yaml": str(crash)}
    try:
        case = load_input(crash)
        sig = original_signature(case, runs=1).signature
    except InputError as exc:
        return NOT_CHECKED, {**entry, "why": str(exc)}
    except CompilesFine as exc:
        return RIGHT, {**entry, "why": str(exc)}
    except NotChecked as exc:
        return NOT_CHECKED, {**entry, "why": str(exc)}
    except NotFailingError as exc:
        return NOT_REPRODUCED, {**entry, "why": str(exc)}
    return _Checked(kernel, crash, case, sig)


def _check(
    kernel: FoundKernel, env: dict[str, str], out: Path, facts: RunFacts, findings: LogFindings, log: str
) -> _Checked | tuple[str, dict[str, Any]]:
    """The kernel written as a crash.yaml and compiled once on its own: the checked case, or the report
    list it goes to (NOT_REPRODUCED, or NOT_FAILING for a kernel the run never built) and why."""
    folder = out / CASES_DIR / kernel.name
    crash = write_case(kernel, env, folder, _header(kernel, facts), python=facts.python)
    entry: dict[str, Any] = {"name": kernel.name, "found_in": kernel.where, "crash_yaml": str(crash)}
    try:
        case = load_input(crash)
        sig = original_signature(case, runs=1).signature
    except InputError as exc:
        return NOT_REPRODUCED, {**entry, "why": f"akg-reduce cannot read it: {exc}"}
    except CompilesFine:
        if not kernel.in_log:
            return NOT_FAILING, {**entry, "why": "compiles fine on its own (the run stopped before building it)"}
        why = "it compiles fine on its own: the failure needs state of the run (other kernels, data, a device)"
        return NOT_REPRODUCED, {**entry, "why": why}
    except NotFailingError as exc:
        return NOT_REPRODUCED, {**entry, "why": str(exc)}
    if kernel.in_log and not _seen_in_run(sig, findings, log):
        shown = "; ".join(findings.akg_errors[:2]) or facts.final_error or "no AKG error"
        why = f"on its own it fails with [{sig.one_line()}], which the run did not show ({shown})"
        return NOT_REPRODUCED, {**entry, "why": why}
    crash = write_case(kernel, env, folder, _header(kernel, facts), sig.expectation(), facts.python)
    return _Checked(kernel, crash, load_input(crash), sig)


def process(
    kernels: list[FoundKernel],
    findings: LogFindings,
    log: str,
    env: dict[str, str],
    facts: RunFacts,
    out: Path,
    options: CaptureOptions,
) -> dict[str, Any]:
    """Check every kernel alone, merge those of one bug, reduce one per bug (unless not `options.reduce`)
    into OUT/<name>/; returns what OUT/capture.json says, written again after every kernel (so a capture
    interrupted during a reduction still lists what it found)."""
    log = clean(log)
    checked: list[_Checked] = []
    unchecked: dict[str, list[dict[str, Any]]] = {NOT_REPRODUCED: [], NOT_FAILING: []}
    if options.check_results:
        unchecked |= {RIGHT: [], NOT_CHECKED: []}
    for kernel in kernels:
        if options.check_results:
            options.say(f"checking what {kernel.name} computes ({kernel.where})")
            outcome = _check_result(kernel, env, out, facts)
        else:
            options.say(f"checking {kernel.name} alone ({kernel.where})")
            outcome = _check(kernel, env, out, facts, findings, log)
        if isinstance(outcome, _Checked):
            checked.append(outcome)
        else:
            unchecked[outcome[0]].append(outcome[1])
    report: dict[str, Any] = {
        **facts.details,
        "final_error": facts.final_error,
        "akg_errors": findings.akg_errors[:10],
        "kernels": [],
        **unchecked,
        "cut_off": [{"name": c.name, "why": c.reason} for c in findings.cut],
    }
    write_atomic(out / REPORT, json.dumps(report, indent=2))
    first_of_bug: dict[str, _Checked] = {}
    for item in sorted(checked, key=lambda c: size_of(c.case)):
        first_of_bug.setdefault(item.bug, item)
    tried = _run_workarounds([c for c in checked if c.case.mismatch is not None], out, options)
    for item in checked:
        first = first_of_bug[item.bug]
        entry: dict[str, Any] = {
            "name": item.kernel.name,
            "found_in": item.kernel.where,
            "crash_yaml": str(item.crash_yaml),
            "signature": item.signature.one_line(),
            "bug": item.bug,
        }
        if first is not item:
            entry |= {"status": "duplicate", "duplicate_of": first.kernel.name}
        elif not options.reduce:
            entry |= {"status": "captured"}
        else:
            options.say(f"reducing {item.kernel.name}: {item.signature.one_line()}")
            entry |= _reduce(item, facts, out, options, tried if item.case.mismatch is not None else [])
        report["kernels"].append(entry)
        write_atomic(out / REPORT, json.dumps(report, indent=2))
    return report


def _run_workarounds(wrong: list[_Checked], out: Path, options: CaptureOptions) -> list[RunWorkaround]:
    """The graph-kernel flags tried on the run itself to keep every wrong kernel out of it at once (one flag
    set: the run passes only when none is left); none when nothing is reduced or the run cannot be rerun."""
    if not wrong or not options.reduce or options.rerun is None:
        return []
    names = ", ".join(item.kernel.name for item in wrong)
    options.say(f"trying graph-kernel flags on the run itself, to keep {names} out of it")
    tried = try_flags([item.kernel.info for item in wrong], options.rerun, out / WORKAROUND_LOGS)
    for workaround in tried:
        options.say(f"{workaround.setting}: {workaround.outcome}")
    return tried


def _reduce(
    item: _Checked, facts: RunFacts, out: Path, options: CaptureOptions, tried: list[RunWorkaround]
) -> dict[str, Any]:
    origin = Origin(facts.run, item.kernel.where, facts.final_error, tuple(tried))
    files = original_files(item.crash_yaml)
    try:
        with options.events_for(item.case) as events:
            bundle, stats = reduce_case(item.case, files, out, options.settings, events, origin)
    except (InputError, NotFailingError) as exc:
        return {"status": "not reduced", "why": str(exc)}
    verdict = (bundle_triage(bundle) or {}).get("label", "")
    reduced = {
        "status": "reduced",
        "bundle": str(bundle),
        "compiles": stats["compiles"],
        "verdict": verdict,
        "bug": stats["bug"],
    }
    return reduced | ({"run_workarounds": [w.to_dict() for w in tried]} if tried else {})
