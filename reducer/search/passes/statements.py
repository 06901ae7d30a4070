"""Delete statements at every block level of the kernel (ddmin per block, outer blocks first)."""

from __future__ import annotations

from collections.abc import Sequence

from reducer.core.case import Case
from reducer.search.passes.ast_edit import blocks, parse, render


class DeleteStatements:
    name = "statements"

    def groups(self, case: Case) -> int:
        return len(blocks(parse(case)))

    def units(self, case: Case, group: int) -> int:
        return len(blocks(parse(case))[group])

    def keep(self, case: Case, group: int, kept: Sequence[int]) -> Case | None:
        if not kept:
            return None  # an empty block is not Python; the parent statement goes at its own level
        func = parse(case)
        block = blocks(func)[group]
        block[:] = [block[i] for i in kept]
        return render(case, func)
