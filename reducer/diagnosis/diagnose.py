"""After a reduction, what a user and a maintainer want next: workarounds that make the ORIGINAL compile
(attr and dtype changes, and paddings of its shapes to values the shape map says pass), which targets fail,
the crashing-shape map of the minimal case with its rules, the other bugs met on the way, and the
original's shapes tried.
One time budget for all; every try goes through the reduction's oracle (warm, cached, counted)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from reducer.core.case import Case
from reducer.diagnosis.boundary import OtherBug, OtherBugs, bucketing, original_shapes, shape_map
from reducer.diagnosis.targets import TargetRun, on_targets
from reducer.diagnosis.workarounds import Workaround, find_workarounds
from reducer.search.oracle import Oracle

DEFAULT_BUDGET = 240.0  # seconds: at most a quarter for the attr workarounds, most of the rest for the map
MAP_SHARE = 0.75  # of what the attr workarounds leave


@dataclass(frozen=True)
class Diagnosis:
    workarounds: list[Workaround]
    tries: list[dict]
    targets: list[TargetRun]
    bucketing: list[dict]
    boundary: list[dict]
    other_bugs: list[OtherBug]
    original_shapes: list[dict]
    compiles: int
    seconds: float

    def to_dict(self) -> dict:
        return {
            "workarounds": [w.to_dict() for w in self.workarounds],
            "workaround_tries": self.tries,
            "targets": [r.to_dict() for r in self.targets],
            "bucketing_tries": self.bucketing,
            "shape_boundary": self.boundary,
            "other_bugs": [
                {"signature": b.signature.to_dict(), "found_at": b.found, "case": other_bug_folder(b)}
                for b in self.other_bugs
            ],
            "original_shapes": self.original_shapes,
            "compiles": self.compiles,
            "seconds": round(self.seconds, 2),
        }


def other_bug_folder(bug: OtherBug) -> str:
    """Where the bundle keeps the case of another bug, ready for corpus/."""
    return f"other_bugs/{bug.signature.key()}"


def diagnose(minimal: Case, original: Case, oracle: Oracle, budget: float = DEFAULT_BUDGET) -> Diagnosis:
    start, compiles = time.monotonic(), oracle.counters.compiles

    def left() -> float:
        return budget - (time.monotonic() - start)

    others = OtherBugs(oracle)
    workarounds, tries = find_workarounds(minimal, original, oracle, budget / 4)
    targets = on_targets(minimal, original, oracle, left() / 4)
    maps = shape_map(minimal, original, oracle, left() * MAP_SHARE, others)
    padded, bucket_tries = bucketing(minimal, original, maps, oracle, left() / 2, others)
    shapes = original_shapes(original, oracle, left(), others)
    spent = oracle.counters.compiles - compiles
    boundary = [m.to_dict(minimal) for m in maps if m.tried]
    found = list(others.found.values())
    return Diagnosis(
        workarounds + padded, tries, targets, bucket_tries, boundary, found, shapes, spent, time.monotonic() - start
    )
