"""Delete statements at every block level of the kernel (ddmin per block, outer blocks first)."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from reducer.core.case import Case
from reducer.search.passes.ast_edit import blocks, parse, render
from reducer.search.passes.base import DeletionPass, code


class DeleteStatements(DeletionPass):
    name = "statements"

    def groups(self, case: Case) -> int:
        return len(blocks(parse(case)))

    def units(self, case: Case, group: int) -> list[str]:
        return [f"line {s.lineno}: {code(ast.unparse(s).splitlines()[0])}" for s in blocks(parse(case))[group]]

    def keep(self, case: Case, group: int, kept: Sequence[int]) -> Case | None:
        if not kept:
            return None  # an empty block is not Python; the parent statement goes at its own level
        func = parse(case)
        block = blocks(func)[group]
        block[:] = [block[i] for i in kept]
        return render(case, func)
