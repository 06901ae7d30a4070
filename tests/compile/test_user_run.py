"""The user's own command under capture: it ends when the command ends, even when something it started
left its tree (setsid, a daemon) and keeps its output open."""

from __future__ import annotations

import sys
from pathlib import Path

import psutil
import pytest

from reducer.compile.user_run import run_command

pytestmark = pytest.mark.timeout(60)  # before the fix: waited for the daemon, 600 s

# Starts a grandchild in a session of its own that inherits stdout and outlives the script by far.
DETACHED = """
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
print("started the daemon", flush=True)
"""


def test_a_detached_descendant_holding_the_output_does_not_keep_capture_waiting(tmp_path: Path) -> None:
    outcome = run_command([sys.executable, "-c", DETACHED], tmp_path, {}, 60, 1024, tmp_path / "run.log", None)
    assert outcome.returncode == 0 and "started the daemon" in outcome.output
    left = [p for p in psutil.process_iter(["cmdline"]) if "time.sleep(600)" in " ".join(p.info["cmdline"] or [])]
    assert not left, "the daemon outlived the capture"
