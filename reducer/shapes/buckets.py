"""Buckets: the fewest representative shapes that stand for every failing call of a shape list. A failing call
runs as a representative when that is its shapes padded up at the end of dims the padding check lets pad
(kernels/padding.py: no result within the unpadded outputs changes), every other dim equal. Representatives
are the list's own calls that compile (and compute right, where checked) on every target named, or, where
none covers a call, the call with one group of dims padded up to the next multiple of 8, 16, 32, 64 or power
of two, compiled and checked here on every target first: the smallest paddings first, at most MAX_GROWTH
times the call's elements, TRIES_PER_CALL per call and a budget per plan (compiles are the cost). A call
only a dim the kernel reduces over could cover gets a bucket marked "needs a mask", which a dispatch plan
does not route. Chosen greedily (most calls covered, then least padding), each call then runs as the
cheapest chosen bucket that covers it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from reducer.core.case import Case
from reducer.inputs.shape_list import ShapeLine, Shapes
from reducer.kernels.kinds import kind_of
from reducer.kernels.padding import Dim, PaddingEffect
from reducer.search.oracle import Oracle
from reducer.shapes.grid import COMPILES, FAILS, WRONG, Cell, cell_case, grid

ROUND_TO = (8, 16, 32, 64)
TRIES_PER_CALL = 6  # padded shapes tried for one failing call (per kind: free padding, then with a mask)
PADDED_BUDGET = 64  # padded shapes compiled for one plan: calls left uncovered then say so
MAX_GROWTH = 2.0  # a padded shape has at most this many times the call's input elements: past that, no way out


@dataclass(frozen=True)
class DimGroup:
    """Input dims equal in every call of the list (they pad together), and what padding them does."""

    dims: tuple[Dim, ...]
    label: str  # 'query[1]' or 'x[1], y[0]'
    effect: PaddingEffect

    def value(self, shapes: Shapes) -> int:
        i, axis = self.dims[0]
        return shapes[i][axis]

    def set(self, shapes: Shapes, value: int) -> Shapes:
        edited = [list(s) for s in shapes]
        for i, axis in self.dims:
            edited[i][axis] = value
        return tuple(tuple(s) for s in edited)


@dataclass
class Bucket:
    shapes: Shapes
    text: str
    from_list: bool  # one of the list's own calls; else made by padding and compiled here
    mask_needed: tuple[str, ...] = ()  # the dims it pads that the kernel reduces over or mixes
    covers: list[ShapeLine] = field(default_factory=list)
    cost: int = 0  # extra input elements over all the calls it covers

    def to_dict(self) -> dict[str, Any]:
        return {
            "shapes": [list(s) for s in self.shapes],
            "line": self.text,
            "from_list": self.from_list,
            "mask_needed": list(self.mask_needed),
            "covers": [line.text for line in self.covers],
            "padding_cost": self.cost,
        }


def elements(shapes: Shapes) -> int:
    return sum(math.prod(s) for s in shapes)


def text_of(shapes: Shapes) -> str:
    return " ".join("[" + ", ".join(map(str, s)) + "]" for s in shapes)


def dim_groups(case: Case, lines: list[ShapeLine], probe_shapes: Shapes) -> list[DimGroup]:
    """The dims that vary over the list, grouped by being equal in every call, with what padding each does
    (checked on the kernel at `probe_shapes`)."""
    names = kind_of(case).input_names(case)
    columns: dict[tuple[int, ...], list[Dim]] = {}
    for i, spec in enumerate(case.inputs):
        for axis in range(len(spec.shape)):
            column = tuple(line.shapes[i][axis] for line in lines)
            if len(set(column)) > 1:
                columns.setdefault(column, []).append((i, axis))
    probe = cell_case(case, probe_shapes, case.target)
    return [
        DimGroup(
            tuple(dims), ", ".join(f"{names[i]}[{a}]" for i, a in dims), kind_of(probe).padding_effect(probe, dims)
        )
        for dims in columns.values()
    ]


def _covers(bucket: Shapes, call: Shapes, groups: list[DimGroup], masked: bool) -> tuple[str, ...] | None:
    """The dims `bucket` pads for `call` that need a mask (empty: none), or None when it cannot stand for it."""
    if any(len(b) != len(c) for b, c in zip(bucket, call, strict=True)):
        return None
    grouped = {d for g in groups for d in g.dims}
    for i, (b, c) in enumerate(zip(bucket, call, strict=True)):
        if any(bv != cv for a, (bv, cv) in enumerate(zip(b, c, strict=True)) if (i, a) not in grouped):
            return None
    needs = []
    for g in groups:
        if g.value(bucket) < g.value(call):
            return None
        if g.value(bucket) > g.value(call) and not g.effect.safe:
            if not masked:
                return None
            needs.append(g.label)
    return tuple(needs)


def _targets_of(value: int) -> list[int]:
    """Values to pad `value` up to: the next multiples of ROUND_TO and the next power of two, smallest first."""
    found = {(value // k + 1) * k for k in ROUND_TO} | {1 << value.bit_length()}
    return sorted(v for v in found if v > value)


class _Verified:
    """Shapes known to compile (and compute right where checked) on every target named: the list's own calls
    the grid found so, and padded calls compiled here on demand (through the oracle: cached, counted)."""

    def __init__(
        self, case: Case, targets: list[str], oracle: Oracle, check: bool, cells: list[Cell], budget: int
    ) -> None:
        self.case, self.targets, self.oracle, self.check = case, targets, oracle, check
        by_line: dict[Shapes, list[Cell]] = {}
        for cell in cells:
            if cell.target in targets:
                by_line.setdefault(cell.line.shapes, []).append(cell)
        self.known = {s: all(c.verdict == COMPILES for c in found) for s, found in by_line.items()}
        self.compiled: list[Cell] = []
        self.budget = budget

    def first_passing(self, options: list[Shapes]) -> Shapes | None:
        """The first of `options` that passes on every target, trying `jobs` at a time, a target at a time (a
        shape that fails on one is not compiled on the next); None when none does or the budget is spent."""
        step = self.oracle.jobs
        for start in range(0, len(options), step):
            batch = [s for s in options[start : start + step] if self.known.get(s, True)]
            if self.budget < len(batch):
                return None
            self.budget -= len([s for s in batch if s not in self.known])
            alive = [s for s in batch if s not in self.known]
            for target in self.targets:
                lines = [ShapeLine("bucket", text_of(s), s) for s in alive]
                cells, _ = grid(self.case, lines, [target], self.oracle, self.check)
                self.compiled += cells
                for cell in cells:
                    if cell.verdict != COMPILES:
                        self.known[cell.line.shapes] = False
                alive = [s for s in alive if self.known.get(s, True)]
            for shapes in alive:
                self.known[shapes] = True
            passing = [s for s in batch if self.known.get(s)]
            if passing:
                return passing[0]
        return None


@dataclass(frozen=True)
class Found:
    """What the bucket search found: the buckets chosen, the failing calls none stands for (with why), the
    dims that vary with their padding effect, and the padded calls compiled to find the buckets."""

    chosen: list[Bucket]
    uncovered: list[tuple[ShapeLine, str]]
    groups: list[DimGroup]
    compiled: list[Cell]


def buckets(
    case: Case,
    lines: list[ShapeLine],
    cells: list[Cell],
    targets: list[str],
    oracle: Oracle,
    check: bool,
    budget: int = PADDED_BUDGET,
) -> Found:
    """The buckets of the failing calls among `cells` on `targets`, compiling at most `budget` padded shapes."""
    failing = _failing(lines, cells, targets)
    if not failing:
        return Found([], [], [], [])
    groups = dim_groups(case, lines, failing[0].shapes)
    verified = _Verified(case, targets, oracle, check, cells, budget)
    candidates: dict[Shapes, Bucket] = {
        line.shapes: Bucket(line.shapes, line.text, True) for line in lines if verified.known.get(line.shapes)
    }
    spent: set[Shapes] = set()
    for call in failing:
        for masked in (False, True):
            if any(_covers(b.shapes, call.shapes, groups, masked) is not None for b in candidates.values()):
                break
            made = _padded(call.shapes, groups, masked, verified)
            if made is not None:
                candidates[made] = Bucket(made, text_of(made), False)
                break
            if verified.budget <= 0:
                spent.add(call.shapes)
    chosen = _cover(failing, list(candidates.values()), groups)
    uncovered = [(call, _why_uncovered(call, spent, budget, groups, targets)) for call in failing
                 if not any(call in b.covers for b in chosen)]  # fmt: skip
    return Found(chosen, uncovered, groups, verified.compiled)


def _why_uncovered(call: ShapeLine, spent: set[Shapes], budget: int, groups: list[DimGroup], targets: list[str]) -> str:
    if call.shapes in spent:
        return f"the padding budget ({budget} shapes) was spent before a padded shape of it compiled"
    untold = [f"{g.label}: {g.effect.untold}" for g in groups if g.effect.untold]
    if untold and not any(g.effect.safe for g in groups):
        return f"no dim is known to pad freely ({'; '.join(untold)})"
    return f"no shape padded up to {MAX_GROWTH:g} times its elements compiles on {', '.join(targets)}"


def _failing(lines: list[ShapeLine], cells: list[Cell], targets: list[str]) -> list[ShapeLine]:
    bad = {c.line.shapes for c in cells if c.target in targets and c.verdict in (FAILS, WRONG)}
    seen: set[Shapes] = set()
    failing = []
    for line in lines:
        if line.shapes in bad and line.shapes not in seen:
            seen.add(line.shapes)
            failing.append(line)
    return failing


def _padded(call: Shapes, groups: list[DimGroup], masked: bool, verified: _Verified) -> Shapes | None:
    """The call with one group padded up that passes: the smallest padding first, at most TRIES_PER_CALL."""
    mine = [g for g in groups if g.effect.safe != masked]
    found = {g.set(call, value) for g in mine for value in _targets_of(g.value(call))}
    options = sorted((s for s in found if elements(s) <= MAX_GROWTH * elements(call)), key=elements)
    return verified.first_passing(options[:TRIES_PER_CALL])


def _cover(failing: list[ShapeLine], candidates: list[Bucket], groups: list[DimGroup]) -> list[Bucket]:
    """Greedy set cover, first by buckets that need no mask, then for the calls left by those that do: the
    candidate covering most calls still uncovered (then the least padding) until none covers more; each call
    then goes to the cheapest chosen bucket covering it, one that needs no mask first."""
    covering: dict[bool, dict[int, dict[Shapes, tuple[str, ...]]]] = {}  # masked -> candidate -> call -> mask dims
    for masked in (False, True):
        covering[masked] = {}
        for n, bucket in enumerate(candidates):
            found = {c.shapes: _covers(bucket.shapes, c.shapes, groups, masked) for c in failing}
            covering[masked][n] = {call: needs for call, needs in found.items() if needs is not None}
    uncovered = {call.shapes: call for call in failing}
    chosen: list[int] = []
    for masked in (False, True):
        mine = covering[masked]

        def gain(n: int, mine: dict[int, dict[Shapes, tuple[str, ...]]] = mine) -> tuple[int, int]:
            calls = mine[n].keys() & uncovered.keys()
            return len(calls), -sum(elements(candidates[n].shapes) - elements(call) for call in calls)

        while uncovered:
            best = max((n for n in mine if n not in chosen), key=gain, default=None)
            if best is None or gain(best)[0] == 0:
                break
            chosen.append(best)
            for call in mine[best].keys() & uncovered.keys():
                del uncovered[call]
    for call in failing:
        options = [n for n in chosen if call.shapes in covering[True][n]]
        if not options:
            continue
        n = min(options, key=lambda n: (bool(covering[True][n][call.shapes]), elements(candidates[n].shapes)))
        bucket = candidates[n]
        bucket.covers.append(call)
        bucket.cost += elements(bucket.shapes) - elements(call.shapes)
        bucket.mask_needed = tuple(sorted(set(bucket.mask_needed) | set(covering[True][n][call.shapes])))
    return [candidates[n] for n in chosen if candidates[n].covers]
