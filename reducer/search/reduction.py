"""The search: one generic ddmin for every deletion pass, first-interesting-edit for transform passes,
and the fixpoint loop over the schedule. Every improvement is reported so the caller can checkpoint."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from itertools import islice

from reducer.core.case import Case
from reducer.search.oracle import Oracle
from reducer.search.passes import SCHEDULE, DeletionPass, Pass, TransformPass
from reducer.kernels.size import Size, size_of

Listener = Callable[[str, Case], None]
SUCCESS_GUESS = 0.5  # a transform pass whose candidates are accepted more often than this: compile ahead


def _chunks(items: list[int], parts: int) -> list[list[int]]:
    size, extra = divmod(len(items), parts)
    out, start = [], 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        out.append(items[start:end])
        start = end
    return [c for c in out if c]


class Reduction:
    """Minimise a Case against an oracle; `best` is always the smallest interesting case found so far."""

    def __init__(
        self,
        start: Case,
        oracle: Oracle,
        schedule: Sequence[Pass] = SCHEDULE,
        on_improve: Listener | None = None,
        on_pass: Listener | None = None,
    ) -> None:
        self.best = start
        self.best_size: Size = size_of(start)
        self.oracle = oracle
        self.schedule = schedule
        self.on_improve = on_improve or (lambda name, case: None)
        self.on_pass = on_pass or (lambda name, case: None)
        self.rounds = 0
        # per pass: candidates tried and accepted, for guessing whether the next one will be accepted
        self._tried: Counter[str] = Counter()
        self._accepted: Counter[str] = Counter()
        self._round_accepted: Counter[str] = Counter()  # edits each pass had accepted in this round

    def _accept(self, name: str, case: Case) -> None:
        self._round_accepted[name] += 1
        self.best = case
        self.best_size = size_of(case)
        self.on_improve(name, case)

    def _first(self, candidates: Iterator[Case], successor: Callable[[Case], Case | None] | None = None) -> Case | None:
        """The first interesting candidate; the oracle may test several at once (see first_interesting)."""
        return self.oracle.first_interesting(candidates, successor)

    def _ddmin(self, p: DeletionPass, group: int) -> bool:
        base = self.best
        kept = list(range(p.units(base, group)))
        parts, changed = 1, False
        while kept:
            chunks = _chunks(kept, parts)
            subsets = [[u for u in kept if u not in chunk] for chunk in chunks]
            cases = [p.keep(base, group, s) for s in subsets]
            pairs = [
                (s, c) for s, c in zip(subsets, cases, strict=True) if c is not None and size_of(c) < self.best_size
            ]
            found = self._first(c for _, c in pairs)
            if found is not None:
                kept = next(s for s, c in pairs if c is found)
                self._accept(p.name, found)
                changed = True
                parts = max(parts - 1, 1)
                continue
            if parts >= len(kept):
                break
            parts = min(parts * 2, len(kept))
        return changed

    def _run_deletion(self, p: DeletionPass) -> bool:
        changed, group = False, 0
        while group < p.groups(self.best):
            changed |= self._ddmin(p, group)
            group += 1
        return changed

    def _run_transform(self, p: TransformPass) -> bool:
        """Take the first interesting edit, then continue from its position in the new case's edit list:
        the edits before it were just refused, and trying them again on a slightly different case costs
        compiles that rarely pay (the next round of the fixpoint retries them all)."""
        changed, position = False, 0
        positions: dict[int, int] = {}

        def smaller_from(base: Case, start: int, tried: bool = True) -> Iterator[Case]:
            limit = size_of(base)
            for i, case in enumerate(islice(p.candidates(base), start, None), start=start):
                if size_of(case) < limit:
                    positions[id(case)] = i
                    self._tried[p.name] += tried
                    yield case

        def successor(case: Case) -> Case | None:
            """The first candidate the pass would try next if `case` is accepted."""
            return next(smaller_from(case, positions[id(case)], tried=False), None)

        while True:
            tried, accepted = self._tried[p.name], self._accepted[p.name]
            guess = successor if (accepted + 1) / (tried + 2) > SUCCESS_GUESS else None
            found = self._first(smaller_from(self.best, position), guess)
            if found is None:
                return changed
            position = positions[id(found)]
            self._accepted[p.name] += 1
            self._accept(p.name, found)
            changed = True

    def run(self) -> Case:
        """Rounds over the schedule until one changes nothing. After the first round, the passes that had
        more edits accepted in the previous round go first (ties keep the schedule's order): a pass that
        still bites is where the next round's progress is. Counts of accepted edits do not depend on
        `-j`, so neither does the order."""
        progress = True
        order = list(self.schedule)
        while progress:
            progress = False
            self.rounds += 1
            if self.rounds > 1:
                order = sorted(self.schedule, key=lambda p: -self._round_accepted[p.name])
            self._round_accepted.clear()
            for p in order:
                self.on_pass(p.name, self.best)
                if hasattr(p, "keep"):
                    progress |= self._run_deletion(p)  # type: ignore[arg-type]
                else:
                    progress |= self._run_transform(p)  # type: ignore[arg-type]
        return self.best
