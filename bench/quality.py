"""How small our minimal cases are next to what else is known: for every corpus compiler failure, the
tokens of the original, of our reduction (-j 2), of the best peer reducer on record (bench/RESULTS.md,
`bench/peers.py`; peers are not held to well-formedness), of the smallest hand-found kernel with the same
signature (bench/known_minimal/<case>/, each checked by a test to still fail that way), and the ratio of
ours to the smallest well-formed kernel known (ours or hand-found).

Usage: python bench/quality.py [--saved DIR] [case ...]

`--saved DIR` reads our reductions from DIR/<case>/crash.yaml (what `bench/reduce.py --save DIR` wrote)
instead of reducing again.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from corpus_cases import CORPUS, crash_cases

from reducer.core.case import Case
from reducer.inputs.crash_yaml import load_case
from reducer.kernels.kinds import kind_of, size_of
from reducer.session import Settings, reduce_case

KNOWN_MINIMAL = Path(__file__).resolve().parent / "known_minimal"
# Tokens of the smallest final case of any peer in bench/RESULTS.md's "Against other reducers" table.
BEST_PEER = {"transpose_provide_call": ("shrinkray", 115), "hybrid_tuple_unpack": ("cvise", 21)}


def ours(name: str, saved: Path | None, out: Path) -> Case:
    if saved is not None:
        return load_case(saved / name / "crash.yaml")
    crash = CORPUS / name / "crash.yaml"
    bundle, _ = reduce_case(load_case(crash), {"crash.yaml": crash.read_text()}, out, Settings(jobs=2, diagnose=False))
    return load_case(bundle / "crash.yaml")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*")
    parser.add_argument("--saved", type=Path, help="our reductions, as bench/reduce.py --save wrote them")
    args = parser.parse_args()
    print("| case | original | ours | well-formed | best peer on record | hand-found | ours / smallest well-formed |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as out:
        for name in args.cases or crash_cases():
            original = load_case(CORPUS / name / "crash.yaml")
            reduced = ours(name, args.saved, Path(out) / name)
            mine = size_of(reduced).tokens
            well_formed = "no" if kind_of(reduced).ill_formed(reduced) else "yes"
            peer = BEST_PEER.get(name)
            hand_file = KNOWN_MINIMAL / name / "crash.yaml"
            hand = size_of(load_case(hand_file)).tokens if hand_file.is_file() else None
            known = [x for x in (mine if well_formed == "yes" else None, hand) if x is not None]
            print(
                f"| {name} | {size_of(original).tokens} | {mine} | {well_formed}"
                f" | {f'{peer[1]} ({peer[0]})' if peer else '-'} | {hand if hand is not None else '-'}"
                f" | {f'{mine / min(known):.2f}' if known else '-'} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
