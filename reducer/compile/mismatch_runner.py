"""The wrong-result runner, a separate program run under the toolchain's interpreter (stdlib, numpy and
MindSpore; of ours only mismatch_run.py beside it): `mismatch_runner.py hybrid` imports MindSpore once,
`mismatch_runner.py graph` MindSpore's AKG, then it runs one wrong-result check of that kernel kind after the
other in this same process. MindSpore's runtime is not fork-safe, so unlike akg_worker it
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

# This dir also holds reducer/compile/akg.py, which must not stand in for the akg package.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
SERVER_LOG = "compile-server.log"
WARM_UP = {}
WARM_UP["hybrid"] = {
    "kernel": "hybrid",
    "source": "from mindspore.ops import kernel\n\n\n@kernel\ndef warm_up(x):\n"
    "    y = output_tensor(x.shape, x.dtype)\n    for i in range(x.shape[0]):\n        y[i] = x[i]\n    return y\n",
    "function": "warm_up",
    "inputs": [{"shape": [2], "dtype": "float32"}],
    "outputs": [{"shape": [2], "dtype": "float32"}],
    "attrs": {},
    "against": None,
    "tolerance": 1e-3,
}
_TENSOR = {"data_type": "float32", "format": "DefaultFormat", "shape": [2]}
WARM_UP["graph"] = {
    "kernel": "graph",
    "info": {
        "composite": True,
        "id": 0,
        "op": "Fused_Abs_warm_up",
        "input_desc": [[{**_TENSOR, "tensor_name": "input_0"}]],
        "op_desc": [
            {
                "attr": None,
                "name": "Abs",
                "input_desc": [[{**_TENSOR, "name": "x", "tensor_name": "input_0"}]],
                "output_desc": [{**_TENSOR, "name": "output", "tensor_name": "output_0_0"}],
            }
        ],
        "output_desc": [{**_TENSOR, "tensor_name": "output_0_0"}],
        "platform": "AKG",
        "process": "cpu",
        "target_info": {"arch": "x86_64", "cpu": "core-avx2", "feature": "avx", "system": "linux"},
        "version": 2,
    },
    "inputs": [{"shape": [2], "dtype": "float32"}],
    "outputs": [{"shape": [2], "dtype": "float32"}],
    "attrs": {},
    "against": None,
    "tolerance": None,
}


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
    mismatch_run.check(WARM_UP[sys.argv[1]], tempfile.mkdtemp())

    def reply(message):
        os.write(replies, (json.dumps(message) + "\n").encode())

    reply({"ready": round(time.monotonic() - started, 3)})
    pending = b""
    while True:
        chunk = os.read(requests, 1 << 16)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            reply({"pid": os.getpid()})
            code = 2
            with contextlib.suppress(Exception):
                code = _check(json.loads(line))
            reply({"status": code})


if __name__ == "__main__":
    main()
