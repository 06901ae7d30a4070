"""Run general-purpose reducers on the same AKG crashes as akg-reduce and print one table (Markdown):
final tokens, input volume, compiles, wall time, and whether the result still fails the same way.

Peers: Shrink Ray, Picire and Lithium from PyPI, installed into a separate venv (Shrink Ray needs
Python >= 3.12; 26.7.3.1 is its newest release that does not build llama-cpp-python), and C-Vise from
Debian's package (apt-get, when run as root). Each peer reduces a single-file form of the case (a
`CASE = {...}` dict of input shapes/attrs/env, then the kernel) with bench/peer_check.py as the
interestingness test: our signature check on a cold compile. Each run gets the same wall-clock budget
and 2 parallel tests where the peer supports it; akg-reduce runs with -j 2 and no persistent cache.

Usage: python bench/peers.py [--budget SECONDS] [--peers shrinkray,picire,lithium,cvise] [--keep DIR] [case ...]
With --keep, every final kernel (ours and each peer's, single-file form) is written to DIR/<case>/<who>.py.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psutil
from peer_check import parse_single_file, single_file

from reducer.core.case import Case
from reducer.inputs.crash_yaml import load_case
from reducer.kernels.kinds import size_of
from reducer.session import Settings, adaptive_timeout, original_signature, reduce_case

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "corpus"
VENV = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "akg-reduce" / "peers-venv"
PYPI_PEERS = ["shrinkray==26.7.3.1", "picire", "setuptools<80", "lithium-reducer"]

# Lithium takes a Python module as its condition: this one runs the shared check on the testcase.
LITHIUM_CONDITION = """
import subprocess, sys
def interesting(cond_args, temp_prefix):
    return subprocess.run([{check!r}, cond_args[-1]]).returncode == 0
"""


def _python_312() -> str:
    """An interpreter >= 3.12 that really runs (a pyenv shim may exist for a version not selected)."""
    found = [shutil.which(name) for name in ("python3.13", "python3.12")]
    candidates = [*sorted(map(str, Path.home().glob(".pyenv/versions/3.1[2-9]*/bin/python3"))), *filter(None, found)]
    for python in candidates:
        probe = subprocess.run([python, "-c", "import sys; assert sys.version_info >= (3, 12)"], capture_output=True)
        if probe.returncode == 0:
            return python
    raise SystemExit("Shrink Ray needs Python >= 3.12 and none was found")


def install_peers() -> dict[str, str]:
    """Peer name -> why it is unavailable (empty when it is installed)."""
    problems: dict[str, str] = {}
    if not (VENV / "bin" / "shrinkray").exists():
        subprocess.run([_python_312(), "-m", "venv", str(VENV)], check=True)
        pip = subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", *PYPI_PEERS], capture_output=True, text=True)
        if pip.returncode:
            problems.update(dict.fromkeys(["shrinkray", "picire", "lithium"], pip.stderr[-300:]))
    if not shutil.which("cvise") and os.geteuid() == 0:
        subprocess.run(["apt-get", "install", "-y", "-q", "cvise"], capture_output=True)
    if not shutil.which("cvise"):
        problems["cvise"] = "cvise is not installed (apt-get install cvise)"
    return problems


def peer_commands(check: Path, work: Path, budget: float, timeout: str) -> dict[str, list[str]]:
    """The command that reduces work/case.py in place (or into work/out), per peer."""
    (work / "condition.py").write_text(LITHIUM_CONDITION.format(check=str(check)))
    return {
        "shrinkray": [str(VENV / "bin/shrinkray"), "--ui", "basic", "--parallelism", "2", "--input-type", "arg",
                      "--timeout", timeout, str(check), "case.py"],
        "picire": [str(VENV / "bin/picire"), "--input", "case.py", "--test", str(check), "--parallel", "-j", "2",
                   "--atom", "both", "-o", "out"],
        "lithium": [str(VENV / "bin/lithium"), "--max-run-time", str(int(budget)),
                    str(work / "condition.py"), "case.py"],
        "cvise": ["cvise", "--n", "2", "--not-c", "--timeout", timeout, str(check), "case.py"],
    }  # fmt: skip


def _result_file(work: Path, peer: str) -> Path:
    if peer == "picire":
        found = sorted((work / "out").rglob("case.py"), key=lambda p: p.stat().st_mtime)
        return found[-1] if found else work / "case.py"
    return work / "case.py"


def _final(check: Path, env: dict[str, str], result: Path, best: Path) -> tuple[Case | None, bool, str]:
    """The peer's result if it parses and still fails the same way, else the smallest interesting file
    its tests saw (a peer stopped at the budget may not have written one)."""
    for path, note in ((result, ""), (best, "result: the smallest interesting test it ran")):
        try:
            case = parse_single_file(path.read_text())
        except Exception:  # a peer may leave anything behind
            continue
        if subprocess.run([str(check), str(path)], env={**env, "PEER_LOG": ""}).returncode == 0:
            return case, True, note
    return None, False, "no result that fails the same way"


def _run_budgeted(command: list[str], cwd: Path, env: dict[str, str], budget: float) -> tuple[float, bool]:
    """Run a peer for at most `budget` seconds; whatever it started is gone afterwards, also the workers that
    outlive their leader's SIGTERM (Picire's parallel ones did, still alive 95 minutes later)."""
    start = time.monotonic()
    with open(cwd / "peer.log", "w") as log:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        capped = False
        try:
            proc.wait(budget)
        except subprocess.TimeoutExpired:
            capped = True
            descendants = []
            with contextlib.suppress(psutil.Error):
                descendants = psutil.Process(proc.pid).children(recursive=True)
            os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(30)
            for child in descendants:
                with contextlib.suppress(psutil.Error):
                    child.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return time.monotonic() - start, capped


def _row(name: str, who: str, case: Case | None, compiles: int, wall: float, same: bool, note: str = "") -> str:
    tokens = size_of(case).tokens if case else "-"
    volume = size_of(case).volume if case else "-"
    return f"| {name} | {who} | {tokens} | {volume} | {compiles} | {wall:.0f} | {'yes' if same else 'NO'} | {note} |"


def _keep(keep: Path | None, name: str, who: str, case: Case | None) -> None:
    if keep and case:
        (keep / name).mkdir(parents=True, exist_ok=True)
        (keep / name / f"{who}.py").write_text(single_file(case))


def run_case(
    name: str, peers: list[str], problems: dict[str, str], budget: float, emit: Callable[[str], None], keep: Path | None
) -> None:
    crash = CORPUS / name / "crash.yaml"
    original = load_case(crash)
    with tempfile.TemporaryDirectory(prefix="akg-peers-") as tmp:
        root = Path(tmp)
        start = time.monotonic()
        bundle, stats = reduce_case(
            original, {"crash.yaml": crash.read_text()}, root / "ours", Settings(jobs=2, diagnose=False)
        )
        ours = load_case(bundle / "crash.yaml")
        _keep(keep, name, "akg-reduce", ours)
        emit(_row(name, "akg-reduce -j 2", ours, stats["compiles"], time.monotonic() - start, True))
        reproduction = original_signature(original, runs=1)
        expect = root / "expect.json"
        expect.write_text(json.dumps(reproduction.signature.expectation().to_dict()))
        check = root / "check.sh"
        check.write_text(f'#!/bin/sh\nexec {sys.executable} {HERE / "peer_check.py"} "$@"\n')
        check.chmod(0o755)
        timeout = adaptive_timeout(original, reproduction) or original.time_limit
        for peer in peers:
            if problems.get(peer):
                emit(f"| {name} | {peer} | - | - | - | - | - | {problems[peer]} |")
                continue
            work = root / peer
            work.mkdir()
            (work / "case.py").write_text(single_file(original))
            log = work / "calls.log"
            env = {**os.environ, "PEER_EXPECT": str(expect), "PEER_LOG": str(log),
                   "PEER_TIMEOUT": str(math.ceil(timeout)),  # C-Vise takes whole seconds
                   "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}  # fmt: skip
            command = peer_commands(check, work, budget, env["PEER_TIMEOUT"])[peer]
            if subprocess.run([str(check), str(work / "case.py")], env={**env, "PEER_LOG": ""}).returncode:
                emit(f"| {name} | {peer} | - | - | - | - | - | its single-file form does not fail the same way |")
                continue
            wall, capped = _run_budgeted(command, work, env, budget)
            calls = log.read_text().split() if log.exists() else []
            final, same, note = _final(check, env, _result_file(work, peer), Path(f"{log}.best"))
            if capped:
                note = f"stopped at the {budget:.0f} s budget" + (f"; {note}" if note else "")
            if not calls:  # the peer gave up before testing anything: say why
                note = (work / "peer.log").read_text().strip().splitlines()[-1:] or ["no output"]
                note = note[0][:120]
            _keep(keep, name, peer, final)
            emit(_row(name, peer, final, calls.count("compile"), wall, same, note))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", default=["transpose_provide_call"])
    parser.add_argument("--budget", type=float, default=600, help="wall-clock seconds per peer run")
    parser.add_argument("--peers", default="shrinkray,picire,lithium,cvise")
    parser.add_argument("--keep", type=Path, help="write every final kernel to KEEP/<case>/<who>.py")
    args = parser.parse_args()
    problems = install_peers()
    print("| case | reducer | tokens | input volume | compiles | wall s | same bug | note |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.cases:
        original = load_case(CORPUS / name / "crash.yaml")
        print(_row(name, "(original)", original, 0, 0, True), flush=True)
        run_case(name, args.peers.split(","), problems, args.budget, lambda row: print(row, flush=True), args.keep)


if __name__ == "__main__":
    main()
