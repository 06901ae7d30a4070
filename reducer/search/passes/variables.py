"""Inline scalar temporaries: `t = e` assigned once, its reads replaced by `e` and the assignment
deleted (kept only where that makes the kernel smaller). Tensors are not scalars: a Hybrid DSL buffer, and a
TeLang stage or reduce axis, which would become one stage (or axis) per read."""

from __future__ import annotations

import ast
import copy
from collections import Counter
from collections.abc import Iterator

from reducer.core.case import Case
from reducer.search.passes.ast_edit import parse, render
from reducer.search.passes.base import Edit, TransformPass, code

BUFFER_CALLS = {"allocate", "output_tensor"}
TVM_OBJECT_CALLS = {"compute", "reduce_axis", "placeholder", "extern"}  # tvm.<call>: each call makes a new one


class _Inline(ast.NodeTransformer):
    def __init__(self, name: str, value: ast.expr) -> None:
        self.name, self.value = name, value

    def visit_Assign(self, node: ast.Assign) -> ast.AST | None:
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == self.name:
            return None
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return copy.deepcopy(self.value)
        return node


def _scalars(func: ast.FunctionDef) -> dict[str, ast.expr]:
    stores = Counter(n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    found = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            value = node.value
            is_buffer = isinstance(value, ast.Call) and (
                getattr(value.func, "id", "") in BUFFER_CALLS or getattr(value.func, "attr", "") in TVM_OBJECT_CALLS
            )
            name = node.targets[0].id
            if not is_buffer and stores[name] == 1:
                found[name] = value
    return found


class InlineScalars(TransformPass):
    name = "inline"

    def edits(self, case: Case) -> Iterator[Edit]:
        for name in _scalars(parse(case)):
            func = parse(case)
            value = _scalars(func)[name]
            _Inline(name, value).visit(func)
            yield Edit(f"inline {name} = {code(ast.unparse(value))}", render(case, func))
