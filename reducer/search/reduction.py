"""The search: one generic ddmin for every deletion pass, first-interesting-edit for transform passes,
a boundary search for each integer of a number pass, and the fixpoint loop over the schedule. Every
accepted edit is logged and reported, so the caller can checkpoint and a maintainer can read how the case
shrank. The search is given a Judge (the oracle, or any predicate on Cases through `Predicate`) and knows
no compiler."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import islice
from typing import Protocol

from reducer.core.case import Case
from reducer.kernels.kinds import kind_of, size_of
from reducer.kernels.size import Size
from reducer.search.passes import SCHEDULE, DeletionPass, Edit, Number, NumberPass, Pass, TransformPass

Listener = Callable[[str, Case], None]
SUCCESS_GUESS = 0.5  # a transform pass whose candidates are accepted more often than this: compile ahead


class Judge(Protocol):
    def first_interesting(
        self, edits: Iterable[Edit], successor: Callable[[Edit], Edit | None] | None = None
    ) -> Edit | None:
        """The first edit whose case is interesting, as a sequential scan would find it; `successor(edit)` is
        the edit the search would ask next if `edit` is accepted (a judge may start on it early)."""
        ...


class Predicate:
    """A Judge from a plain function on Cases, asked one edit at a time."""

    def __init__(self, interesting: Callable[[Case], bool]) -> None:
        self.interesting = interesting

    def first_interesting(
        self, edits: Iterable[Edit], successor: Callable[[Edit], Edit | None] | None = None
    ) -> Edit | None:
        return next((e for e in edits if self.interesting(e.after)), None)


def _chunks(items: list[int], parts: int) -> list[list[int]]:
    size, extra = divmod(len(items), parts)
    out, start = [], 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        out.append(items[start:end])
        start = end
    return [c for c in out if c]


class Reduction:
    """Minimise a Case against a judge; `best` is always the smallest interesting case found so far and
    `log` the accepted edits that led there, in order."""

    def __init__(
        self,
        start: Case,
        judge: Judge,
        schedule: Sequence[Pass] = SCHEDULE,
        on_improve: Listener | None = None,
        on_pass: Listener | None = None,
        log: Sequence[dict[str, str]] = (),
    ) -> None:
        self.best = start
        self.best_size: Size = size_of(start)
        self.judge = judge
        self.schedule = schedule
        self.on_improve = on_improve or (lambda name, case: None)
        self.on_pass = on_pass or (lambda name, case: None)
        self.rounds = 0
        self.log: list[dict[str, str]] = list(log)  # a resumed search goes on from the checkpoint's log
        # per pass: candidates tried and accepted, for guessing whether the next one will be accepted
        self._tried: Counter[str] = Counter()
        self._accepted: Counter[str] = Counter()
        self._round_accepted: Counter[str] = Counter()  # edits each pass had accepted in this round

    def _accept(self, name: str, edit: Edit) -> None:
        self._round_accepted[name] += 1
        self.best = edit.after
        self.best_size = size_of(edit.after)
        size = f"{kind_of(edit.after).amount(self.best_size)}, volume {self.best_size.volume}"
        self.log.append({"pass": name, "edit": edit.description, "size": size})
        self.on_improve(name, edit.after)

    def _ddmin(self, p: DeletionPass, group: int) -> bool:
        base = self.best
        names = p.units(base, group)
        kept = list(range(len(names)))
        parts, changed = 1, False
        while kept:
            chunks = _chunks(kept, parts)
            subsets = [[u for u in kept if u not in chunk] for chunk in chunks]
            edits = []
            for index, (chunk, subset) in enumerate(zip(chunks, subsets, strict=True)):
                case = p.keep(base, group, subset)
                if case is not None and size_of(case) < self.best_size:
                    edits.append(Edit("delete " + ", ".join(names[u] for u in chunk), case, index))
            found = self.judge.first_interesting(edits)
            if found is not None:
                kept = subsets[found.position]
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

        def smaller_from(base: Case, start: int, tried: bool = True) -> Iterator[Edit]:
            limit = size_of(base)
            for i, edit in enumerate(islice(p.edits(base), start, None), start=start):
                if size_of(edit.after) < limit:
                    self._tried[p.name] += tried
                    yield replace(edit, position=i)

        def successor(edit: Edit) -> Edit | None:
            return next(smaller_from(edit.after, edit.position, tried=False), None)

        while True:
            tried, accepted = self._tried[p.name], self._accepted[p.name]
            guess = successor if (accepted + 1) / (tried + 2) > SUCCESS_GUESS else None
            found = self.judge.first_interesting(smaller_from(self.best, position), guess)
            if found is None:
                return changed
            position = found.position
            self._accepted[p.name] += 1
            self._accept(p.name, found)
            changed = True

    def _run_lateral(self, p: TransformPass) -> bool:
        """A lookahead of one step: an edit of `p` no bigger than the best case, then an edit of a pass it
        enables that is strictly smaller than the best. Only the second case is judged (the intermediate
        one is never compiled), so the best case still only ever shrinks."""
        followers = [q for q in self.schedule if isinstance(q, TransformPass) and q.name in p.enables]

        def pairs() -> Iterator[Edit]:
            for step in p.edits(self.best):
                if size_of(step.after) > self.best_size:
                    continue
                for q in followers:
                    for edit in q.edits(step.after):
                        if size_of(edit.after) < self.best_size:
                            self._tried[p.name] += 1
                            yield Edit(f"{step.description}, then {edit.description}", edit.after)

        found = self.judge.first_interesting(pairs())
        if found is None:
            return False
        self._accepted[p.name] += 1
        self._accept(p.name, found)
        return True

    def _run_numbers(self, p: NumberPass) -> bool:
        """Each integer in turn, found again by its label in the case each lowering leaves."""
        changed, done = False, set()
        while number := next((n for n in p.numbers(self.best) if n.label not in done), None):
            changed |= self._lower(p.name, number)
            done.add(number.label)
        return changed

    def _lower(self, name: str, number: Number) -> bool:
        """How low `number` goes. First the leaps a person tries (1, 2, a quarter, a half, three quarters of
        it), then, from the lowest value that kept the bug, down by 1, 2, 4, ... while it still does, then a
        bisection between the last value that kept it and the highest refused (Hypothesis's find_integer): a
        floor just below the value costs a logarithmic number of compiles, not one compile or more per unit.
        Every value that keeps the bug is accepted as it is found, so the best case only ever shrinks."""
        good = number.value

        def first(values: list[int]) -> int | None:
            candidates = [(v, case) for v in values if (case := number.at(v)) is not None]
            edits = [
                Edit(f"{number.label}: {good} -> {v}", case, position)
                for position, (v, case) in enumerate(candidates)
                if size_of(case) < self.best_size
            ]
            found = self.judge.first_interesting(edits)
            if found is None:
                return None
            self._accept(name, found)
            return candidates[found.position][0]

        leaps = sorted({v for v in (1, 2, good // 4, good // 2, 3 * good // 4) if 1 <= v < good})
        found = first(leaps)
        refused = max((v for v in leaps if found is None or v < found), default=0)
        good = found or good
        top, step = good, 1
        while top - step > refused:
            if first([top - step]) is None:
                refused = top - step
                break
            good, step = top - step, step * 2
        while good - refused > 1:
            middle = (good + refused) // 2
            if first([middle]) is None:
                refused = middle
            else:
                good = middle
        return good < number.value

    def _run(self, p: Pass) -> bool:
        if isinstance(p, DeletionPass):
            return self._run_deletion(p)
        if isinstance(p, NumberPass):
            return self._run_numbers(p)
        return self._run_transform(p)

    def run(self) -> Case:
        """Rounds over the schedule until one changes nothing. After the first round, the passes that had
        more edits accepted in the previous round go first (ties keep the schedule's order): a pass that
        still bites is where the next round's progress is. Counts of accepted edits do not depend on
        `-j`, so neither does the order. Lateral passes run only when a round changed nothing: the
        lookahead is paid once per local minimum, and a success starts a new round."""
        progress = True
        lateral = [p for p in self.schedule if isinstance(p, TransformPass) and p.enables]
        passes = [p for p in self.schedule if p not in lateral]
        order = list(passes)
        while progress:
            progress = False
            self.rounds += 1
            if self.rounds > 1:
                order = sorted(passes, key=lambda p: (not getattr(p, "leads", False), -self._round_accepted[p.name]))
            self._round_accepted.clear()
            for p in order:
                self.on_pass(p.name, self.best)
                progress |= self._run(p)
            for p in lateral if not progress else []:
                self.on_pass(p.name, self.best)
                if self._run_lateral(p):
                    progress = True
                    break
        return self.best
