"""Warm compiles: a pool of long-lived processes that imported the compiler once. An `akg_worker` forks a
sandboxed child per compile; a `mismatch_runner` runs wrong-result checks itself, one after the other, and
is retired after a check AKG failed in (its error may leave MindSpore broken) or a number of checks; a check
that compared too little, or whose reference failed, leaves it serving. Workers are keyed by program and
environment (AKG reads some variables at import), so a case never compiles in a worker started for another
environment.
A worker that dies is replaced; one that cannot start makes its key fall back to cold compiles."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reducer.compile import sandbox
from reducer.compile.sandbox import LOG_NAME, CompileCancelled, Running
from reducer.in_mindspore.mismatch_run import FAILED, NOT_CHECKED, PASSED, WRONG

READY_SECONDS = 300.0  # importing AKG takes ~1 s; a worker silent this long is broken
MAX_IDLE = 6  # idle workers kept across all keys; the least recently used beyond this are stopped
RUNNER_CHECKS = 40  # a runner is replaced after this many checks, so that what leaks does not pile up
# The exit codes of mismatch_run after which its runner stays in service: within tolerance, wrong, not checked,
# and the check itself failed (its reference or our code raised, MindSpore untouched); not after AKG raised.
KEEPS_RUNNER = frozenset({PASSED, WRONG, NOT_CHECKED, FAILED})


@dataclass(frozen=True)
class Program:
    """What a worker runs (argv) and when it retires: after `max_requests`, or a status not in `keep_after`."""

    argv: tuple[str, ...]
    max_requests: int | None = None
    keep_after: frozenset[int] | None = None  # None: every status keeps it
    home: bool = False  # runs in a working dir of its own (else in the reducer's; its children chdir)


def compile_worker(argv: list[str]) -> Program:
    """An akg_worker (its command line from the launcher): a crash or hang kills only the compile's own child."""
    return Program(tuple(argv))


def mismatch_runner(argv: list[str]) -> Program:
    """A mismatch_runner (its command line from the launcher, with the warm-up check of its kernel kind)."""
    return Program(tuple(argv), RUNNER_CHECKS, KEEPS_RUNNER, home=True)


WorkerKey = tuple[Program, tuple[tuple[str, str], ...]]


class WorkerDied(Exception):
    """The worker ended while a compile was running in it; the compile's result is unknown."""


class WorkerUnavailable(Exception):
    """The worker could not be started (its interpreter or the import failed)."""


class Worker:
    """One worker process and its line protocol; used by one thread at a time."""

    def __init__(self, program: Program, env: dict[str, str]) -> None:
        self.program = program
        self.requests = 0
        self.retired = False
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker, closed in stop()
        # A runner keeps MindSpore's compiled kernels in its working dir (removed in stop()).
        self._home = Path(tempfile.mkdtemp(prefix=f"{sandbox.PREFIX}{os.getpid()}-worker-")) if program.home else None
        try:
            self._proc = subprocess.Popen(
                list(program.argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
                cwd=self._home,
                env={**env, sandbox.OWNER_ENV: str(os.getpid())},
                start_new_session=True,  # Ctrl-C reaches the reducer, which ends the worker itself
            )
        except OSError as exc:
            self._remove_home()
            raise WorkerUnavailable(f"cannot start {program.argv[0]}: {exc}") from None
        self._buffer = b""
        self.last_used = time.monotonic()
        try:
            ready = self._message(READY_SECONDS)
        except WorkerDied:
            ready = None
        if ready is None or "ready" not in ready:
            self._errors.seek(0)
            tail = self._errors.read()[-2000:].decode(errors="replace").strip()
            self.stop()
            raise WorkerUnavailable(f"the compile worker did not start: {tail or 'no output'}")

    def _message(self, seconds: float | None) -> dict | None:
        """The next message, or None when none came within `seconds`; WorkerDied at end of output."""
        deadline = None if seconds is None else time.monotonic() + seconds
        stdout = self._proc.stdout
        assert stdout is not None
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([stdout], [], [], left)
            if not ready:
                return None
            chunk = os.read(stdout.fileno(), 1 << 16)
            if not chunk:
                raise WorkerDied("the compile worker exited")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def launch(self, fields: dict[str, Any], workdir: Path) -> Running:
        """Send one request (`fields` and the dir, log and file-size cap) and return what runs it."""
        request = {"dir": str(workdir), "log": LOG_NAME, "file_limit": sandbox.FILE_SIZE_LIMIT, **fields}
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write((json.dumps(request) + "\n").encode())
            stdin.flush()
        except OSError:
            raise WorkerDied("the compile worker exited") from None
        started = self._message(None)
        assert started is not None
        self.last_used = time.monotonic()
        self.requests += 1
        return _WarmChild(self, int(started["pid"]))

    def finished(self, status: int) -> None:
        """A request ended with `status`: retire the worker when its program says so."""
        program = self.program
        if program.keep_after is not None and status not in program.keep_after:
            self.retired = True
        if program.max_requests is not None and self.requests >= program.max_requests:
            self.retired = True

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def stop(self) -> None:
        """Kill it: a worker keeps nothing worth a graceful exit (unloading AKG takes a while), and a
        compile still running in it dies with it (its child has PDEATHSIG)."""
        with contextlib.suppress(OSError):
            if self._proc.stdin:
                self._proc.stdin.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):  # a runner's compile server too
            os.killpg(self._proc.pid, signal.SIGKILL)
        self._proc.kill()
        self._proc.wait()
        if self._proc.stdout:
            self._proc.stdout.close()
        self._errors.close()
        self._remove_home()

    def _remove_home(self) -> None:
        if self._home is not None:
            shutil.rmtree(self._home, ignore_errors=True)


class _WarmChild:
    """A request in flight: the worker's forked child, or the worker itself (a runner), which outlives the
    request unless a limit stops it."""

    def __init__(self, worker: Worker, pid: int) -> None:
        self._worker = worker
        self.pid = pid
        self.lives_on = pid == worker._proc.pid

    def wait(self, seconds: float | None) -> int | None:
        try:
            message = self._worker._message(seconds)
        except WorkerDied:
            if not self.lives_on:
                raise
            # A runner is the check: killed at a limit (or on Ctrl-C), or crashed with the kernel, its own
            # exit is the check's result; the compile is not rerun in a new runner.
            self._worker.retired = True
            return self._worker._proc.wait()
        if message is None:
            return None
        status = int(message["status"])
        self._worker.finished(status)
        return status


class WorkerPool:
    """Workers by key, handed out to one thread at a time; thread-safe. When a key needs its first worker,
    `size` - 1 spares start alongside in the background, so `size` parallel compiles of a new environment
    pay for one import in wall time, not `size` one after the other."""

    def __init__(self, size: int = 1) -> None:
        self.size = max(1, size)
        self._idle: list[tuple[WorkerKey, Worker]] = []
        self._starting: dict[WorkerKey, list[Future[Worker]]] = {}
        self._busy: Counter[WorkerKey] = Counter()
        self._broken: set[WorkerKey] = set()
        self.failures: list[str] = []  # why workers could not start; their keys compile cold
        self._lock = threading.RLock()  # a spare that fails at once runs its callback under the lock
        self._spawner = ThreadPoolExecutor(self.size, thread_name_prefix="worker-start")
        self._closed = False
        self.started = 0

    @staticmethod
    def key(program: Program, env: dict[str, str]) -> WorkerKey:
        return program, tuple(sorted(env.items()))

    def usable(self, key: WorkerKey) -> bool:
        return key not in self._broken and not self._closed

    def _start(self, key: WorkerKey) -> Worker:
        program, env = key
        try:
            worker = Worker(program, dict(env))
        except WorkerUnavailable as exc:
            with self._lock:
                if key not in self._broken:
                    self._broken.add(key)
                    self.failures.append(str(exc))
            raise
        with self._lock:
            self.started += 1
        return worker

    def _spare_ready(self, key: WorkerKey, future: Future[Worker]) -> None:
        """A spare finished starting: idle it, unless a compile already claimed it."""
        with self._lock:
            waiting = self._starting.get(key, [])
            if future not in waiting:
                return
            waiting.remove(future)
        if future.exception() is None:
            self._put_back(key, future.result(), keep=True)

    def _take(self, key: WorkerKey) -> Worker | Future[Worker] | None:
        """Under the lock: an idle worker for `key`, else one that is starting; spares are asked for."""
        found = next((i for i, (k, w) in enumerate(self._idle) if k == key and w.alive and not w.retired), None)
        if found is not None:
            return self._idle.pop(found)[1]
        waiting = self._starting.setdefault(key, [])
        claimed = waiting.pop(0) if waiting else None
        spares = self.size - self._busy[key] - len(waiting) - 1 - sum(k == key for k, _ in self._idle)
        for _ in range(max(0, spares)):
            future = self._spawner.submit(self._start, key)
            waiting.append(future)
            future.add_done_callback(functools.partial(self._spare_ready, key))
        return claimed

    @contextlib.contextmanager
    def worker(self, key: WorkerKey) -> Iterator[Worker]:
        """An idle worker for `key` (started if none), returned to the pool after use unless it died.
        WorkerUnavailable marks the key broken, so later compiles of it go cold at once."""
        with self._lock:
            taken = self._take(key)
            self._busy[key] += 1
        try:
            if isinstance(taken, Worker):
                worker = taken
            elif taken is not None:
                worker = taken.result()
            else:
                worker = self._start(key)
        except BaseException:
            with self._lock:
                self._busy[key] -= 1
            raise
        keep = False
        try:
            yield worker
            keep = True
        except CompileCancelled:
            keep = True  # its child was killed and reaped: the worker is ready for the next one
            raise
        finally:
            with self._lock:
                self._busy[key] -= 1
            self._put_back(key, worker, keep)

    def _put_back(self, key: WorkerKey, worker: Worker, keep: bool) -> None:
        with self._lock:
            if keep and worker.alive and not worker.retired and not self._closed:
                self._idle.append((key, worker))
                self._idle.sort(key=lambda item: item[1].last_used)
                surplus = self._idle[: max(0, len(self._idle) - MAX_IDLE)]
                del self._idle[: len(surplus)]
            else:
                surplus = [(key, worker)]
        for _, stale in surplus:
            stale.stop()

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._spawner.shutdown(wait=True)  # spares still starting end up idle (closed: stopped)
        with self._lock:
            idle, self._idle = self._idle, []
            starting = [f for futures in self._starting.values() for f in futures]
            self._starting.clear()
        for worker in [w for _, w in idle] + [f.result() for f in starting if f.exception() is None]:
            worker.stop()
