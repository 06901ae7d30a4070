"""One compile in isolation: a fresh temp dir, its own session and process group, a wall-clock timeout, a
memory cap on the whole process tree, a size cap per file and a quota on the temp dir, core dumps off,
output capped (head and tail kept); the tree is killed and the temp dir removed at the end."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import psutil

from reducer.compile import hang_stack
from reducer.in_mindspore.wire import OWNER_ENV  # set for every process we start: the reducer's pid

OUTPUT_KEEP = 256 * 1024  # bytes kept from each end of the output
FILE_SIZE_LIMIT = 256 << 20  # no single file the compile writes may exceed this
DIR_QUOTA = 2 << 30  # all files in the compile's temp dir together
DIR_CHECK_SECONDS = 0.5
POLL_SECONDS = 0.02
TREE_EVERY = 5  # polls between two scans for new processes in the compile's tree
PR_SET_PDEATHSIG = 1
PR_SET_PTRACER = 0x59616D61  # Yama: who may read this process's stack besides its ancestors
PREFIX = "akg-reduce-"  # every temp dir of a reducer is PREFIX<its pid>-..., so a later run can sweep it
LOG_NAME = ".compile-output"  # stdout and stderr of the compile, in its temp dir
_cancelled = threading.Event()


class CompileCancelled(Exception):
    """The compile was stopped because its result is no longer needed (a faster candidate won)."""


def cancel_all() -> None:
    """Kill every compile in flight in this process (on Ctrl-C or SIGTERM) and refuse new ones."""
    _cancelled.set()


def allow_compiles() -> None:
    _cancelled.clear()


@dataclass(frozen=True)
class Outcome:
    """What happened to one compile."""

    returncode: int | None
    signal: int | None
    timed_out: bool
    out_of_memory: bool
    seconds: float
    output: str
    collected: Any = field(default=None, compare=False)
    over_quota: bool = False
    stack: tuple[str, ...] = ()  # a compile killed at its deadline, or dead of a signal: where it was
    stack_by: str = ""  # what read `stack`: "py-spy" or "kernel" (/proc) for a hang, "gdb" for a crash
    stalled: str = ""  # a user's run ended early: why (see user_run)
    check: bool = False  # a wrong-result check ran (mismatch_run), not a compile: its output has records


def die_with_parent(parent: int) -> None:
    """In a child of `parent` before exec: it is killed when the thread that started it dies, even by
    kill -9, also when that happened between the fork and this call."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def dying_with_this_process() -> Callable[[], None]:
    """A preexec_fn: the child dies with the process that starts it."""
    return functools.partial(die_with_parent, os.getpid())


def _limits(parent: int) -> None:
    die_with_parent(parent)
    # py-spy, a child of the reducer, samples a hanging compile; under Yama's ptrace_scope 1 (Ubuntu's
    # default) only the compile's ancestors may, unless the compile names the reducer as its tracer.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PTRACER, parent, 0, 0, 0)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))


@contextlib.contextmanager
def temp_dir(purpose: str) -> Iterator[Path]:
    """A new temp dir of this process for `purpose`, removed afterwards (after a kill -9: by the next run's
    sweep_orphans)."""
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-{purpose}-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def sandbox_env(env: dict[str, str], workdir: Path) -> dict[str, str]:
    """`env` as a compile in `workdir` gets it: its temp files go to its own dir (within the quota, removed
    with it) and it carries the owner mark, by which its processes can be found even after they left the tree."""
    return {**env, "TMPDIR": str(workdir), OWNER_ENV: str(os.getpid())}


def kill_marked(variable: str, mark: str) -> int:
    """Kill every process whose environment has `variable`=`mark`, also those that left the tree (a
    daemon's double fork, setsid); returns how many."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.environ().get(variable) == mark:
                found.append(proc)
    for proc in found:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(found, timeout=2)
    return len(found)


def sweep_orphans() -> None:
    """Remove the temp dirs of reducers that died without cleaning up (kill -9)."""
    for path in Path(tempfile.gettempdir()).glob(f"{PREFIX}*-*"):
        pid = path.name[len(PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _tree(root: psutil.Process) -> list[psutil.Process]:
    try:
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _rss_mb(procs: list[psutil.Process]) -> float:
    total = 0
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            total += p.memory_info().rss
    return total / (1024 * 1024)


def _kill(pgid: int, seen: dict[int, psutil.Process]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    for proc in seen.values():
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc.kill()
    psutil.wait_procs(list(seen.values()), timeout=2)


def _dir_bytes(root: Path) -> int:
    total = 0
    for dirpath, _, names in os.walk(root):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def read_capped(path: Path) -> str:
    try:
        size = path.stat().st_size
    except FileNotFoundError:  # the compile died before it opened its log
        return ""
    with path.open("rb") as fh:
        if size <= 2 * OUTPUT_KEEP:
            data = fh.read()
        else:
            head = fh.read(OUTPUT_KEEP)
            fh.seek(size - OUTPUT_KEEP)
            tail = fh.read()
            cut = f"\n[... {size - 2 * OUTPUT_KEEP} bytes of output cut ...]\n".encode()
            data = head + cut + tail
    return data.decode("utf-8", errors="replace")


class Running(Protocol):
    """A compile that has started: its pid (leader of its own session) and a way to wait for it. When
    `lives_on`, the process serves more than this compile: it is killed only when a limit stops it."""

    pid: int
    lives_on: bool

    def wait(self, seconds: float | None) -> int | None:
        """Exit code (negative: killed by that signal) once it has ended, None if still running after
        `seconds` (None: wait as long as it takes)."""
        ...


Launch = Callable[[Path], Running]  # starts the compile in the given dir, output to dir/LOG_NAME


class _Subprocess:
    def __init__(self, command: list[str], workdir: Path, env: dict[str, str]) -> None:
        with (workdir / LOG_NAME).open("wb") as log:
            self._proc = subprocess.Popen(
                command,
                cwd=workdir,
                env=sandbox_env(env, workdir),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=functools.partial(_limits, os.getpid()),
            )
        self.pid = self._proc.pid
        self.lives_on = False

    def wait(self, seconds: float | None) -> int | None:
        try:
            return self._proc.wait(seconds)
        except subprocess.TimeoutExpired:
            return None


def run_sandboxed(
    command: list[str],
    files: dict[str, str],
    env: dict[str, str],
    timeout: float,
    memory_mb: int,
    collect: Callable[[Path], Any] | None = None,
    cancel: threading.Event | None = None,
    hang_check: HangCheck | None = None,
) -> Outcome:
    """Write `files` into a fresh dir, run `command` there as a new process and return its Outcome.

    `collect(dir)` runs before the dir is removed, to keep artefacts such as IR dumps."""

    def launch(workdir: Path) -> Running:
        return _Subprocess(command, workdir, env)

    return supervise(launch, files, timeout, memory_mb, collect, cancel, hang_check)


@dataclass(frozen=True)
class HangCheck:
    """For a hang: at `after` seconds, well before the compile's own limit, its stack is sampled; unless
    `same(stack)` says it hangs where the bug does, it is stopped there. Otherwise it runs on to its limit,
    which confirms it hangs rather than compiles slowly, and is sampled again when killed."""

    after: float
    same: Callable[[tuple[str, ...]], bool]


@dataclass
class Stopped:
    """Which limit ended a compile, if any."""

    timed_out: bool = False
    out_of_memory: bool = False
    over_quota: bool = False
    stack: tuple[str, ...] = ()
    stack_by: str = ""

    def __bool__(self) -> bool:
        return self.timed_out or self.out_of_memory or self.over_quota


def hold(
    running: Running,
    workdir: Path | None,
    start: float,
    timeout: float,
    memory_mb: float,
    cancel: threading.Event | None,
    hang_check: HangCheck | None = None,
) -> tuple[int, Stopped]:
    """Wait for the process while holding it to its limits (the quota of `workdir` when given), then kill its
    whole tree whatever happened. Returns its exit status (negative: the signal) and which limit stopped it."""
    stopped = Stopped()
    deadline = timeout if hang_check is None else min(hang_check.after, timeout)
    peak = 0.0
    next_dir_check = start + DIR_CHECK_SECONDS
    seen: dict[int, psutil.Process] = {}
    code: int | None = None
    try:
        root = psutil.Process(running.pid)
    except psutil.NoSuchProcess:
        root = None
    try:
        polls = 0
        procs: list[psutil.Process] = []
        while (code := running.wait(POLL_SECONDS)) is None:
            if root and polls % TREE_EVERY == 0:  # finding the tree scans /proc; reading RSS is cheap
                procs = _tree(root)
                seen.update({p.pid: p for p in procs})
            polls += 1
            peak = max(peak, _rss_mb(procs))
            if peak > memory_mb:
                stopped.out_of_memory = True
                break
            if time.monotonic() - start > deadline:
                stopped.stack, stopped.stack_by = hang_stack.sample(hang_stack.tree_pids(running.pid))
                if deadline < timeout and hang_check is not None and hang_check.same(stopped.stack):
                    deadline = timeout
                    continue
                stopped.timed_out = True
                break
            # A runner's check is left to finish: killing it would cost a new runner (seconds of
            # MindSpore's import) to save the rest of a check that takes a fraction of a second.
            if _cancelled.is_set() or (cancel is not None and cancel.is_set() and not running.lives_on):
                break
            if workdir is not None and time.monotonic() > next_dir_check:
                next_dir_check = time.monotonic() + DIR_CHECK_SECONDS
                if _dir_bytes(workdir) > DIR_QUOTA:
                    stopped.over_quota = True
                    break
    finally:
        if code is None or not running.lives_on:
            if root:
                seen.update({p.pid: p for p in _tree(root)})
            _kill(running.pid, seen)
        if code is None:
            code = running.wait(None)
    return code, stopped


def supervise(
    launch: Launch,
    files: dict[str, str],
    timeout: float,
    memory_mb: int,
    collect: Callable[[Path], Any] | None = None,
    cancel: threading.Event | None = None,
    hang_check: HangCheck | None = None,
) -> Outcome:
    """Write `files` into a fresh dir, start the compile there with `launch`, hold it to the limits,
    kill its tree at the end and return its Outcome. Setting `cancel` kills it: CompileCancelled."""
    if _cancelled.is_set():
        raise KeyboardInterrupt
    with temp_dir("compile") as workdir:
        for name, text in files.items():
            (workdir / name).write_text(text, encoding="utf-8")
        start = time.monotonic()
        code, stopped = hold(launch(workdir), workdir, start, timeout, memory_mb, cancel, hang_check)
        if _cancelled.is_set():
            raise KeyboardInterrupt
        if cancel is not None and cancel.is_set():
            raise CompileCancelled
        return Outcome(
            returncode=None if code < 0 else code,
            signal=-code if code < 0 and not stopped else None,
            timed_out=stopped.timed_out,
            out_of_memory=stopped.out_of_memory,
            seconds=time.monotonic() - start,
            output=read_capped(workdir / LOG_NAME),
            collected=collect(workdir) if collect else None,
            over_quota=stopped.over_quota,
            stack=stopped.stack,
            stack_by=stopped.stack_by,
        )
