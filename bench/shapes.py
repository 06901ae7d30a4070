"""`reduce shapes` on a 100-call list of a corpus kernel (corpus/nearest_distance_odd_points: 100 query counts,
the odd ones not 1 mod 8 crash AKG's host/device split on cpu), on cpu and the cuda pipeline: compiles, wall
and seconds per target for a cold run at -j 1 and at -j 2 (each with a fresh cache), then the -j 2 run again
on its own cache, and the Dask executor (a LocalCluster of 2). Ratios to the -j 1 run, in one run of this
script, on this machine.

Usage: python bench/shapes.py [--lines N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "corpus" / "nearest_distance_odd_points" / "crash.yaml"


def run(shapes: Path, out: Path, cache: Path, *options: str) -> dict:
    env = {**os.environ, "AKG_REDUCE_CACHE": str(cache)}
    command = [sys.executable, "-m", "reducer", "shapes", str(CASE), "--shapes", str(shapes), "-o", str(out)]
    start = time.monotonic()
    done = subprocess.run(
        [*command, "--targets", "cpu,cuda", "--no-reduce", *options], capture_output=True, text=True, env=env
    )
    wall = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(done.stderr[-2000:])
    plan = json.loads((out / "plan.json").read_text())
    return {"wall": wall, "compiles": plan["compiles"]["compiles"], "stored": plan["compiles"]["stored_hits"],
            "per_target": plan["seconds_per_target"], "fails": plan["pass_rates"]["cpu"]["fails"],
            "buckets": len(plan["buckets"]), "padded": len(plan["padded_calls_compiled"])}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="akg-reduce-bench-shapes-") as tmp:
        folder = Path(tmp)
        shapes = folder / "shapes.txt"
        shapes.write_text("".join(f"[2, {n}, 3] [2, 64, 3]\n" for n in range(16, 16 + args.lines)))
        runs = {
            "-j 1, cold": run(shapes, folder / "a", folder / "a.sqlite", "-j", "1"),
            "-j 2, cold": run(shapes, folder / "b", folder / "b.sqlite", "-j", "2"),
            "-j 2, cached": run(shapes, folder / "c", folder / "b.sqlite", "-j", "2"),
            "dask (2 workers), cold": run(shapes, folder / "d", folder / "d.sqlite", "-j", "2", "--executor", "dask"),
        }
    base = runs["-j 1, cold"]["wall"]
    print(f"{args.lines} calls x 2 targets of {CASE.parent.name}\n")
    print("| run | wall s | vs -j 1 | compiles | from the cache | cpu s | cuda s | cpu fails | buckets | padded |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, r in runs.items():
        t = r["per_target"]
        print(f"| {name} | {r['wall']:.1f} | {r['wall'] / base:.2f} | {r['compiles']} | {r['stored']} | "
              f"{t['cpu']} | {t['cuda']} | {r['fails']} | {r['buckets']} | {r['padded']} |")  # fmt: skip


if __name__ == "__main__":
    main()
