"""After a reduction, what a user and a maintainer want next: workarounds that make the ORIGINAL compile,
and the crashing-shape boundary of the minimal case (and the original's shapes tried). One time budget
for both; every try goes through the reduction's oracle (warm, cached, counted)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from reducer.core.case import Case
from reducer.diagnosis.boundary import original_shapes, shape_boundary
from reducer.diagnosis.workarounds import Workaround, find_workarounds
from reducer.search.oracle import Oracle

DEFAULT_BUDGET = 240.0  # seconds, half for workarounds, the rest for the boundary


@dataclass(frozen=True)
class Diagnosis:
    workarounds: list[Workaround]
    tries: list[dict]
    boundary: list[dict]
    original_shapes: list[dict]
    compiles: int
    seconds: float

    def to_dict(self) -> dict:
        return {
            "workarounds": [w.to_dict() for w in self.workarounds],
            "workaround_tries": self.tries,
            "shape_boundary": self.boundary,
            "original_shapes": self.original_shapes,
            "compiles": self.compiles,
            "seconds": round(self.seconds, 2),
        }


def diagnose(minimal: Case, original: Case, oracle: Oracle, budget: float = DEFAULT_BUDGET) -> Diagnosis:
    start, compiles = time.monotonic(), oracle.counters.compiles
    workarounds, tries = find_workarounds(minimal, original, oracle, budget / 2)
    rest = budget - (time.monotonic() - start)
    boundary = [b.to_dict(minimal) for b in shape_boundary(minimal, oracle, rest * 2 / 3)]
    shapes = original_shapes(original, oracle, budget - (time.monotonic() - start))
    spent = oracle.counters.compiles - compiles
    return Diagnosis(workarounds, tries, boundary, shapes, spent, time.monotonic() - start)
