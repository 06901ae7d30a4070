"""Reduce every corpus case (or the ones named) once per configuration and print one table: compiles,
candidates rejected without a compile, cache hits, wall time, ops (fused graphs), tokens and volume before and after,
and whether every configuration ended on the same case. Configurations: `-j 1` and `-j 2` (warm
workers, no persistent cache: every run pays for its compiles), plus `--cold` runs when asked.

Usage: python bench/reduce.py [--cold] [--save DIR] [case ...]

A case is a corpus case's name, or a folder with a crash.yaml (bench/held_out/<case>).

`--save DIR` copies each case's final kernel.info, crash.yaml, kernel.py and reduction.json (from the `-j 1` run) to
DIR/<case>/, so two checkouts can be compared with `diff -r`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from corpus_cases import CORPUS, crash_cases

from reducer.inputs.crash_yaml import load_case
from reducer.session import Settings, reduce_case


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*")
    parser.add_argument("--cold", action="store_true", help="also run -j 2 with a new process per compile")
    parser.add_argument("--save", type=Path, help="copy each case's final files (-j 1) to SAVE/<case>/")
    args = parser.parse_args()
    names = args.cases or crash_cases()
    configs = {"-j 1": Settings(jobs=1, diagnose=False), "-j 2": Settings(jobs=2, diagnose=False)}
    if args.cold:
        configs["-j 2 cold"] = Settings(jobs=2, cold=True, diagnose=False)
    print(
        f"{'case':<24} {'config':<9} {'compiles':>8} {'rejected':>8} {'hits':>5} {'wall s':>7}"
        f" {'ops':>7} {'tokens':>11} {'volume':>15} {'same':>5}"
    )
    speedups = []
    with tempfile.TemporaryDirectory() as out:
        for name in names:
            crash = (Path(name) if Path(name).is_dir() else CORPUS / name) / "crash.yaml"
            files = {"crash.yaml": crash.read_text()}
            walls, kernels = {}, set()
            for label, settings in configs.items():
                start = time.monotonic()
                bundle, stats = reduce_case(load_case(crash), files, Path(out) / label.replace(" ", ""), settings)
                walls[label] = time.monotonic() - start
                kernels.add((bundle / "kernel.info").read_text() + (bundle / "crash.yaml").read_text())
                if args.save and label == "-j 1":
                    _save(bundle, args.save / Path(name).name)
                r = json.loads((bundle / "reduction.json").read_text())
                o, m = r["original"], r["reduced"]
                shown = Path(name).name
                print(
                    f"{shown:<24} {label:<9} {stats['compiles']:>8} {stats['invalid']:>8} {stats['cache_hits']:>5}"
                    f" {walls[label]:>7.1f} {o['ops']:>3}->{m['ops']:<3} {o['tokens']:>5}->{m['tokens']:<5}"
                    f" {o['volume']:>7}->{m['volume']:<7}"
                    f" {'yes' if len(kernels) == 1 else 'NO':>5}",
                    flush=True,
                )
            speedups.append(walls["-j 2"] / walls["-j 1"])
    print(f"wall -j 2 / -j 1: median {statistics.median(speedups):.2f} (per case: {[round(s, 2) for s in speedups]})")


def _save(bundle: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("kernel.info", "crash.yaml", "kernel.py"):
        if (bundle / name).is_file():  # kernel.py: Hybrid DSL cases only
            shutil.copy(bundle / name, dest / name)
    reduction = json.loads((bundle / "reduction.json").read_text())
    for timing in ("seconds", "wall_seconds", "elapsed"):
        reduction.pop(timing, None)
    (dest / "reduction.json").write_text(json.dumps(reduction, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
