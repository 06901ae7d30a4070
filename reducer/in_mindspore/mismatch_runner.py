"""The wrong-result runner, a separate program run under the toolchain's interpreter (stdlib, numpy and
MindSpore; of ours mismatch_run.py and wire.py beside it): `mismatch_runner.py '<spec json>'` runs the check of
that spec (the smallest kernel of a kind: MindSpore, or its AKG, imported once), then one wrong-result check of
that kernel kind after the other in this same process. MindSpore's runtime is not fork-safe, so unlike akg_worker it
does not fork; the reducer replaces it when a check crashes, hangs or fails, and after a number of checks.

Each check has its own dir (its files, its log, its TMPDIR). The runner's working dir is its own: MindSpore
keeps the kernels it compiled there (by content hash, so two candidates never share one), and so does the
compile server MindSpore starts once for the whole runner. That server was started with its output going
to one file; what it prints during a check is appended to that check's log.

Protocol as akg_worker's, one JSON object per line. Runner -> reducer: {"ready": seconds} after the import
and a first check that starts MindSpore's compile server, then per request {"pid": this process} and
{"status": exit code of mismatch_run}. Reducer -> runner: {"dir": the check's dir, "log": file in it for
stdout and stderr, "spec": the spec file in it, "file_limit": bytes}. End of input ends the runner.
"""

import contextlib
import json
import os
import resource
import sys
import tempfile
import time

import mismatch_run
from wire import replier, request_lines

SERVER_LOG = "compile-server.log"


def _redirect(path):
    """fds 1 and 2 to `path` (appended)."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def _use_tmpdir(path):
    os.environ["TMPDIR"] = path
    tempfile.tempdir = None


def _check(request):
    """One request: the check run with its output to the request's log, the compile server's output of
    the same time appended to it. Returns the check's exit code."""
    folder = request["dir"]
    log = os.path.join(folder, request["log"])
    open(log, "wb").close()
    resource.setrlimit(resource.RLIMIT_FSIZE, (request["file_limit"], resource.RLIM_INFINITY))
    before = os.path.getsize(SERVER_LOG)
    _use_tmpdir(folder)
    _redirect(log)
    try:
        with open(os.path.join(folder, request["spec"])) as fh:
            code = mismatch_run.check(json.load(fh), folder)
    finally:
        _redirect(SERVER_LOG)
    with open(SERVER_LOG, "rb") as server, open(log, "ab") as out:
        server.seek(before)
        out.write(server.read())
    return code


def main():
    requests = os.dup(0)
    replies = os.dup(1)
    quiet = os.open(os.devnull, os.O_RDONLY)
    os.dup2(quiet, 0)
    os.close(quiet)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    started = time.monotonic()
    # The compile server the warm-up starts keeps these as its stdout, stderr and TMPDIR for good.
    _redirect(SERVER_LOG)
    os.mkdir("tmp")
    _use_tmpdir(os.path.abspath("tmp"))
    mismatch_run.check(json.loads(sys.argv[1]), tempfile.mkdtemp())
    reply = replier(replies)

    reply({"ready": round(time.monotonic() - started, 3)})
    for line in request_lines(requests):
        reply({"pid": os.getpid()})
        code = 2
        with contextlib.suppress(Exception):
            code = _check(json.loads(line))
        reply({"status": code})


if __name__ == "__main__":
    main()
