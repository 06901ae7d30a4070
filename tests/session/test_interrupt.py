"""Interrupting a reduction: SIGTERM/SIGINT exit 130 with the best case on disk, still failing the same
way; kill -9 loses at most the compiles in flight; a rerun resumes and ends where a fresh run ends; the
compiles of a killed reducer die with it (cold and warm) and its temp dirs are swept by the next run.

Every wait here is for an event (a checkpoint written, a compile running, a process gone), bounded; the
fake compiles sleep, so a reduction cannot finish before the test has interrupted it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest
from conftest import describe, sandboxed_processes, wait_until, write_case

from reducer.compile.sandbox import PREFIX, sweep_orphans
from reducer.core.case import Expectation, TensorSpec
from reducer.inputs.crash_yaml import load_case
from reducer.search.oracle import Oracle


def start(crash: Path, out: Path, sleep: float, *extra: str) -> subprocess.Popen[str]:
    """The reducer on `crash`, every compile taking `sleep` s more (set in the reducer's environment, so no
    reduction of the case's env can remove it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "reducer", str(crash), "-o", str(out), "-j", "2", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "FAKE_COMPILER_SLEEP": str(sleep)},
    )


def reduce_again(crash: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reducer", str(crash), "-o", str(out), "-j", "2"],
        capture_output=True,
        text=True,
        timeout=600,
    )


def running(proc: subprocess.Popen[str]) -> bool:
    assert proc.poll() is None, proc.communicate()  # it ended before the test could interrupt it
    return True


def checkpoint_path(out: Path, crash: Path) -> Path:
    return out / ".akg-reduce-state" / f"{load_case(crash).name}.json"


def wait_for_checkpoint(path: Path, proc: subprocess.Popen[str], other_than: str | None = None) -> str:
    """The checkpoint's text once it exists (and differs from `other_than`: a further improvement)."""

    def written() -> bool:
        return running(proc) and path.exists() and path.read_text() not in ("", other_than)

    wait_until(written, 120, "a checkpoint written")
    return path.read_text()


def compiles_in_flight(reducer: int) -> list[psutil.Process]:
    """Compile processes of `reducer` (not its idle warm workers): those working in a sandbox dir."""
    found = []
    for proc in sandboxed_processes(reducer):
        try:
            if Path(proc.cwd()).name.startswith(f"{PREFIX}{reducer}-"):
                found.append(proc)
        except psutil.NoSuchProcess:
            continue
    return found


def still_fails(crash: Path, checkpoint: str) -> bool:
    best = json.loads(checkpoint)["best"]
    case = load_case(crash).with_(
        source=best["source"],
        attrs=best["attrs"],
        env=best["env"],
        inputs=tuple(TensorSpec(tuple(t["shape"]), t["dtype"]) for t in best["inputs"]),
    )
    expect = Expectation("error", "Check failed: gemm_m.size() <= FormatM.size()", "fake_tiling.cc:193")
    with Oracle(expect) as oracle:
        return oracle.interesting(case)


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "moment"), [(signal.SIGTERM, "saved"), (signal.SIGINT, "compiling"),
                                             (signal.SIGTERM, "improved")])  # fmt: skip
def test_signal_saves_best_and_rerun_resumes(tmp_path: Path, sig: signal.Signals, moment: str) -> None:
    crash = write_case(tmp_path / "case")
    out = tmp_path / "out"
    proc = start(crash, out, 0.5)
    path = checkpoint_path(out, crash)
    first = wait_for_checkpoint(path, proc)  # at different points of the search
    if moment == "compiling":
        wait_until(lambda: running(proc) and compiles_in_flight(proc.pid), 60, "a compile in flight")
    if moment == "improved":
        wait_for_checkpoint(path, proc, other_than=first)
    assert running(proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "rerun to resume" in err and "Traceback" not in err
    assert still_fails(crash, path.read_text())
    assert not sandboxed_processes(proc.pid)  # no compile left running
    resumed = reduce_again(crash, out)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming from the checkpoint" in resumed.stderr
    fresh = reduce_again(crash, tmp_path / "fresh")
    assert fresh.returncode == 0
    assert (out / "case" / "kernel.py").read_text() == (tmp_path / "fresh" / "case" / "kernel.py").read_text()


@pytest.mark.slow
def test_kill_9_loses_at_most_the_compiles_in_flight(tmp_path: Path) -> None:
    crash = write_case(tmp_path / "case")
    out = tmp_path / "out"
    proc = start(crash, out, 0.3)
    path = checkpoint_path(out, crash)
    first = wait_for_checkpoint(path, proc)
    wait_for_checkpoint(path, proc, other_than=first)  # a second improvement saved
    wait_until(lambda: running(proc) and compiles_in_flight(proc.pid), 60, "a compile in flight")
    proc.kill()
    proc.communicate()
    wait_until(lambda: not sandboxed_processes(proc.pid), 10, "the killed reducer's compiles end")
    after = path.read_text()
    original_tokens = len(crash.with_name("kernel.py").read_text().split())
    best = json.loads(after)["best"]  # whole: written by rename
    assert len(best["source"].split()) < original_tokens  # what was found before the kill is kept
    assert still_fails(crash, after)
    rerun = reduce_again(crash, out)
    assert rerun.returncode == 0 and "resuming from the checkpoint" in rerun.stderr
    assert reduce_again(crash, tmp_path / "fresh").returncode == 0
    assert (out / "case" / "kernel.py").read_text() == (tmp_path / "fresh" / "case" / "kernel.py").read_text()


@pytest.mark.parametrize("mode", ["cold", "warm"])
def test_compiles_die_with_a_killed_reducer_and_its_temp_dirs_are_swept(tmp_path: Path, mode: str) -> None:
    crash = write_case(tmp_path / "case")
    proc = start(crash, tmp_path / "out", 30, *(["--cold"] if mode == "cold" else []))
    wait_until(lambda: running(proc) and compiles_in_flight(proc.pid), 60, "a compile in flight")
    proc.kill()
    proc.communicate()
    try:
        wait_until(lambda: not sandboxed_processes(proc.pid), 10, "the killed reducer's compiles end")
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {describe(sandboxed_processes(proc.pid))}") from None
    tmp = Path(tempfile.gettempdir())
    assert list(tmp.glob(f"{PREFIX}{proc.pid}-*"))  # left behind by kill -9 ...
    sweep_orphans()
    assert not list(tmp.glob(f"{PREFIX}*"))  # ... and swept by the next run


def test_a_compile_dies_with_its_killed_warm_worker(tmp_path: Path) -> None:
    """The warm worker's child has its own session; killing the worker (not the reducer) must end it too."""
    crash = write_case(tmp_path / "case")
    proc = start(crash, tmp_path / "out", 30)
    wait_until(lambda: running(proc) and compiles_in_flight(proc.pid), 60, "a compile in flight")
    children = compiles_in_flight(proc.pid)
    workers = {c.ppid() for c in children} - {proc.pid}
    assert workers, "the compiles run in warm workers"
    proc.send_signal(signal.SIGSTOP)  # the reducer cannot kill them meanwhile: only their PDEATHSIG can
    for worker in workers:
        psutil.Process(worker).kill()
    _, alive = psutil.wait_procs(children, timeout=10)
    proc.send_signal(signal.SIGCONT)
    proc.kill()
    proc.communicate()
    assert not alive, describe(alive)
    wait_until(lambda: not sandboxed_processes(proc.pid), 10, "the killed reducer's compiles end")
    sweep_orphans()  # as the next run does
