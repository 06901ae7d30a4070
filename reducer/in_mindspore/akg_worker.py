"""The warm compile worker, a separate program run under the toolchain's interpreter (stdlib and wire.py):
it imports AKG once, then forks one child per compile request, and the
child runs the compiler script exactly as `python <script> k.info AKG '<attrs>' .` would, in its own
session and temp dir. A crash or hang kills only the child; the reducer watches and kills it by pid.

Protocol, one JSON object per line. Worker -> reducer: {"ready": seconds} after the import, then per
request {"pid": child pid} and {"status": exit code, negative for a signal}. Reducer -> worker:
{"dir": temp dir (also the child's TMPDIR), "log": file for stdout and stderr,
"argv": [script, args...], "file_limit": bytes, optionally "hold_until": a file the child waits for
before it compiles, which gdb, attached to it, makes}. End of input ends the worker and any child it has.
"""

import contextlib
import ctypes
import json
import os
import resource
import runpy
import select
import signal
import sys
import time

from wire import OWNER_ENV, as_python_runs, preload_compiler, replier, request_lines

PR_SET_PDEATHSIG = 1
PR_SET_PTRACER = 0x59616D61
HOLD_SECONDS = 30.0  # the longest a held compile waits for its debugger


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _print_from_script(exc: BaseException, script: str) -> None:
    """What a plain `python script` prints for an uncaught exception: the (possibly replaced) excepthook
    on the frames from the script down, none of ours."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != script:
        tb = tb.tb_next
    if tb is not None:
        exc = exc.with_traceback(tb)  # the default hook prints the exception's own traceback, not its argument
    sys.excepthook(type(exc), exc, exc.__traceback__)


def _hold(path) -> None:
    """With "hold_until", wait for that file before compiling: a debugger attaches meanwhile and makes it."""
    if path:
        give_up = time.monotonic() + HOLD_SECONDS
        while not os.path.exists(path) and time.monotonic() < give_up:
            time.sleep(0.002)


def _child(request: dict, protocol_fds: tuple[int, ...], worker: int) -> None:
    """In the forked child of `worker`: become the sandboxed compile, never return."""
    code = 1
    try:
        os.setsid()
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != worker:  # the worker died before the line above
            os._exit(1)
        # The reducer's py-spy and gdb read this compile's stack: under Yama's ptrace_scope 1 only its
        # ancestors may, unless it names the reducer as its tracer.
        libc.prctl(PR_SET_PTRACER, int(os.environ.get(OWNER_ENV, "0")), 0, 0, 0)
        for fd in protocol_fds:
            os.close(fd)
        os.chdir(request["dir"])
        os.environ["TMPDIR"] = request["dir"]  # as the sandbox gives a cold compile: temp files stay in its dir
        if "tempfile" in sys.modules:
            sys.modules["tempfile"].tempdir = None
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(devnull)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (request["file_limit"], request["file_limit"]))
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _hold(request.get("hold_until"))
        argv = request["argv"]
        sys.argv = list(argv)
        as_python_runs(argv[0])
        try:
            runpy.run_path(argv[0], run_name="__main__")
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc)
        except BaseException as exc:
            _print_from_script(exc, argv[0])
            code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed stream must not stop the exit
                stream.flush()
        os._exit(code)


def _wait(pid: int, requests: int) -> int:
    """Wait for the child; if the reducer goes away meanwhile, kill the child's session and leave."""
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            ready, _, _ = select.select([pidfd, requests], [], [])
            if pidfd in ready:
                break
            if not os.read(requests, 1 << 16):  # EOF: the reducer is gone (a request is never sent mid-compile)
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os._exit(0)
    finally:
        os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def main() -> None:
    script = sys.argv[1]
    requests = os.dup(0)
    replies = os.dup(1)
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):  # stray prints of the imported modules must not reach the protocol pipe
        os.dup2(quiet, fd)
    started = time.monotonic()
    preload_compiler(script)
    reply = replier(replies)

    reply({"ready": round(time.monotonic() - started, 3)})
    for line in request_lines(requests):
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        worker = os.getpid()
        pid = os.fork()
        if pid == 0:
            _child(request, (requests, replies, quiet), worker)
        reply({"pid": pid})
        reply({"status": _wait(pid, requests)})


if __name__ == "__main__":
    main()
