"""Passes over the kernel's fresh tensors: an `allocate`d accumulator replaced by the output tensor of the
same shape it feeds, so the kernel computes into its output instead of copying a scratch buffer out."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from reducer.core.case import Case
from reducer.search.passes.ast_edit import parse, render
from reducer.search.passes.base import Edit, TransformPass


def _fresh_tensors(func: ast.FunctionDef, call: str) -> list[tuple[str, ast.Assign]]:
    """(name, statement) of every top-level `name = call(...)`."""
    return [
        (stmt.targets[0].id, stmt)
        for stmt in func.body
        if isinstance(stmt, ast.Assign)
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Name)
        and stmt.value.func.id == call
    ]


def _shape_and_dtype(stmt: ast.Assign) -> list[str]:
    assert isinstance(stmt.value, ast.Call)
    return [ast.dump(arg) for arg in stmt.value.args[:2]]


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.old:
            return ast.Name(self.new, node.ctx)
        return node


class AccumulatorToOutput(TransformPass):
    """`acc = allocate(S, d)` beside `y = output_tensor(S, d)`: acc's statement goes and its reads and
    writes become y's. Early in the schedule, while the statements that copy acc into y still tie the two
    together; what is left of the copy (`y[i] = f(y[i])`) is then one deletion away."""

    name = "accumulators"

    def edits(self, case: Case) -> Iterator[Edit]:
        func = parse(case)
        outputs = _fresh_tensors(func, "output_tensor")
        for index, (acc, stmt) in enumerate(_fresh_tensors(func, "allocate")):
            for out, out_stmt in outputs:
                if _shape_and_dtype(stmt) != _shape_and_dtype(out_stmt):
                    continue
                edited = parse(case)
                del edited.body[edited.body.index(_fresh_tensors(edited, "allocate")[index][1])]
                _Rename(acc, out).visit(edited)
                yield Edit(f"accumulator {acc} -> output {out}", render(case, edited))
