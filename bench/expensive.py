"""The expensive failures, reduced in one run: wrong results (`expect: {kind: mismatch}`) and hangs
(`expect: {kind: timeout}`) of the corpus, or the cases named.

A wrong-result case is reduced twice with `-j 2`: *runner*, each check sent to a long-lived MindSpore
process (reducer/in_mindspore/mismatch_runner.py), and *fresh*, each check in a new MindSpore process
(`--cold`). A hang is reduced once with `-j 2` (warm workers, each candidate looked at after a short limit
and run on to the original's limit only when it hangs where the original does). Printed per run: the
checks (compiles), wall time, sizes, how many hangs ran on to the full limit, whether the minimal case
still fails the same way in every confirmation run (with the original's limit), and, per case, whether
both runs ended on the same case and the wall-time ratio runner / fresh.

Usage: python bench/expensive.py [case ...]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from corpus_cases import CORPUS, expensive_cases

from reducer.inputs.crash_yaml import load_case
from reducer.session import Settings, reduce_case


def _configs(kind: str) -> dict[str, Settings]:
    warm = Settings(jobs=2, diagnose=False)
    if kind == "mismatch":
        return {"runner": warm, "fresh": Settings(jobs=2, cold=True, diagnose=False)}
    return {"warm": warm}


def _final(bundle: Path) -> str:
    names = ("kernel.py", "kernel.info", "crash.yaml")
    return "".join((bundle / n).read_text() for n in names if (bundle / n).is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*")
    names = parser.parse_args().cases or expensive_cases()
    print(
        f"{'case':<30} {'config':<7} {'checks':>6} {'wall s':>7} {'full-limit':>10} {'confirmed':>9}"
        f" {'tokens':>11} {'ops':>7} {'volume':>15}"
    )
    with tempfile.TemporaryDirectory() as out:
        for name in names:
            crash = CORPUS / name / "crash.yaml"
            case = load_case(crash)
            walls, finals = {}, set()
            for label, settings in _configs(case.expect.kind if case.expect else "error").items():
                start = time.monotonic()
                bundle, stats = reduce_case(case, {"crash.yaml": crash.read_text()}, Path(out) / name / label, settings)
                walls[label] = time.monotonic() - start
                finals.add(_final(bundle))
                r = json.loads((bundle / "reduction.json").read_text())
                o, m = r["original"], r["reduced"]
                print(
                    f"{name:<30} {label:<7} {stats['compiles']:>6} {walls[label]:>7.1f}"
                    f" {stats.get('hangs_reconfirmed', 0):>10} {r['confirmations']:>4} of {r['confirmation_runs']:<2}"
                    f" {o['tokens']:>5}->{m['tokens']:<5} {o['ops']:>3}->{m['ops']:<3}"
                    f" {o['volume']:>7}->{m['volume']:<7}",
                    flush=True,
                )
            if len(walls) == 2:
                same = "the same case" if len(finals) == 1 else "DIFFERENT cases"
                ratio = walls["runner"] / walls["fresh"]
                print(f"{name}: runner and fresh ended on {same}; wall runner / fresh {ratio:.2f}", flush=True)


if __name__ == "__main__":
    main()
