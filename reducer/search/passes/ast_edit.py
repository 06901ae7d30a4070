"""Edits of the kernel's Python AST addressed by position, so a pass can enumerate edits on one parse and
apply any of them to a fresh one: statement blocks in preorder, and nodes by their preorder index."""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator

from reducer.core import pyparse
from reducer.core.case import Case
from reducer.search.passes.base import Edit, code

Replacement = ast.AST | list[ast.stmt]


def parse(case: Case) -> ast.FunctionDef:
    func = pyparse.parse(case.source).body[0]
    assert isinstance(func, ast.FunctionDef)
    return func


def render(case: Case, func: ast.FunctionDef) -> Case:
    ast.fix_missing_locations(func)
    return case.with_(source=ast.unparse(func) + "\n")


class Substitute(ast.NodeTransformer):
    """Every read of a name in `values` becomes (a copy of) its expression; writes stay as they are."""

    def __init__(self, values: dict[str, ast.expr]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.values and isinstance(node.ctx, ast.Load):
            return copy.deepcopy(self.values[node.id])
        return node


def tvm_call(node: ast.AST) -> str | None:
    """`f` of a TeLang call `tvm.f(...)`, else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "tvm"
    ):
        return node.func.attr
    return None


def input_shapes(func: ast.FunctionDef, case: Case) -> dict[str, tuple[int, ...]]:
    """Each input parameter's shape, by parameter name (the op attrs' parameters follow the inputs)."""
    return {a.arg: t.shape for a, t in zip(func.args.args[: len(case.inputs)], case.inputs, strict=True)}


def is_shape_read(node: ast.AST) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape"


def shape_value(node: ast.Subscript, shapes: dict[str, tuple[int, ...]]) -> int | None:
    """The value of `name.shape[k]` when `name`'s shape is in `shapes`; None otherwise."""
    assert isinstance(node.value, ast.Attribute)
    owner, index = node.value.value, node.slice
    if isinstance(owner, ast.Name) and isinstance(index, ast.Constant) and isinstance(index.value, int):
        shape = shapes.get(owner.id)
        if shape is not None and -len(shape) <= index.value < len(shape):
            return shape[index.value]
    return None


def preorder(node: ast.AST) -> Iterator[ast.AST]:
    yield node
    for child in ast.iter_child_nodes(node):
        yield from preorder(child)


def blocks(func: ast.FunctionDef) -> list[list[ast.stmt]]:
    """Every statement list (bodies and else-branches) in preorder, the function body first."""
    found: list[list[ast.stmt]] = []
    for node in preorder(func):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                found.append(value)
    return found


class _ReplaceAt(ast.NodeTransformer):
    def __init__(self, index: int, make: Callable[[ast.AST], Replacement]) -> None:
        self.index = index
        self.make = make
        self.seen = 0

    def visit(self, node: ast.AST) -> ast.AST | list[ast.stmt]:
        here = self.seen
        self.seen += 1
        if here == self.index:
            return self.make(node)
        return self.generic_visit(node)


def replace_at(case: Case, index: int, make: Callable[[ast.AST], Replacement]) -> Case:
    """`case` with the node at preorder `index` replaced by `make(node)` (a node, or statements)."""
    func = parse(case)
    _ReplaceAt(index, make).visit(func)
    return render(case, func)


def _text(replacement: Replacement) -> str:
    if isinstance(replacement, list):
        return "; ".join(ast.unparse(s) for s in replacement)
    return ast.unparse(replacement).split("\n")[0]


def node_edits(
    case: Case, options: Callable[[ast.AST], list[Replacement]], innermost_first: bool = False
) -> Iterator[Edit]:
    """One edit per (node, option), nodes in preorder (outer, bigger edits first) or reversed."""
    func = parse(case)
    nodes = list(enumerate(preorder(func)))
    for index, node in reversed(nodes) if innermost_first else nodes:
        for k, option in enumerate(options(node)):
            where = f"line {node.lineno}: " if hasattr(node, "lineno") else ""
            yield Edit(
                f"{where}{code(_text(node))} -> {code(_text(option))}",
                replace_at(case, index, lambda n, k=k: copy.deepcopy(options(n)[k])),
            )


def allocated_shapes(func: ast.FunctionDef) -> Iterator[tuple[str, ast.Tuple]]:
    """(name, shape tuple) of every `name = allocate((...), ...)` / `output_tensor((...), ...)`."""
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and node.value.args
            and isinstance(node.value.args[0], ast.Tuple)
        ):
            yield node.targets[0].id, node.value.args[0]
