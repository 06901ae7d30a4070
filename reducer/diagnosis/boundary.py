"""The crashing-shape map: every knob of the minimal case (an input dim, or a group of loop-extent / shape constants;
knobs.py) tried at every value from 1 to 129 (128 and its neighbours included), then at each power of two from 256
with its neighbours up to the first at or above the original's largest dim, each summarised as a rule
(shape_rule.py). The rules become bucketing workarounds for the ORIGINAL (pad a dim to the nearest value its rule
says passes; listed only when the original then passes), and the original's input shapes are tried (each dim group
at 1 and halved). Every other failure met on the way is kept with its case: it is another bug. Time-boxed; the
probes run `jobs` at a time through the reduction's oracle, coarse values of every knob before the fine ones."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from reducer.compile.identity import Signature, why_unplaced
from reducer.core.case import Case
from reducer.core.errors import InvalidKernel
from reducer.diagnosis.knobs import Knob, knobs
from reducer.diagnosis.shape_rule import Rule, rule_of
from reducer.diagnosis.workarounds import Workaround, results_under, wrong_words
from reducer.kernels.kinds import Dim, kind_of, linked_groups, outputs_of
from reducer.search.oracle import OTHER_FAILURE, PASSES, SAME_FAILURE, Oracle

MAP_UP_TO = 128  # every value up to here
COARSE_UP_TO = 16  # the first round: every value up to here and the powers of two


def valid(case: Case) -> bool:
    """A kernel the oracle would compile (no compile needed to know)."""
    try:
        outputs_of(case)
    except InvalidKernel:
        return False
    return True


@dataclass
class KnobMap:
    knob: Knob
    tried: dict[int, str] = field(default_factory=dict)  # value -> Oracle.outcome

    @property
    def rule(self) -> Rule:
        return rule_of(self.tried)

    @property
    def failing(self) -> tuple[int, int]:
        """The contiguous range of tried values around the minimal value that fail the same way."""
        value = self.knob.value
        fails = {v for v, o in self.tried.items() if o == SAME_FAILURE} | {value}
        lo = hi = value
        while lo - 1 in fails:
            lo -= 1
        while hi + 1 in fails:
            hi += 1
        return lo, hi

    def nearest_other(self) -> list[tuple[int, str]]:
        """The closest tried values outside the failing range, below and above, with their outcome."""
        lo, hi = self.failing
        below = [v for v in self.tried if v < lo]
        above = [v for v in self.tried if v > hi]
        return [(v, self.tried[v]) for v in ([max(below)] if below else []) + ([min(above)] if above else [])]

    def to_dict(self, case: Case) -> dict[str, Any]:
        lo, hi = self.failing
        return {
            "dims": self.knob.label(case),
            "value": self.knob.value,
            "rule": self.rule.to_dict(),
            "fails_for": [lo, hi],
            "nearest_not_failing": [{"value": v, "outcome": o} for v, o in self.nearest_other()],
            "tried": {str(v): o for v, o in sorted(self.tried.items())},
        }


@dataclass(frozen=True)
class OtherBug:
    """A failure other than the reduced one, met while mapping: its signature and the case that shows it."""

    signature: Signature
    case: Case
    found: str  # 'x.shape[0] = 15'


def _values(value: int, largest: int, coarse: bool) -> list[int]:
    """The coarse round: the minimal value, 1..16, and each power of two from 32 to the first at or above
    the original's largest dim, with its neighbours; the fine round: 17..128."""
    if not coarse:
        return list(range(COARSE_UP_TO + 1, MAP_UP_TO + 1))
    values = {value, *range(1, COARSE_UP_TO + 1)}
    power = 2 * COARSE_UP_TO
    while power // 2 < max(largest, MAP_UP_TO):
        values |= {power - 1, power, power + 1}
        power *= 2
    return sorted(values)


def shape_map(minimal: Case, original: Case, oracle: Oracle, budget: float, others: OtherBugs) -> list[KnobMap]:
    """Every knob of the minimal case mapped (coarse values of all knobs first, then the rest); the other
    failures met go to `others` (per knob, the smallest value first)."""
    deadline = time.monotonic() + budget
    largest = max((d for t in original.inputs for d in t.shape), default=1)
    maps = [KnobMap(k) for k in knobs(minimal, valid)]
    for coarse in (True, False):
        for found in maps:
            values = [v for v in _values(found.knob.value, largest, coarse) if v not in found.tried]
            cases = [found.knob.apply(minimal, v) for v in values]
            for value, outcome in zip(values, oracle.outcomes(cases, deadline), strict=True):
                if outcome is not None:
                    found.tried[value] = outcome
    for found in maps:
        for value, outcome in sorted(found.tried.items()):
            others.note(found.knob.apply(minimal, value), outcome, f"{found.knob.label(minimal)} = {value}")
    return maps


class OtherBugs:
    """Failures other than the reduced one met while diagnosing, one case per signature (the first met)."""

    def __init__(self, oracle: Oracle) -> None:
        self.oracle = oracle
        self.found: dict[str, OtherBug] = {}

    def note(self, case: Case, outcome: str, where: str) -> None:
        if not outcome.startswith(OTHER_FAILURE):
            return
        signature = self.oracle.verdict(case).signature  # known: no compile
        # A crash whose place was not read could be any other: kept, it would stand for all of them.
        if signature is not None and not why_unplaced(signature) and signature.key() not in self.found:
            self.found[signature.key()] = OtherBug(signature, case, where)


def _original_dims(minimal: Case, original: Case, knob: Knob) -> list[Dim]:
    """The original's dims a knob of the minimal case stands for: the same parameter's same axis."""
    names = kind_of(minimal).input_names(minimal)
    theirs = kind_of(original).input_names(original)
    found = []
    for i, axis in knob.dims:
        if names[i] in theirs:
            j = theirs.index(names[i])
            if len(original.inputs[j].shape) == len(minimal.inputs[i].shape):
                found.append((j, axis))
    return found


def _padded(original: Case, dims: list[Dim], value: int) -> Case:
    """The original with `dims` set to `value`, with the dims of equal value when that alone is not valid."""
    kind = kind_of(original)
    case = kind.with_dims(original, dims, value)
    if valid(case):
        return case
    old = original.inputs[dims[0][0]].shape[dims[0][1]]
    same = [(i, a) for i, t in enumerate(original.inputs) for a, d in enumerate(t.shape) if d == old]
    return kind.with_dims(original, same, value)


def bucketing(
    minimal: Case, original: Case, maps: list[KnobMap], oracle: Oracle, budget: float, others: OtherBugs
) -> tuple[list[Workaround], list[dict[str, Any]]]:
    """Pad each dim of the original whose knob's rule says it fails to the nearest value the rule says
    passes; (the paddings under which the original passes, and computes right where that can be checked here,
    every padding tried with its outcome)."""
    deadline = time.monotonic() + budget
    verified: list[Workaround] = []
    tries: list[dict[str, Any]] = []
    for found in maps:
        rule = found.rule
        if rule.kind == "always":
            continue
        dims = _original_dims(minimal, original, found.knob) if found.knob.dims else []
        if not dims:  # a constant: the original's dims the rule says fail
            dims = [(i, a) for i, t in enumerate(original.inputs) for a, d in enumerate(t.shape) if rule.padded(d)]
        for dim in dims:
            value = original.inputs[dim[0]].shape[dim[1]]
            target = rule.padded(value)
            if target is None or time.monotonic() > deadline:
                continue
            case = _padded(original, [dim], target)
            name = f"pad {kind_of(original).input_names(original)[dim[0]]}.shape[{dim[1]}] from {value} to {target}"
            outcome = oracle.outcome(case)
            others.note(case, outcome, f"the original, {name}")
            tries.append({"name": name, "rule": f"{found.knob.label(minimal)}: {rule.text}", "original": outcome})
            if outcome != PASSES:
                continue
            results = results_under(case, oracle)
            if results.startswith(OTHER_FAILURE):
                tries[-1]["original"] = wrong_words(results)
                continue
            why = f"bucketing: the minimal case's `{found.knob.label(minimal)}` {rule.text}"
            verified.append(Workaround(name, why, case.attrs, case.inputs, results))
    return verified, tries


def original_shapes(original: Case, oracle: Oracle, budget: float, others: OtherBugs) -> list[dict]:
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
            case = kind_of(original).with_dims(original, dims, new)
            shapes = [list(t.shape) for t in case.inputs]
            rows.append({"inputs": shapes, "outcome": oracle.outcome(case)})
            others.note(case, rows[-1]["outcome"], f"the original with inputs {shapes}")
    return rows
