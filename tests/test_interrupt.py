"""Interrupting a reduction: SIGTERM/SIGINT exit 130 with the best case on disk, still failing the same
way; kill -9 loses at most the compiles in flight; a rerun resumes and ends where a fresh run ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import processes_mentioning, write_case

from reducer.case import Expectation, TensorSpec, load_case
from reducer.oracle import Oracle


def start(crash: Path, out: Path, sleep: float) -> subprocess.Popen[str]:
    """The reducer on `crash`, every compile taking `sleep` s more (set in the reducer's environment, so no
    reduction of the case's env can remove it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "reducer", str(crash), "-o", str(out), "-j", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "FAKE_COMPILER_SLEEP": str(sleep)},
    )


def wait_for_checkpoint(out: Path, proc: subprocess.Popen[str], seconds: float = 60) -> Path:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = list((out / ".akg-reduce-state").glob("*.json")) if (out / ".akg-reduce-state").exists() else []
        if found:
            return found[0]
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("no checkpoint written")


def checkpoint_still_fails(crash: Path, checkpoint: Path) -> bool:
    original = load_case(crash)
    best = json.loads(checkpoint.read_text())["best"]
    case = original.with_(
        source=best["source"],
        attrs=best["attrs"],
        env=best["env"],
        inputs=tuple(TensorSpec(tuple(t["shape"]), t["dtype"]) for t in best["inputs"]),
    )
    expect = Expectation("error", "Check failed: gemm_m.size() <= FormatM.size()", "fake_tiling.cc:193")
    return Oracle(expect).interesting(case)


@pytest.mark.parametrize(("sig", "delay"), [(signal.SIGTERM, 0.0), (signal.SIGINT, 0.4), (signal.SIGTERM, 0.9)])
def test_signal_saves_best_and_rerun_resumes(tmp_path: Path, sig: signal.Signals, delay: float) -> None:
    crash = write_case(tmp_path / "case")
    out = tmp_path / "out"
    proc = start(crash, out, 0.5)
    checkpoint = wait_for_checkpoint(out, proc)
    time.sleep(delay)  # at different points of the search: mid-compile, mid-pass, between passes
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "rerun to resume" in err and "Traceback" not in err
    assert checkpoint_still_fails(crash, checkpoint)
    assert not processes_mentioning(str(tmp_path))  # no compile left running
    resumed = subprocess.run(
        [sys.executable, "-m", "reducer", str(crash), "-o", str(out), "-j", "2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming from the checkpoint" in resumed.stderr
    fresh = subprocess.run(
        [sys.executable, "-m", "reducer", str(crash), "-o", str(tmp_path / "fresh"), "-j", "2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert fresh.returncode == 0
    assert (out / "case" / "kernel.py").read_text() == (tmp_path / "fresh" / "case" / "kernel.py").read_text()


def test_kill_9_loses_at_most_the_compiles_in_flight(tmp_path: Path) -> None:
    crash = write_case(tmp_path / "case")
    out = tmp_path / "out"
    proc = start(crash, out, 0.3)
    checkpoint = wait_for_checkpoint(out, proc)
    time.sleep(1.0)
    before = json.loads(checkpoint.read_text())
    proc.kill()
    proc.communicate()
    time.sleep(1.0)  # compiles in flight are in their own sessions; they end by themselves
    after = json.loads(checkpoint.read_text())  # the file is whole: written by rename
    assert after["original"] == before["original"]
    assert checkpoint_still_fails(crash, checkpoint)
    rerun = subprocess.run(
        [sys.executable, "-m", "reducer", str(crash), "-o", str(out), "-j", "2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert rerun.returncode == 0 and "resuming from the checkpoint" in rerun.stderr


def test_compiles_die_with_a_killed_reducer_and_its_temp_dirs_are_swept(tmp_path: Path, monkeypatch) -> None:
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    crash = write_case(tmp_path / "case")
    out = tmp_path / "out"
    proc = start(crash, out, 5)
    deadline = time.monotonic() + 30
    while not list((tmp_path / "tmp").glob("akg-reduce-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.kill()
    proc.communicate()
    time.sleep(0.5)
    assert not processes_mentioning(str(tmp_path / "case"))  # no compile outlives the reducer
    assert list((tmp_path / "tmp").glob("akg-reduce-*"))  # left behind by kill -9 ...
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    from reducer.sandbox import sweep_orphans

    sweep_orphans()
    assert not list((tmp_path / "tmp").glob("akg-reduce-*"))  # ... and swept by the next run
