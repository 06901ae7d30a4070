"""Which targets fail: the minimal case and the original compiled once for every target this machine has an
AKG build for without installing anything (cpu; the GPU pipeline of the wheel's GPU build; the Ascend
pipeline when its toolchain is here), so a report can say "fails on aicore only". A wrong result is tried
only where its check can run the kernel. Each compile goes through
the reduction's oracle: "fails the same way" means the same bug as the reduced one."""

from __future__ import annotations

import time
from dataclasses import dataclass

from reducer.core.case import Case
from reducer.core.targets import NAMES
from reducer.kernels.kinds import kind_of
from reducer.search.oracle import PASSES, SAME_FAILURE, Oracle
from reducer.toolchain.launch import compiles_here

NOT_TRIED = "not tried: time budget spent"


@dataclass(frozen=True)
class TargetRun:
    target: str
    minimal: str  # an Oracle outcome: SAME_FAILURE, PASSES, "other failure: ...", or NOT_TRIED
    original: str

    def to_dict(self) -> dict[str, str]:
        return {"target": self.target, "minimal": self.minimal, "original": self.original}


def on_targets(minimal: Case, original: Case, oracle: Oracle, budget: float) -> list[TargetRun]:
    """The minimal case and the original on each target this machine compiles, the reduced one first."""
    deadline = time.monotonic() + budget
    runs = []
    for target in sorted(NAMES, key=lambda t: t != minimal.target):
        small = kind_of(minimal).on_target(minimal, target)
        if not compiles_here(small) or (small.mismatch and kind_of(small).uncheckable(small)):
            continue  # no build here, or a wrong result that would have to run on a device this machine lacks
        big = kind_of(original).on_target(original, target)
        small_outcome, big_outcome = (
            oracle.outcomes([small, big], deadline) if target != minimal.target else (SAME_FAILURE, SAME_FAILURE)
        )
        runs.append(TargetRun(target, small_outcome or NOT_TRIED, big_outcome or NOT_TRIED))
    return runs


def summary(runs: list[TargetRun]) -> str:
    """'fails on aicore only', 'fails on cpu and aicore', ...: where the minimal case fails the same way."""
    failing = [r.target for r in runs if r.minimal == SAME_FAILURE]
    tried = [r for r in runs if r.minimal != NOT_TRIED]
    if len(tried) < 2:
        return ""
    if len(failing) == 1:
        return f"fails on {failing[0]} only"
    if len(failing) == len(tried):
        return "fails the same way on every target tried"
    passing = [r.target for r in tried if r.minimal == PASSES]
    also = f"; passes on {' and '.join(passing)}" if passing else ""
    return f"fails the same way on {' and '.join(failing)}{also}"
