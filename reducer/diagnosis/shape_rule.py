"""The crashing-shape map of one dimension or constant summarised as a rule a user can bucket around:
"fails for every value tried", "fails for 5 and above", "fails unless a multiple of 8 (from 16 on)", or
the failing ranges; values that failed some other way are listed apart. Also the nearest value at or
above a given one that the rule says passes (what to pad to)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from reducer.search.oracle import OTHER_FAILURE, PASSES, SAME_FAILURE

MAX_PERIOD = 64
MIN_PERIODS = 2  # a period must be seen passing at least this many times to be believed


def ranges(values: list[int]) -> list[tuple[int, int]]:
    """Sorted values as runs of consecutive integers."""
    runs: list[tuple[int, int]] = []
    for v in sorted(values):
        if runs and v == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], v)
        else:
            runs.append((v, v))
    return runs


def ranges_text(values: list[int]) -> str:
    return ", ".join(f"{a}" if a == b else f"{a}..{b}" for a, b in ranges(values))


@dataclass(frozen=True)
class Rule:
    kind: str  # always | from | up_to | periodic | ranges
    text: str  # in words
    fails: tuple[int, ...]
    passes: tuple[int, ...]
    others: dict[int, str] = field(default_factory=dict)  # value -> the other failure
    k: int = 0  # the threshold (from, up_to) or the period (periodic)
    start: int = 0  # periodic: the first value the period holds from
    residues: tuple[int, ...] = ()  # periodic: the values mod k that fail

    def predicts_failure(self, value: int) -> bool | None:
        """What the rule says of `value` (None: it does not say)."""
        if self.kind == "from":
            return value >= self.k
        if self.kind == "up_to":
            return value <= self.k
        if self.kind == "periodic" and value >= self.start:
            return value % self.k in self.residues
        if value in self.fails or value in self.passes:
            return value in self.fails
        return None

    def padded(self, value: int) -> int | None:
        """The smallest value >= `value` the rule says passes, if it says one (and not `value` itself)."""
        if self.predicts_failure(value) is not True:
            return None
        if self.kind == "periodic":
            return next(v for v in range(value, value + self.k) if v % self.k not in self.residues)
        if self.kind == "up_to":
            return self.k + 1
        above = [v for v in self.passes if v > value]
        return min(above) if above else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "fails_for": [list(r) for r in ranges(list(self.fails))],
            "passes_for": [list(r) for r in ranges(list(self.passes))],
            "other_failures": {str(v): o for v, o in sorted(self.others.items())},
            **({"k": self.k} if self.k else {}),
            **({"from": self.start, "failing_residues": list(self.residues)} if self.kind == "periodic" else {}),
        }


def _periodic(fails: set[int], passes: set[int]) -> tuple[int, int, frozenset[int]] | None:
    """(period, start, failing residues) of the smallest period that explains the most values from its
    start on: every value's outcome follows from its residue, and every residue is seen twice."""
    seen = sorted(fails | passes)
    best: tuple[int, int, int, frozenset[int]] | None = None  # (-covered, period, start, residues)
    for k in range(2, MAX_PERIOD + 1):
        failing: set[int] = set()
        passing: set[int] = set()
        start = None
        for v in reversed(seen):  # the rule holds from `start` on: walk down while it does
            residue = v % k
            if residue in (passing if v in fails else failing):
                break
            (failing if v in fails else passing).add(residue)
            start = v
        if start is None or not passing or not failing or len(failing | passing) < k:
            continue
        region = [v for v in seen if v >= start]
        if len(region) < MIN_PERIODS * k:
            continue
        candidate = (-len(region), k, start, frozenset(failing))
        if best is None or candidate[:2] < best[:2]:
            best = candidate
    return (best[1], best[2], best[3]) if best else None


def _period_text(k: int, residues: frozenset[int]) -> str:
    if residues == frozenset(range(1, k)):
        return f"fails unless a multiple of {k}"
    if residues == frozenset({0}):
        return f"fails only for multiples of {k}"
    listed = ", ".join(map(str, sorted(residues)))
    return f"fails when the value mod {k} is {listed}"


def rule_of(tried: dict[int, str]) -> Rule:
    """The rule behind `tried` (value -> Oracle.outcome); invalid kernels say nothing."""
    rule = _rule(tried)
    if not rule.others:
        return rule
    return replace(rule, text=f"{rule.text}; another failure at {ranges_text(list(rule.others))}")


def _rule(tried: dict[int, str]) -> Rule:
    fails = {v for v, o in tried.items() if o == SAME_FAILURE}
    passes = {v for v, o in tried.items() if o == PASSES}
    others = {v: o for v, o in tried.items() if o.startswith(OTHER_FAILURE)}
    both = (tuple(sorted(fails)), tuple(sorted(passes)), others)
    low, high = min(fails | passes, default=0), max(fails | passes, default=0)
    if not passes:
        return Rule("always", f"fails for every value tried ({ranges_text(sorted(fails))})", *both)
    if fails and min(fails) > max(passes):
        return Rule("from", f"fails for {min(fails)} and above (tried up to {high})", *both, k=min(fails))
    if fails and max(fails) < min(passes):
        return Rule("up_to", f"fails for {max(fails)} and below (passes from {min(passes)})", *both, k=max(fails))
    period = _periodic(fails, passes)
    if period is not None:
        k, start, residues = period
        below = [v for v in fails if v < start]
        tail = f" from {start} on" if start > low else ""
        tail += f"; below {start} it fails for {ranges_text(below)}" if below else ""
        text = f"{_period_text(k, residues)}{tail} (tried {low}..{high})"
        return Rule("periodic", text, *both, k=k, start=start, residues=tuple(sorted(residues)))
    return Rule("ranges", f"fails for {ranges_text(sorted(fails))} (tried {low}..{high})", *both)
