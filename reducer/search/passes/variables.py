"""Inline scalar temporaries: `t = e` assigned once, its reads replaced by `e` and the assignment
deleted (kept only where that makes the kernel smaller); `n, c = x.shape` of an input, its names replaced by
the input's dims. Tensors are not scalars: a Hybrid DSL buffer never, a TeLang reduce axis only where it is
read once (each read would make an axis), and a TeLang stage only into the `return` that is its one read."""

from __future__ import annotations

import ast
import copy
from collections import Counter
from collections.abc import Iterator

from reducer.core.case import Case
from reducer.search.passes.ast_edit import Substitute, input_shapes, parse, render, tvm_call
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


def _returned_names(func: ast.FunctionDef) -> set[str]:
    values = [n.value for n in ast.walk(func) if isinstance(n, ast.Return) and n.value is not None]
    return {
        e.id
        for v in values
        for e in (v.elts if isinstance(v, (ast.Tuple, ast.List)) else [v])
        if isinstance(e, ast.Name)
    }


def _inlinable(value: ast.expr, name: str, loads: Counter[str], returned: set[str]) -> bool:
    called = value.func if isinstance(value, ast.Call) else None
    if getattr(called, "id", "") in BUFFER_CALLS:
        return False
    made = tvm_call(value)
    if made == "reduce_axis":
        return loads[name] == 1
    if made in TVM_OBJECT_CALLS:
        return loads[name] == 1 and name in returned
    return True


def _scalars(func: ast.FunctionDef) -> dict[str, ast.expr]:
    names = [n for n in ast.walk(func) if isinstance(n, ast.Name)]
    stores = Counter(n.id for n in names if isinstance(n.ctx, ast.Store))
    loads = Counter(n.id for n in names if isinstance(n.ctx, ast.Load))
    returned = _returned_names(func)
    found = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if stores[name] == 1 and _inlinable(node.value, name, loads, returned):
                found[name] = node.value
    return found


def _shape_unpacks(func: ast.FunctionDef, case: Case) -> list[tuple[int, dict[str, ast.expr]]]:
    """(statement index, name -> the dim as a literal) of each `a, b = x.shape` of an input in the body."""
    shapes = input_shapes(func, case)
    found = []
    for index, node in enumerate(func.body):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Tuple)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "shape"
            and isinstance(node.value.value, ast.Name)
            and len(shapes.get(node.value.value.id, ())) == len(node.targets[0].elts)
            and all(isinstance(e, ast.Name) for e in node.targets[0].elts)
        ):
            dims = shapes[node.value.value.id]
            found.append((index, {e.id: ast.Constant(d) for e, d in zip(node.targets[0].elts, dims, strict=True)}))  # type: ignore[attr-defined]
    return found


class InlineScalars(TransformPass):
    name = "inline"

    def edits(self, case: Case) -> Iterator[Edit]:
        for name in _scalars(parse(case)):
            func = parse(case)
            value = _scalars(func)[name]
            _Inline(name, value).visit(func)
            yield Edit(f"inline {name} = {code(ast.unparse(value))}", render(case, func))
        for position, (_, values) in enumerate(_shape_unpacks(parse(case), case)):
            func = parse(case)
            index, _ = _shape_unpacks(func, case)[position]
            statement = func.body.pop(index)
            func = Substitute(values).visit(func)
            yield Edit(f"inline {code(ast.unparse(statement))}", render(case, func))
