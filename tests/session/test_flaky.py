"""A compiler that fails only half of the time is caught before the reduction starts; with --repeat the
reduction still ends on the same bug, and the bundle says the failure is flaky."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import write_case


def reduce_cli(crash: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reducer", str(crash), "-o", str(out), "-j", "2", *extra],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_flaky_original_is_detected_before_reducing(tmp_path: Path) -> None:
    """Half the fake's compiles pass, in a fixed sequence in which no three in a row agree."""
    crash = write_case(tmp_path / "flaky", env={"FAKE_COMPILER_FLAKY": "0.5"})
    run = reduce_cli(crash, tmp_path / "out")
    assert run.returncode == 3, run.stderr
    assert "flaky" in run.stderr and "--repeat" in run.stderr
    assert not (tmp_path / "out" / "flaky").exists()


def test_repeat_reduces_a_flaky_failure_to_the_same_bug(tmp_path: Path) -> None:
    crash = write_case(tmp_path / "flaky", env={"FAKE_COMPILER_FLAKY": "0.5"})
    run = reduce_cli(crash, tmp_path / "out", "--repeat", "10")
    assert run.returncode == 0, run.stderr
    reduction = json.loads((tmp_path / "out" / "flaky" / "reduction.json").read_text())
    assert reduction["signature"]["location"] == "fake_tiling.cc:193"
    assert reduction["repeat"] == 10 and reduction["reduced"]["tokens"] < reduction["original"]["tokens"]
    # the env var that made the compile flaky is not needed for the bug, so it is reduced away too
    assert json.loads((tmp_path / "out" / "flaky" / "env.json").read_text())["compile_env"] == {}
    assert "flaky" in (tmp_path / "out" / "flaky" / "ISSUE.md").read_text()
