"""The two ways a user's failing run reaches the reducer: `capture` runs their command under the sandbox's
limits and reads what it printed and wrote; `from_log` reads a log they already have. Both hand the failing
kernels to pipeline.process."""

from __future__ import annotations

import enum
import shlex
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from reducer.capture.found import FoundKernel, built, compile_env, flag_attrs, gather, shown_path
from reducer.capture.interpreter import OURS, RunPython, TreeWatch, of_run, ours
from reducer.capture.pipeline import NOT_CHECKED, NOT_REPRODUCED, RIGHT, CaptureOptions, RunFacts, process
from reducer.capture.run_workarounds import rerun_of
from reducer.compile.sandbox import Outcome
from reducer.compile.user_run import run_command
from reducer.core.errors import InputError
from reducer.core.words import counted
from reducer.inputs.failure_log import LogFindings, read_log
from reducer.inputs.kernel_meta import meta_dirs, written_kernels

RUN_LOG = "run.log"
RUN_KERNELS = "run-kernels"  # MindSpore's compile cache for a run whose results are checked: all built afresh
CACHE_ENV = "MS_COMPILER_CACHE_PATH"
MTIME_SLACK = 2.0  # seconds: file systems with coarse timestamps


class NothingFailed(Exception):
    """The run (or the log) shows no failing AKG compile; the message says what it shows instead."""


class ResultsCheck(enum.Enum):
    """When `capture` checks what the kernels a run built compute: never, when the run fails, always."""

    OFF = "off"
    FAILED = "failed"
    ALWAYS = "always"


@dataclass(frozen=True)
class Limits:
    """How long and how much memory the user's command may take."""

    timeout: float
    memory_mb: float  # MiB (2**20 bytes), as the sandbox counts a tree's RSS and crash.yaml's memory


def _how_it_ended(outcome: Outcome, limits: Limits) -> tuple[str, dict[str, object]]:
    if outcome.stalled:
        return "was ended early, stalled", {"killed": "stalled", "why": outcome.stalled}
    if outcome.timed_out:
        return f"was killed at --run-timeout {limits.timeout:g} s", {"killed": "timeout"}
    if outcome.out_of_memory:
        return f"was killed above --memory {limits.memory_mb:g} MiB", {"killed": "memory"}
    if outcome.signal is not None:
        return f"was killed by signal {outcome.signal}", {"signal": outcome.signal}
    return f"ended with exit status {outcome.returncode}", {"exit_status": outcome.returncode}


def capture(
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    out: Path,
    limits: Limits,
    options: CaptureOptions,
    results: ResultsCheck = ResultsCheck.OFF,
    python: RunPython | None = None,
) -> dict[str, Any]:
    """Run `command` in `cwd`, keep its output in OUT/run.log, and process every AKG compile that failed,
    rebuilt with `python` (None: the run's own, interpreter.py);
    when none failed and `results` says so, check what every kernel the run built computes (MindSpore's
    compile cache then goes to OUT/run-kernels, fresh, so that the run builds every kernel it uses).
    NothingFailed when nothing did; the findings of a run killed at its limits are kept."""
    out.mkdir(parents=True, exist_ok=True)
    if results is not ResultsCheck.OFF:
        shutil.rmtree(out / RUN_KERNELS, ignore_errors=True)
        env = {**env, CACHE_ENV: str((out / RUN_KERNELS).resolve())}
    log_path = out / RUN_LOG
    started = time.time() - MTIME_SLACK
    shown = shlex.join(command)
    options.say(f"running `{shown}` in {cwd} (output also in {log_path})")

    def unfinished() -> str:
        unbuilt = [k.path for k in written_kernels(meta_dirs(cwd, env, []), started) if not k.compiled]
        return shown_path(unbuilt[0], cwd) if unbuilt else ""

    with TreeWatch() as watch:
        outcome = run_command(command, cwd, env, limits.timeout, limits.memory_mb, log_path, unfinished=unfinished)
    ended, status = _how_it_ended(outcome, limits)
    if outcome.stalled:
        options.say(f"ended the command early: {outcome.stalled}")
    text = log_path.read_text(encoding="utf-8", errors="replace")
    findings = read_log(text)
    cache_paths = [str(k.attrs.get("compile_cache", "")) for k in findings.kernels]
    written = written_kernels(meta_dirs(cwd, env, cache_paths), started)
    kernels = gather(findings, written, RUN_LOG, cwd)
    options.say(f"the command {ended} after {outcome.seconds:.1f} s; {_found(kernels, findings)}")
    run_python, said = of_run(python, watch.found, command, env, cwd)
    options.say(said)
    details = {"command": command, "cwd": str(cwd), **status, "seconds": round(outcome.seconds, 1)}
    facts = RunFacts(
        f"`{shown}` in {cwd} ({ended})",
        details | {"log": str(log_path), "python": run_python.to_dict()},
        findings.final_error,
        run_python.field,
    )
    if kernels or findings.cut:
        return process(kernels, findings, text, compile_env(env), facts, out, options)
    failed = outcome.returncode != 0
    last = f"; its last error line: {findings.final_error}" if findings.final_error else ""
    if results is ResultsCheck.FAILED and not failed:
        raise NothingFailed(
            f"nothing wrong in AKG: `{shown}` {ended}, so what its kernels compute was not checked "
            "(--check-always checks them anyway)"
        )
    if results is ResultsCheck.OFF:
        hint = " (to check what the kernels it built compute: --check-results)" if failed else ""
        raise NothingFailed(f"nothing failed in AKG: `{shown}` {ended}{last}{hint}")
    checked = built(written, cwd, flag_attrs(env))
    if not checked:
        raise NothingFailed(f"nothing to check: `{shown}` {ended} and built no AKG kernel{last}")
    options.say(f"checking the results of the {counted(len(checked), 'kernel')} it built")
    rerun = rerun_of(command, cwd, env, limits.timeout, limits.memory_mb) if failed else None
    report = process(
        checked, findings, text, compile_env(env), facts, out, replace(options, check_results=True, rerun=rerun)
    )
    if not report["kernels"]:
        raise NothingFailed(f"nothing wrong in AKG: {_checked_results(report)} (`{shown}` {ended}{last})")
    return report


def _checked_results(report: dict[str, Any]) -> str:
    """What the wrong-result checks of a run's kernels found, none of them wrong."""
    right, unchecked, odd = (report.get(k, []) for k in (RIGHT, NOT_CHECKED, NOT_REPRODUCED))
    parts = [f"every kernel checked computes what its reference says ({', '.join(k['name'] for k in right)})"]
    parts = parts if right else []
    parts += [f"{k['name']} not checked: {k['why']}" for k in unchecked]
    parts += [f"{k['name']}: {k['why']}" for k in odd]
    return "; ".join(parts)


def _found(kernels: list[FoundKernel], findings: LogFindings) -> str:
    reported = sum(k.in_log for k in kernels)
    unbuilt = len(kernels) - reported
    parts = [f"{reported} failing kernel(s) in its output"]
    if unbuilt:
        parts.append(f"{unbuilt} written and never built")
    if findings.cut:
        parts.append(f"{len(findings.cut)} cut off")
    return ", ".join(parts)


def _read_log(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, expected a log file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None


def findings_of_log(path: Path) -> tuple[str, LogFindings]:
    """The text of a saved log and the AKG failures it reports; NothingFailed when it reports none."""
    text = _read_log(path)
    findings = read_log(text)
    if not findings.kernels and not findings.cut:
        raise NothingFailed(f"{path}: no failing AKG compile in this log (no 'Compile error, args: {{...}}' message)")
    return text, findings


def from_log(path: Path, out: Path, options: CaptureOptions, python: RunPython | None = None) -> dict[str, Any]:
    """Process every AKG compile a saved log reports as failed, rebuilt with `python` (None: akg-reduce's own;
    a log does not say which ran the model). The log gives no environment: none is kept."""
    text, findings = findings_of_log(path)
    kernels = gather(findings, [], path.name, None)
    options.say(f"{path}: {_found(kernels, findings)}")
    run_python = python or ours()
    other = " (a log does not say which Python ran the model; --python names it)" if run_python.how == OURS else ""
    options.say(f"rebuilding its kernels with {run_python.said()}{other}")
    details = {"log": str(path), "python": run_python.to_dict()}
    facts = RunFacts(f"the log {path.name}", details, findings.final_error, run_python.field)
    return process(kernels, findings, text, {}, facts, out, options)
