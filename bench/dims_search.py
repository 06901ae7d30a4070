"""Compiles per dims pass: the search's dims passes on a Hybrid DSL kernel of one input, judged by a predicate
that keeps "the bug" only for some dim values (the shapes held-out kernels showed: a floor close to the
original value, a bug only at multiples of a tile, a floor far below it). Each judged candidate stands for one
compile; the script prints, per scenario, the candidates judged, the value reached and the smallest value that
still keeps the bug (what an exhaustive scan would find).

Usage: python bench/dims_search.py
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reducer.core.case import Case, TensorSpec
from reducer.search.passes import ShrinkDims, ShrinkLinkedDims
from reducer.search.reduction import Predicate, Reduction

KERNEL = """def k(a, b):
    out = output_tensor(a.shape, a.dtype)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] + b[i, j]
    return out
"""


@dataclass(frozen=True)
class Scenario:
    name: str
    shape: tuple[int, int]
    keeps: Callable[[int, int], bool]  # does the kernel with these two dims still fail the same way?


SCENARIOS = [
    Scenario("floor just below the value (384 -> 360)", (384, 8), lambda m, n: m >= 360),
    Scenario("floor at 3/4 + 1 (384 -> 289)", (384, 8), lambda m, n: m >= 289),
    Scenario("multiples of 32 from 1024, floor 200", (1024, 8), lambda m, n: m % 32 == 0 and m >= 200),
    Scenario("two dims, floors 300 and 50", (384, 64), lambda m, n: m >= 300 and n >= 50),
    Scenario("any value (to 1)", (384, 64), lambda m, n: True),
    Scenario("product >= 20000", (512, 96), lambda m, n: m * n >= 20000),
]


def run(scenario: Scenario) -> tuple[int, tuple[int, ...]]:
    calls = 0

    def keeps(case: Case) -> bool:
        nonlocal calls
        calls += 1
        m, n = case.inputs[0].shape
        return case.inputs[1].shape == case.inputs[0].shape and scenario.keeps(m, n)

    spec = TensorSpec(scenario.shape, "float32")
    start = Case("bench", KERNEL, "k", (spec, spec))
    best = Reduction(start, Predicate(keeps), schedule=[ShrinkLinkedDims(), ShrinkDims()]).run()
    return calls, best.inputs[0].shape


def main() -> None:
    print(f"{'scenario':45} {'compiles':>8}  reached")
    for scenario in SCENARIOS:
        calls, shape = run(scenario)
        print(f"{scenario.name:45} {calls:8}  {shape}")


if __name__ == "__main__":
    main()
