"""The suite's wall time at two commits, side by side in one run: each commit is cloned fresh, installed
(`make install`, not timed) and its README test command (`make test`) timed, one after the other on this
machine, NEW first; prints each time, the tests that passed and the ratio. `--twice` times a second
`make test` of NEW from the same clone right after its first (the suite must pass twice in a row).

Usage: python bench/suite_time.py BASE_COMMIT NEW_COMMIT [--twice] [--work DIR]
  e.g. python bench/suite_time.py 0ad6940 HEAD --twice
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def clone(commit: str, where: Path) -> Path:
    sha = subprocess.run(["git", "rev-parse", commit], cwd=ROOT, capture_output=True, text=True, check=True)
    folder = where / sha.stdout.strip()[:10]
    subprocess.run(["git", "clone", "-q", str(ROOT), str(folder)], check=True)
    subprocess.run(["git", "checkout", "-q", sha.stdout.strip()], cwd=folder, check=True)
    subprocess.run(["make", "install"], cwd=folder, check=True, capture_output=True)
    return folder


def make_test(folder: Path) -> tuple[float, str]:
    """(seconds, pytest's last line) of `make test` in `folder`."""
    start = time.monotonic()
    run = subprocess.run(["make", "test"], cwd=folder, capture_output=True, text=True)
    seconds = time.monotonic() - start
    summary = next((line for line in reversed(run.stdout.splitlines()) if re.search(r"passed|failed", line)), "")
    if run.returncode != 0:
        summary = f"FAILED (exit {run.returncode}): {summary or run.stderr[-300:]}"
    return seconds, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--twice", action="store_true", help="time a second make test of NEW from the same clone")
    parser.add_argument("--work", type=Path, help="where the clones go (default: a new temp dir)")
    args = parser.parse_args()
    where = args.work or Path(tempfile.mkdtemp(prefix="suite-time-"))
    times = {}
    for label, commit in (("new", args.new), ("base", args.base)):
        folder = clone(commit, where)
        times[label], summary = make_test(folder)
        print(f"{label} {commit}: {times[label]:.0f} s  {summary}", flush=True)
        if label == "new" and args.twice:
            again, summary = make_test(folder)
            print(f"new {args.new}, second run from the same clone: {again:.0f} s  {summary}", flush=True)
    print(f"new / base: {times['new'] / times['base']:.2f}")


if __name__ == "__main__":
    main()
