"""The user's own command under capture: it ends when the command ends, even when something it started
left its tree (setsid, a daemon) and keeps its output open; it is ended early only when it waits on a compile
pool nobody works in, never when it is only quiet."""

from __future__ import annotations

import sys
from pathlib import Path

import psutil
import pytest

from reducer.compile import user_run
from reducer.compile.sandbox import Outcome
from reducer.compile.user_run import run_command

pytestmark = pytest.mark.timeout(60)  # before the fix: waited for the daemon, 600 s

# Starts a grandchild in a session of its own that inherits stdout and outlives the script by far.
# The daemon's command is this test's own: another test's sleeping child (test_capture.py) must not count.
DAEMON = "import time; time.sleep(600)  # the detached daemon of test_user_run"
DETACHED = f"""
import subprocess, sys
subprocess.Popen([sys.executable, "-c", {DAEMON!r}], start_new_session=True)
print("started the daemon", flush=True)
"""


@pytest.mark.slow
def test_a_detached_descendant_holding_the_output_does_not_keep_capture_waiting(tmp_path: Path) -> None:
    outcome = run_command([sys.executable, "-c", DETACHED], tmp_path, {}, 60, 1024, tmp_path / "run.log", None)
    assert outcome.returncode == 0 and "started the daemon" in outcome.output
    left = [p for p in psutil.process_iter(["cmdline"]) if DAEMON in (p.info["cmdline"] or [])]
    assert not left, "the daemon outlived the capture"


# Stands for MindSpore's kernel build server (matched by its file name, as the real one is): it opens a pool
# of one compile worker that waits forever, as the pool does once AKG crashed the worker with its kernel.
BUILD_SERVER = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
time.sleep(600)
"""


def _quiet_run(tmp_path: Path, body: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Outcome]:
    """`body` run by a script that first starts the stand-in build server; a stall is 2 s idle here."""
    monkeypatch.setattr(user_run, "STALL_SECONDS", 2.0)
    (tmp_path / "kernel_build_server_akg.py").write_text(BUILD_SERVER)
    script = tmp_path / "train.py"
    script.write_text(body)
    outcome = run_command(
        [sys.executable, str(script)], tmp_path, {}, 50, 1024, tmp_path / "run.log", None, lambda: "Fused_7.info"
    )
    return outcome.output, outcome


def test_a_run_waiting_on_a_compile_pool_nobody_works_in_is_ended_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, 'kernel_build_server_akg.py'])\n"
        "print('compiling', flush=True)\n"
        "time.sleep(600)\n"
    )
    output, outcome = _quiet_run(tmp_path, body, monkeypatch)
    assert "compile workers with Fused_7.info never built" in outcome.stalled
    assert outcome.returncode is None and not outcome.timed_out and "compiling" in output


@pytest.mark.parametrize(
    "work",
    [
        "time.sleep(6)",  # a data loader, slow storage: quiet, no CPU
        "end = time.time() + 6\nwhile time.time() < end:\n"
        "    subprocess.run([sys.executable, '-c', 'sum(range(3_000_000))'])",  # busy only in short-lived children
    ],
    ids=["sleeping", "short-lived-workers"],
)
@pytest.mark.slow
def test_a_quiet_healthy_run_is_never_ended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, work: str) -> None:
    """A kernel whose build failed stays unbuilt (its .info without its .so), and the run caught the error and
    went on quietly: no compile pool is open, so it is not waiting for one, and it ends on its own."""
    failed = "print('build failed, using plain ops', flush=True)"
    body = f"import subprocess, sys, time\n{failed}\n{work}\nprint('epoch 1 done')\n"
    output, outcome = _quiet_run(tmp_path, body, monkeypatch)
    assert outcome.returncode == 0 and outcome.stalled == "" and "epoch 1 done" in output


@pytest.mark.slow
def test_a_run_busy_in_short_lived_processes_beside_an_open_pool_is_not_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CPU of processes that ended between two looks counts: the run is working, not waiting."""
    body = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, 'kernel_build_server_akg.py'])\n"
        "end = time.time() + 6\n"
        "while time.time() < end:\n"
        "    subprocess.run([sys.executable, '-c', 'sum(range(3_000_000))'])\n"
        "print('done', flush=True)\n"
    )
    output, outcome = _quiet_run(tmp_path, body, monkeypatch)
    assert outcome.returncode == 0 and outcome.stalled == "" and "done" in output
