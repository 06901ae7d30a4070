"""The crashing-shape boundary: for each dimension of the minimal case, the range of values that still
fail the same way and the nearest values that do not (an upward doubling walk, then a bisection to the
exact edge); for the original case, the input shapes tried (each dimension group at 1 and halved) with
their outcomes. Time-boxed; each try is one compile (or a rejection without one)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from reducer.core.case import Case
from reducer.kernels.kinds import Dim, kind_of, linked_groups
from reducer.search.oracle import SAME_FAILURE, Oracle


def with_dims(case: Case, dims: list[Dim], value: int) -> Case:
    return kind_of(case).with_dims(case, dims, value)


UPPER_LIMIT = 4096  # the walk up stops here even when everything fails


@dataclass
class DimBoundary:
    dims: list[Dim]  # changed together (dims that must stay equal)
    value: int  # in the minimal case
    tried: dict[int, str] = field(default_factory=dict)  # value -> Oracle.outcome

    @property
    def failing(self) -> tuple[int, int]:
        """The contiguous range of tried values around `value` that fail the same way."""
        fails = {v for v, o in self.tried.items() if o == SAME_FAILURE} | {self.value}
        lo = hi = self.value
        ordered = sorted(self.tried)
        for v in reversed([v for v in ordered if v < self.value]):
            if v not in fails:
                break
            lo = v
        for v in [v for v in ordered if v > self.value]:
            if v not in fails:
                break
            hi = v
        return lo, hi

    def nearest_other(self) -> list[tuple[int, str]]:
        """The closest tried values outside the failing range, below and above, with their outcome."""
        lo, hi = self.failing
        below = [v for v in self.tried if v < lo]
        above = [v for v in self.tried if v > hi]
        return [(v, self.tried[v]) for v in ([max(below)] if below else []) + ([min(above)] if above else [])]

    def to_dict(self, case: Case) -> dict:
        lo, hi = self.failing
        return {
            "dims": label(case, self.dims),
            "value": self.value,
            "fails_for": [lo, hi],
            "nearest_not_failing": [{"value": v, "outcome": o} for v, o in self.nearest_other()],
            "tried": {str(v): o for v, o in sorted(self.tried.items())},
        }


def label(case: Case, dims: list[Dim]) -> str:
    """'a.shape[1] = b.shape[0]', named by the kernel's parameters (a graph's input tensor names)."""
    names = kind_of(case).input_names(case)
    return " = ".join(f"{names[i]}.shape[{axis}]" for i, axis in dims)


class _Prober:
    def __init__(self, oracle: Oracle, deadline: float) -> None:
        self.oracle, self.deadline = oracle, deadline

    def probe(self, case: Case, found: DimBoundary, value: int) -> str | None:
        if value in found.tried:
            return found.tried[value]
        if time.monotonic() > self.deadline:
            return None
        found.tried[value] = self.oracle.outcome(with_dims(case, found.dims, value))
        return found.tried[value]

    def edge(self, case: Case, found: DimBoundary, failing: int, other: int) -> None:
        """Bisect between a failing value and a non-failing one to the exact edge."""
        while abs(other - failing) > 1:
            middle = (failing + other) // 2
            outcome = self.probe(case, found, middle)
            if outcome is None:
                return
            failing, other = (middle, other) if outcome == SAME_FAILURE else (failing, middle)

    def walk(self, case: Case, found: DimBoundary) -> None:
        value, step = found.value, 1
        last_failing = value
        while value < UPPER_LIMIT:
            value = min(found.value + step if step < found.value else 2 * value, UPPER_LIMIT)
            step *= 2
            outcome = self.probe(case, found, value)
            if outcome is None:
                return
            if outcome != SAME_FAILURE:
                self.edge(case, found, last_failing, value)
                break
            last_failing = value
        if found.value > 1:
            outcome = self.probe(case, found, 1)
            if outcome is not None and outcome != SAME_FAILURE:
                self.edge(case, found, found.value, 1)


def _dim_groups(case: Case, oracle: Oracle) -> list[list[Dim]]:
    """Every dim alone, or with the dims of equal value when changing it alone is not a valid kernel."""
    groups: list[list[Dim]] = []
    for i, spec in enumerate(case.inputs):
        for axis, value in enumerate(spec.shape):
            if any((i, axis) in g for g in groups):
                continue
            alone = [(i, axis)]
            if oracle.verdict(with_dims(case, alone, value + 1)).signature is not None:
                groups.append(alone)
                continue
            same = [(j, a) for j, t in enumerate(case.inputs) for a, v in enumerate(t.shape) if v == value]
            groups.append(same)
    return groups


def shape_boundary(minimal: Case, oracle: Oracle, budget: float) -> list[DimBoundary]:
    """Per dimension (group) of the minimal case: what was tried and how it went."""
    prober = _Prober(oracle, time.monotonic() + budget)
    found = []
    for dims in _dim_groups(minimal, oracle):
        boundary = DimBoundary(dims, minimal.inputs[dims[0][0]].shape[dims[0][1]])
        prober.walk(minimal, boundary)
        if boundary.tried:
            found.append(boundary)
    return found


def original_shapes(original: Case, oracle: Oracle, budget: float) -> list[dict]:
    """Input shapes of the original tried with their outcome: each group of equal dims at 1 and halved."""
    deadline = time.monotonic() + budget
    linked = linked_groups(original)
    singles = [[(i, a)] for i, t in enumerate(original.inputs) for a, v in enumerate(t.shape) if v > 1]
    groups = linked + [g for g in singles if not any(g[0] in group for group in linked)]
    rows = [{"inputs": [list(t.shape) for t in original.inputs], "outcome": f"{SAME_FAILURE} (the original)"}]
    for dims in groups:
        value = original.inputs[dims[0][0]].shape[dims[0][1]]
        for new in sorted({1, value // 2} - {value}):
            if time.monotonic() > deadline:
                return rows
            case = with_dims(original, dims, new)
            rows.append({"inputs": [list(t.shape) for t in case.inputs], "outcome": oracle.outcome(case)})
    return rows
