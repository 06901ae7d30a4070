"""Every call of a shape list on every target: the kernel at each line's shapes compiled through a reduction's
oracle (the same sandbox, warm workers, persistent cache and -j), its signature turned into a verdict by the
identity every other part of the tool uses, and, where the kernel's results can be checked here (a kernel
that runs on this machine's CPU, with a reference), what it computes checked too."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from reducer.compile.identity import Kind, Signature, why_unplaced
from reducer.core.case import Case, Expectation, Mismatch
from reducer.core.targets import TARGETS
from reducer.inputs.shape_list import ShapeLine
from reducer.kernels.kinds import kind_of, results_unchecked, with_shapes
from reducer.search.oracle import Oracle

COMPILES, FAILS, WRONG, INVALID, NO_VERDICT = "compiles", "fails", "wrong", "invalid", "no verdict"
CHUNK = 8  # calls handed to the oracle at once, per job: the progress bar moves between chunks


def compiled_as_far_as(case: Case) -> Expectation:
    """What the grid's oracle is told to expect, which decides how far each call compiles: as far as the case's
    own failure needs (nvcc, for an invalid-cuda case on a machine with it), else up to the code generator (a
    cuda call then "compiles up to nvcc (not run)": AKG's passes decide every other failure)."""
    needs = case.expect.kind if case.expect and case.expect.kind in set(Kind) else ""
    return Expectation(needs if needs and Kind(needs).needs_codegen else str(Kind.ERROR))


@dataclass(frozen=True)
class Cell:
    """One line on one target: its verdict, the bug's id when it fails or computes wrong, and in words what
    was found (the failure, why it is invalid, what the results check said). A line compiles as far as its
    compile ran: `reach` says where it stopped short of the target's code generator ("up to nvcc (not run)")."""

    line: ShapeLine
    target: str
    verdict: str  # COMPILES | FAILS | WRONG | INVALID | NO_VERDICT
    bug: str | None = None
    signature: Signature | None = None
    said: str = ""  # the failure in one line, why invalid, or why there is no verdict
    checked: str = ""  # for a line that compiles: what its results check said ('' when none could run)
    reach: str = ""  # for a line that compiles: how far, when its compile stopped before the code generator

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line.text,
            "where": self.line.where,
            "target": self.target,
            "verdict": self.verdict,
            "bug": self.bug,
            **({"said": self.said} if self.said else {}),
            **({"checked": self.checked} if self.checked else {}),
            **({"reach": self.reach} if self.reach else {}),
        }


def cell_case(case: Case, shapes: tuple[tuple[int, ...], ...], target: str) -> Case:
    """The kernel at `shapes` for `target`."""
    return kind_of(case).on_target(with_shapes(case, list(shapes)), target)


def _compiled(line: ShapeLine, target: str, signature: Signature | None, reason: str) -> Cell:
    """The cell of one compile (or results check)."""
    if signature is None:
        return Cell(line, target, INVALID, said=reason)
    if signature.kind is Kind.ENVIRONMENT:
        said = f"this machine cannot compile for {target}: {signature.raw or signature.message}"
        return Cell(line, target, NO_VERDICT, said=said)
    if signature.kind is Kind.HARNESS:
        said = f"the results check failed, not AKG: {signature.message}: {signature.raw}"
        return Cell(line, target, NO_VERDICT, said=said)
    if signature.failed:
        verdict = WRONG if signature.kind is Kind.MISMATCH else FAILS
        if unread := why_unplaced(signature):  # no id: it would pass for every other crash of its signal
            return Cell(line, target, verdict, signature=signature, said=f"{signature.one_line()}; {unread}")
        return Cell(line, target, verdict, signature.bug_id(target), signature, signature.one_line())
    reach = TARGETS[target].stopped_reach if signature.kind is Kind.CODEGEN else ""
    return Cell(line, target, COMPILES, signature=signature, reach=reach)


def _checked(compiled: Cell, signature: Signature | None, reason: str) -> Cell:
    """The cell of a line that compiles, after its results check."""
    if signature is None:
        return replace(compiled, checked=f"not checked: {reason}")
    if signature.kind is Kind.NONE:
        return replace(compiled, checked=f"right: {signature.raw}".rstrip(": "))
    if signature.kind is Kind.HARNESS:
        return replace(
            compiled, checked=f"not checked: the check failed, not AKG: {signature.message}: {signature.raw}"
        )
    if not signature.kind.is_verdict:
        return replace(compiled, checked=f"not checked: {signature.raw}")
    return _compiled(compiled.line, compiled.target, signature, "")


def grid(
    case: Case,
    lines: list[ShapeLine],
    targets: list[str],
    oracle: Oracle,
    check: bool = True,
    on_done: Callable[[int], None] = lambda n: None,
) -> tuple[list[Cell], dict[str, float]]:
    """The cells of every line on every target, target by target in order of `targets`, and the seconds each
    target took; `on_done(n)` after each n calls decided. With `check`, a line that compiles is also run and
    checked where it can be."""
    cells, seconds = [], {}
    for target in targets:
        start = time.monotonic()
        cells += _on_target(case, lines, target, oracle, check, on_done)
        seconds[target] = round(time.monotonic() - start, 1)
    return cells, seconds


def _decided(oracle: Oracle, cases: list[Case]) -> Iterable[tuple[Signature | None, str]]:
    oracle.outcomes(cases, float("inf"))
    for c in cases:
        verdict = oracle.verdict(c)  # known now: no compile
        yield verdict.signature, verdict.reason


def _on_target(
    case: Case, lines: list[ShapeLine], target: str, oracle: Oracle, check: bool, on_done: Callable[[int], None]
) -> list[Cell]:
    cells: list[Cell] = []
    step = CHUNK * oracle.jobs
    for start in range(0, len(lines), step):
        chunk = lines[start : start + step]
        cases = [cell_case(case, line.shapes, target) for line in chunk]
        compiled = [
            _compiled(line, target, sig, reason)
            for line, (sig, reason) in zip(chunk, _decided(oracle, cases), strict=True)
        ]
        runs = [
            (i, c.with_(mismatch=Mismatch()))
            for i, (c, cell) in enumerate(zip(cases, compiled, strict=True))
            if check and cell.verdict == COMPILES and not results_unchecked(c)
        ]
        for (i, _), (sig, reason) in zip(runs, _decided(oracle, [c for _, c in runs]), strict=True):
            compiled[i] = _checked(compiled[i], sig, reason)
        for i, (c, cell) in enumerate(zip(cases, compiled, strict=True)):
            if check and cell.verdict == COMPILES and not cell.checked:
                compiled[i] = replace(cell, checked=f"not checked: {results_unchecked(c)}")
        cells += compiled
        on_done(len(chunk))
    return cells
