"""The user's own command (their MindSpore script), run where they ran it, under the sandbox's limits: a wall
clock, a memory cap on the whole process tree, core dumps off, and the tree killed at the end, on timeout or
on Ctrl-C. Its output goes to a log file and, as it comes, to the terminal.

A run is also ended early when it has stalled on a compile that died. MindSpore's kernel build server compiles
a batch of kernels in a pool of workers that lives only while the batch compiles; when AKG crashes a worker,
the pool waits forever for its result, and so does the run. So once the whole tree (counting processes that
ended in the meantime) has printed nothing and used no CPU for STALL_SECONDS while the build server holds
its workers and a kernel the run wrote was never built, nothing more will happen. A run that is only quiet
(a failed build it caught, then a data loader or slow storage) has no pool open and is left alone."""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from reducer.compile.sandbox import OWNER_ENV, PR_SET_PDEATHSIG, Outcome, hold, kill_marked, read_capped
from reducer.core.errors import InputError

Echo = Callable[[bytes], None]
Unfinished = Callable[[], str]  # a kernel the run wrote and never built ('' when there is none)
USER_RUN_ENV = "AKG_REDUCE_USER_RUN"  # set for the user's command and all it starts: the reducer's pid
DRAIN_SECONDS = 5.0  # after the tree is killed, how long its last output may take to arrive
STALL_SECONDS = 20.0  # idle this long with a kernel never built: the run waits forever
WATCH_SECONDS = 1.0
IDLE_CPU_SECONDS = 0.2  # CPU time the whole tree may use in a stall (MindSpore's threads wake now and then)
BUILD_SERVER = "kernel_build_server"  # MindSpore's mindspore/_extends/remote/kernel_build_server_*.py


def _to_stderr(chunk: bytes) -> None:
    sys.stderr.buffer.write(chunk)
    sys.stderr.buffer.flush()


def _child_setup(parent: int) -> None:
    # Unlike a compile, the user's program may write files of any size: only die with us, no core dumps.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class _Teed:
    """The running command; a thread copies its merged stdout and stderr to the log and to `echo`."""

    def __init__(
        self, command: list[str], cwd: Path, env: dict[str, str], log: Path, echo: Echo | None, unfinished: Unfinished
    ) -> None:
        parent = os.getpid()
        self.mark = str(parent)  # its USER_RUN_ENV: finds what left the tree still holding the output pipe
        try:
            self._proc = subprocess.Popen(
                command,
                cwd=cwd,
                env={**env, OWNER_ENV: str(parent), USER_RUN_ENV: self.mark},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=lambda: _child_setup(parent),
            )
        except FileNotFoundError:
            raise InputError(f"command not found: {command[0]}") from None
        except PermissionError:
            raise InputError(f"command not executable: {command[0]}") from None
        self.pid = self._proc.pid
        self.lives_on = False
        self.last_output = time.monotonic()
        self.stalled = ""
        self._copier = threading.Thread(target=self._copy, args=(log, echo), daemon=True)
        self._copier.start()
        threading.Thread(target=self._watch, args=(unfinished,), daemon=True).start()

    def _copy(self, log: Path, echo: Echo | None) -> None:
        assert self._proc.stdout is not None
        with log.open("wb") as sink, self._proc.stdout as source:
            while chunk := source.read1(1 << 16):
                sink.write(chunk)
                sink.flush()
                self.last_output = time.monotonic()
                if echo:
                    with contextlib.suppress(OSError):
                        echo(chunk)

    def _watch(self, unfinished: Unfinished) -> None:
        """End the run when it has stalled with a compile that never finished (see the module's doc)."""
        try:
            root = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return
        cpu: dict[int, float] = {}
        busy = time.monotonic()
        while self._proc.poll() is None:
            time.sleep(WATCH_SECONDS)
            now_cpu = _cpu_times(root)
            if sum(max(0.0, t - cpu.get(pid, t)) for pid, t in now_cpu.items()) > IDLE_CPU_SECONDS * WATCH_SECONDS:
                busy = time.monotonic()
            cpu = now_cpu
            idle = time.monotonic() - max(busy, self.last_output) > STALL_SECONDS
            if idle and _compile_pool_open(root) and (kernel := unfinished()):
                self.stalled = (
                    f"it printed nothing and used no CPU for {STALL_SECONDS:g} s while MindSpore's kernel build "
                    f"server held its compile workers with {kernel} never built: MindSpore waits forever for a "
                    "compile that died"
                )
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.pid, signal.SIGKILL)
                return

    def wait(self, seconds: float | None) -> int | None:
        try:
            return self._proc.wait(seconds)
        except subprocess.TimeoutExpired:
            return None

    def finish(self) -> None:
        """Wait for the last output once the tree is gone (it held the pipe open until then). A process
        that left the tree (setsid, a daemon) is found by its mark and killed, whether it still holds the
        pipe or not: the output it wrote until then is read, and nothing of the run outlives it."""
        self._copier.join(DRAIN_SECONDS)
        kill_marked(USER_RUN_ENV, self.mark)
        self._copier.join(DRAIN_SECONDS)


def _cpu_times(root: psutil.Process) -> dict[int, float]:
    """CPU seconds used so far by each process of the tree, with its children that ended (and were waited
    for): a run that works in short-lived processes is busy."""
    times = {}
    with contextlib.suppress(psutil.Error):
        for proc in [root, *root.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                used = proc.cpu_times()
                times[proc.pid] = used.user + used.system + used.children_user + used.children_system
    return times


def _compile_pool_open(root: psutil.Process) -> bool:
    """Does a kernel build server of MindSpore in the tree hold compile workers (a batch is compiling)?"""
    with contextlib.suppress(psutil.Error):
        for proc in root.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if any(BUILD_SERVER in part for part in proc.cmdline()) and proc.children():
                    return True
    return False


def run_command(
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    memory_mb: float,
    log: Path,
    echo: Echo | None = _to_stderr,
    unfinished: Unfinished = lambda: "",
) -> Outcome:
    """Run `command` in `cwd` with `env`, its output to `log` (and `echo`), held to `timeout` seconds and
    `memory_mb` for its whole tree; the tree is killed at the end. InputError if it cannot be started.
    A Ctrl-C (KeyboardInterrupt) kills the tree and propagates; the log so far stays. A run stalled with a
    kernel `unfinished` names is ended early (Outcome.stalled says why)."""
    if not command:
        raise InputError("no command given: reduce capture -- python your_script.py")
    start = time.monotonic()
    running = _Teed(command, cwd, env, log, echo, unfinished)
    try:
        code, stopped = hold(running, None, start, timeout, memory_mb, None)
    finally:
        running.finish()
    return Outcome(
        returncode=None if code < 0 else code,
        signal=-code if code < 0 and not stopped and not running.stalled else None,
        timed_out=stopped.timed_out,
        out_of_memory=stopped.out_of_memory,
        seconds=time.monotonic() - start,
        output=read_capped(log),
        stalled=running.stalled,
    )
