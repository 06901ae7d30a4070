"""One unit of nightly work in its own process (here or on a Dask worker): the compiler identities of
the corpus's toolchains, or one case: recheck it with one compile and/or reduce it. `run_isolated` runs
a spec in a child process (`python -m reducer.nightly.job spec.json result.json`), so a reducer crash,
a hang past the case's time budget or a kill costs that case only."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from reducer.compile.akg import compile_case, compiler_identity
from reducer.compile.identity import SIGNATURE_FORMAT, Kind, incomplete, matches, stored_expectation, why_unplaced
from reducer.compile.sandbox import dying_with_this_process, temp_dir
from reducer.compile.signature import signature_of
from reducer.core.case import Case
from reducer.core.errors import (
    CheckFailed,
    CompilesFine,
    EnvironmentBroken,
    FailsDifferently,
    Flaky,
    InputError,
    NeedsCodegen,
    NotChecked,
    Unplaced,
)
from reducer.inputs.load import load_input, original_files
from reducer.kernels.kinds import outputs_of, size_of
from reducer.search.oracle import Counters
from reducer.session import Events, Settings, reduce_case
from reducer.toolchain.launch import find_toolchain

NEW, REPRODUCES, FIXED, FLAKY = "new", "reproduces", "fixed", "flaky"
CHANGED, BROKEN, PASSES, ERROR = "no-longer-same-bug", "broken input", "passes", "error"
# Tonight's compile stopped before the stage that decides the stored bug (a worker without nvcc rechecking an
# invalid-cuda bug): neither fixed nor failing, rechecked the next night like an error.
INCOMPLETE = "incomplete"
FAILING = {NEW, REPRODUCES, FLAKY, CHANGED}  # statuses whose case fails tonight
UNDECIDED = (ERROR, INCOMPLETE)  # statuses that say nothing of the kernel: the next night compares with the one before
REDUCE, RECHECK = "reduce", "recheck"


def identity_hash(python: str | None, compiler: str | None) -> str:
    """Hash of the compiler identity of a toolchain, or why there is none. The signature format is part of
    it: a night after a change of what a signature holds rechecks every case once, so the bugs stored under
    the old format are regrouped under the new one."""
    try:
        identity = {**compiler_identity(find_toolchain(python, compiler)), "signature_format": str(SIGNATURE_FORMAT)}
    except InputError as exc:
        return f"unavailable: {exc}"
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def _reduce(case: Case, path: Path, out: Path, settings: Settings, spent: list[Counters]) -> dict[str, Any]:
    bundle, _ = reduce_case(case, original_files(path), out, settings, Events(on_oracle=spent.append))
    reduction = json.loads((bundle / "reduction.json").read_text())
    signature = {**reduction["signature"], "verdict": (reduction.get("triage") or {}).get("verdict")}
    return {"signature": signature, "reduced_size": reduction["reduced"], "bundle": str(bundle)}


def run_case(spec: dict[str, Any]) -> dict[str, Any]:
    """Recheck and/or reduce the case of `spec`; the result's status says what it is tonight."""
    path = Path(spec["path"])
    expected = stored_expectation(spec["previous"]) if spec.get("previous") else None
    was_failing = spec.get("previous_status") in FAILING
    try:
        case = load_input(path)
    except InputError as exc:
        return {"status": BROKEN, "error": str(exc), "compiles": 0}
    result: dict[str, Any] = {"original_size": size_of(case).to_dict(), "compiles": 0}
    if spec["action"] == RECHECK:
        sig = signature_of(compile_case(case, outputs_of(case)), case.time_limit)
        result["compiles"] = 1
        if not sig.kind.is_verdict:  # the machine or the check cannot tell: neither fixed nor failing
            return {**result, "status": ERROR, "error": f"{sig.message} ({sig.raw})", "signature": spec.get("previous")}
        if (unplaced := why_unplaced(sig)) is not None:  # any crash or hang would pass for it: it decides nothing
            return {**result, "status": ERROR, "error": unplaced, "signature": spec.get("previous")}
        if expected and incomplete(sig, expected.kind):
            return {
                **result,
                **_incomplete(f"{sig.message} ({sig.raw})", expected.kind),
                "signature": spec.get("previous"),
            }
        if not sig.failed:
            return {**result, "status": FIXED if was_failing else PASSES, "signature": spec.get("previous")}
        if expected and was_failing and not matches(sig, expected):
            return {**result, "status": CHANGED, "signature": _stored(sig.to_dict(), case)}
    if expected and was_failing:
        case = case.with_(expect=expected)
    cache = Path(spec["cache"]) if spec.get("cache") else None
    settings = Settings(jobs=spec.get("jobs", 1), cache=cache, diagnose=spec.get("diagnose", True))
    status = REPRODUCES if expected and was_failing else NEW
    spent: list[Counters] = []  # the reduction's compile counters, also when it stops early
    try:
        reduced = _reduce(case, path, Path(spec["out"]), settings, spent)
        result.update(reduced, signature=_stored(reduced["signature"], case), status=status)
    except NeedsCodegen as exc:  # every compile of the original stopped at the code generator
        if expected is not None and Kind(expected.kind).needs_codegen:
            result.update(_incomplete(str(exc), expected.kind), signature=spec.get("previous"))
        else:
            result.update(status=FIXED if was_failing else PASSES, error=str(exc), signature=spec.get("previous"))
    except CompilesFine as exc:
        result.update(status=FIXED if was_failing else PASSES, error=str(exc), signature=spec.get("previous"))
    except FailsDifferently as exc:
        result.update(status=CHANGED, error=str(exc))
    except Flaky as exc:
        result.update(status=FLAKY, error=str(exc), signature=spec.get("previous"))
    except (CheckFailed, EnvironmentBroken, NotChecked) as exc:
        result.update(status=ERROR, error=str(exc), signature=spec.get("previous"))
    except InputError as exc:
        result.update(status=BROKEN, error=str(exc))
    except Unplaced as exc:
        result.update(status=ERROR, error=str(exc))
    result["compiles"] += sum(c.compiles for c in spent)
    return result


def _incomplete(said: str, kind: str) -> dict[str, str]:
    """The result of a compile that stopped before the stage deciding a bug of `kind`."""
    return {"status": INCOMPLETE, "error": f"incomplete: the compile stopped before what decides a {kind} bug: {said}"}


def _stored(signature: dict[str, Any], case: Case) -> dict[str, Any]:
    """A signature of tonight as the state keeps it: with its target (the same failure on cpu and cuda is
    two bugs) and the signature format it was made under."""
    return {**signature, "target": case.target, "format": SIGNATURE_FORMAT}


def run_spec(spec: dict[str, Any]) -> dict[str, Any]:
    if spec["kind"] == "identity":
        return {"identities": [identity_hash(python, compiler) for python, compiler in spec["toolchains"]]}
    return run_case(spec)


def run_isolated(spec: dict[str, Any]) -> dict[str, Any]:
    """`spec` run in a child process; a child that fails, dies or outlives `spec['case_timeout']` gives an
    error result with the end of its stderr."""
    start = time.monotonic()
    with temp_dir("job") as tmp:
        spec_path, result_path = tmp / "spec.json", tmp / "result.json"
        spec_path.write_text(json.dumps(spec))
        command = [sys.executable, "-m", "reducer.nightly.job", str(spec_path), str(result_path)]
        with open(tmp / "stderr", "w+") as stderr:
            proc = subprocess.Popen(
                command,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                start_new_session=True,
                preexec_fn=dying_with_this_process(),
            )
            try:
                proc.wait(spec.get("case_timeout"))
                problem = f"the job exited with code {proc.returncode}" if proc.returncode else ""
            except subprocess.TimeoutExpired:
                problem = f"the case took longer than its budget of {spec['case_timeout']:g} s"
            finally:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)  # the job's compile workers too
                proc.wait()
            stderr.seek(0)
            tail = stderr.read()[-1500:].strip()
        if not problem and result_path.exists():
            result = json.loads(result_path.read_text())
        else:
            result = {"status": ERROR, "error": f"{problem or 'no result'}: {tail}", "compiles": 0}
    result.setdefault("seconds", round(time.monotonic() - start, 2))
    return result


def main() -> None:
    spec_path, result_path = map(Path, sys.argv[1:3])
    result = run_spec(json.loads(spec_path.read_text()))
    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, default=str))
    tmp.replace(result_path)


if __name__ == "__main__":
    main()
