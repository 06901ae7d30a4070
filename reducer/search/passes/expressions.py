"""Simplify expressions: replace one by an operand, a loaded tensor element by a constant, a shape read
by its value or 1, fold constant arithmetic, and shrink numeric literals (this also shrinks constant
loop bounds and simplifies indices)."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterator

from reducer.core.case import Case
from reducer.kernels.hybrid import ELEMENTWISE_CALLS
from reducer.search.passes.ast_edit import (
    Replacement,
    allocated_shapes,
    input_shapes,
    is_shape_read,
    node_edits,
    parse,
    shape_value,
)
from reducer.search.passes.base import Edit, TransformPass

FOLDABLE = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)


def operands(node: ast.AST) -> list[Replacement]:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ELEMENTWISE_CALLS:
        return list(node.args)
    return []


def _fold(node: ast.BinOp) -> ast.Constant | None:
    left, right = node.left, node.right
    if not (isinstance(left, ast.Constant) and isinstance(right, ast.Constant)):
        return None
    if not isinstance(node.op, FOLDABLE) or not all(
        isinstance(v, (int, float)) and abs(v) < 1e9 for v in (left.value, right.value)
    ):
        return None
    try:
        value = eval(compile(ast.Expression(node), "<fold>", "eval"), {"__builtins__": {}})
    except (ArithmeticError, TypeError, ValueError):
        return None
    return ast.Constant(value) if isinstance(value, (int, float)) else None


def _constants(shapes: dict[str, tuple[int, ...]]) -> Callable[[ast.AST], list[Replacement]]:
    def options(node: ast.AST) -> list[Replacement]:
        if is_shape_read(node):
            assert isinstance(node, ast.Subscript)
            value = shape_value(node, shapes)
            return [ast.Constant(v) for v in dict.fromkeys((1, value)) if v is not None]
        if isinstance(node, ast.BinOp):
            folded = _fold(node)
            return [folded] if folded is not None else []
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            return [ast.Constant(0.0)]
        if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
            value = node.value
            if isinstance(value, int) and value > 1:
                return [ast.Constant(v) for v in dict.fromkeys((1, value // 2))]
            if isinstance(value, int) and value < 0:
                return [ast.Constant(0)]
            if isinstance(value, float) and math.isfinite(value) and value not in (0.0, 1.0):
                return [ast.Constant(0.0), ast.Constant(1.0)]
        return []

    return options


def _known_shapes(case: Case) -> dict[str, tuple[int, ...]]:
    """Shapes readable without running the kernel: the inputs, and tensors allocated with constant dims."""
    func = parse(case)
    shapes = input_shapes(func, case)
    for name, dims in allocated_shapes(func):
        values = [e.value for e in dims.elts if isinstance(e, ast.Constant) and isinstance(e.value, int)]
        if len(values) == len(dims.elts):
            shapes[name] = tuple(values)
    return shapes


def _augmented(node: ast.AST) -> list[Replacement]:
    """`t = t op e` -> `t op= e`: the same kernel in fewer tokens."""
    if (
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.BinOp)
        and ast.dump(node.targets[0]).replace("Store()", "Load()") == ast.dump(node.value.left)
    ):
        return [ast.AugAssign(node.targets[0], node.value.op, node.value.right)]
    return []


class CompactAssignments(TransformPass):
    name = "assignments"

    def edits(self, case: Case) -> Iterator[Edit]:
        return node_edits(case, _augmented)


class ExpressionToOperand(TransformPass):
    name = "expressions"

    def edits(self, case: Case) -> Iterator[Edit]:
        return node_edits(case, operands)


class ExpressionToConstant(TransformPass):
    name = "constants"

    def edits(self, case: Case) -> Iterator[Edit]:
        return node_edits(case, _constants(_known_shapes(case)))
