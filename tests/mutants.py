"""Is the suite a guard? Removes each protection of the sandbox in turn, in a copy of this checkout, and runs
the tests that should notice: every mutant must make them fail (within their time limits), none may pass.

    .venv/bin/python tests/mutants.py [NAME ...]      # all mutants, or the named ones

Prints one line per mutant (caught / SURVIVED, seconds, the first failing test) and exits 1 if any survived.
Not collected by pytest: it runs the suite, it is not part of it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ["tests/compile/test_sandbox.py", "tests/compile/test_warm.py", "tests/session/test_interrupt.py"]
SECONDS = 15 * 60

# name: (file, exact text of the protection, what replaces it)
SANDBOX, WORKER = "reducer/compile/sandbox.py", "reducer/in_mindspore/akg_worker.py"
MUTANTS = {
    "tree kill": (SANDBOX, "os.killpg(pgid, signal.SIGKILL)", "pass"),
    "timeout": (SANDBOX, "if time.monotonic() - start > deadline:", "if False:"),
    "memory cap": (SANDBOX, "if peak > memory_mb:", "if False:"),
    "temp-dir quota": (SANDBOX, "if _dir_bytes(workdir) > DIR_QUOTA:", "if False:"),
    "output capping": (SANDBOX, "if size <= 2 * OUTPUT_KEEP:", "if True:"),
    "die with parent, cold": (
        SANDBOX,
        "ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)",
        "pass",
    ),
    "die with parent, warm child": (WORKER, "libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)", "pass"),
    "warm worker ends its compile when the reducer is gone": (
        WORKER,
        "os.killpg(pid, signal.SIGKILL)",
        "pass",
    ),
    "file-size cap, cold": (
        SANDBOX,
        "resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))",
        "pass",
    ),
    "file-size cap, warm": (
        WORKER,
        'resource.setrlimit(resource.RLIMIT_FSIZE, (request["file_limit"], request["file_limit"]))',
        "pass",
    ),
    "core dumps off, cold": (SANDBOX, "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))", "pass"),
    "core dumps off, warm": (
        WORKER,
        "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))",
        "pass",
    ),
    "compile temp files in its dir, cold": (SANDBOX, '"TMPDIR": str(workdir), ', ""),
    "compile temp files in its dir, warm": (
        WORKER,
        'os.environ["TMPDIR"] = request["dir"]',
        "pass",
    ),
    "sweep of dead reducers' temp dirs": (
        SANDBOX,
        'for path in Path(tempfile.gettempdir()).glob(f"{PREFIX}*-*"):',
        "for path in []:",
    ),
}


def _copy_checkout(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()  # fmt: skip
    for name in files:
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)


def run_mutant(name: str) -> tuple[bool, float, str]:
    """(caught, seconds, first failing test or the last output line)."""
    path, protection, replacement = MUTANTS[name]
    with tempfile.TemporaryDirectory(prefix="akg-mutant-") as tmp:
        copy = Path(tmp)
        _copy_checkout(copy)
        text = (copy / path).read_text()
        if text.count(protection) != 1:
            raise SystemExit(f"{name}: {protection!r} is not once in {path}: update tests/mutants.py")
        (copy / path).write_text(text.replace(protection, replacement))
        env = {**os.environ, "PYTHONPATH": str(copy)}  # the reducers the tests start import the copy too
        start = time.monotonic()
        try:
            done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                   "-m", "not akg", *TESTS], cwd=copy, env=env, capture_output=True, text=True,
                                  timeout=SECONDS)  # fmt: skip
        except subprocess.TimeoutExpired:
            return False, time.monotonic() - start, f"hung past {SECONDS} s"
        seconds = time.monotonic() - start
        failed = re.search(r"^(FAILED|ERROR) (\S+)", done.stdout, re.M)
        lines = done.stdout.strip().splitlines()
        return done.returncode != 0, seconds, failed.group(2) if failed else (lines[-1] if lines else "")


def main() -> int:
    names = sys.argv[1:] or list(MUTANTS)
    survived = 0
    for name in names:
        caught, seconds, detail = run_mutant(name)
        survived += not caught
        print(f"{'caught  ' if caught else 'SURVIVED'} {seconds:6.0f} s  {name}: {detail}", flush=True)
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
