"""Reduce every corpus case (or the ones named) and print one table: compiles, rejected candidates, cache
hits, wall time, tokens and input volume before and after. Usage: python bench/reduce.py [-j N] [case ...]"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from reducer.case import load_case
from reducer.session import Settings, reduce_case

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("cases", nargs="*")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args()
    names = args.cases or sorted(p.name for p in CORPUS.iterdir() if (p / "crash.yaml").is_file())
    header = f"{'case':<24} {'compiles':>8} {'invalid':>7} {'hits':>5} {'wall s':>7} {'tokens':>11} {'volume':>15}"
    print(header)
    with tempfile.TemporaryDirectory() as out:
        for name in names:
            crash = CORPUS / name / "crash.yaml"
            files = {"crash.yaml": crash.read_text()}
            start = time.monotonic()
            bundle, stats = reduce_case(load_case(crash), files, Path(out), Settings(jobs=args.jobs))
            wall = time.monotonic() - start
            r = json.loads((bundle / "reduction.json").read_text())
            o, m = r["original"], r["reduced"]
            print(
                f"{name:<24} {stats['compiles']:>8} {stats['invalid']:>7} {stats['cache_hits']:>5} {wall:>7.1f}"
                f" {o['tokens']:>5}->{m['tokens']:<5} {o['volume']:>7}->{m['volume']:<7}",
                flush=True,
            )


if __name__ == "__main__":
    main()
