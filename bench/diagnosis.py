"""The diagnosis of every corpus case (or the ones named): reduce it (`-j 2`, no diagnosis), then run the
diagnosis on the bundle's minimal case with the default budget and print one table: knobs mapped, values
tried, compiles, seconds, compiles per second, whether the budget ran out before every value was tried,
the rules found, bucketing workarounds verified on the original, other bugs met, and the triage verdict.

Usage: python bench/diagnosis.py [--budget S] [case ...]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from corpus_cases import CORPUS, crash_cases

from reducer.diagnosis.boundary import MAP_UP_TO
from reducer.diagnosis.diagnose import DEFAULT_BUDGET, diagnose
from reducer.inputs.crash_yaml import load_case
from reducer.search.oracle import Oracle
from reducer.session import Settings, compiler_for, reduce_case


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET)
    args = parser.parse_args()
    print(
        f"{'case':<28} {'knobs':>5} {'values':>6} {'compiles':>8} {'wall s':>7} {'/s':>5} {'full':>4}"
        f" {'padded':>6} {'others':>6}  verdict / rules"
    )
    with tempfile.TemporaryDirectory() as out:
        for name in args.cases or crash_cases():
            crash = CORPUS / name / "crash.yaml"
            settings = Settings(jobs=2, diagnose=False)
            bundle, _ = reduce_case(load_case(crash), {"crash.yaml": crash.read_text()}, Path(out), settings)
            minimal, original = load_case(bundle / "crash.yaml"), load_case(crash)
            verdict = json.loads((bundle / "reduction.json").read_text())["triage"]["label"]
            with compiler_for(settings) as (compiler, _), Oracle(minimal.expect, 2, compiler) as oracle:
                found = diagnose(minimal.with_(timeout=60), original, oracle, args.budget)
            values = sum(len(m["tried"]) for m in found.boundary)
            full = all(str(v) in m["tried"] for m in found.boundary for v in range(1, MAP_UP_TO + 1))
            padded = sum(w.name.startswith("pad ") for w in found.workarounds)
            rules = "; ".join(sorted({m["rule"]["kind"] for m in found.boundary}))
            print(
                f"{name:<28} {len(found.boundary):>5} {values:>6} {found.compiles:>8} {found.seconds:>7.1f}"
                f" {found.compiles / max(found.seconds, 0.01):>5.1f} {'yes' if full else 'no':>4} {padded:>6}"
                f" {len(found.other_bugs):>6}  {verdict} / {rules}"
            )


if __name__ == "__main__":
    main()
