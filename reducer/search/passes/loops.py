"""Passes over loop nests that leave the minima where every loop is needed: two directly nested loops merged
into one, and a loop's extent moved onto the loop it directly holds (an edit of equal size, taken only when
it lets a strictly smaller edit through: see Reduction's lookahead)."""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

from reducer.core.case import Case
from reducer.kernels.hybrid_check import LOOPS
from reducer.search.passes.ast_edit import (
    Replacement,
    Substitute,
    input_shapes,
    is_shape_read,
    node_edits,
    parse,
    shape_value,
)
from reducer.search.passes.base import Edit, TransformPass


def _counting_loop(node: ast.AST) -> tuple[str, ast.expr] | None:
    """(variable, extent) of `for v in range(extent):` (any loop intrinsic, start 0, no else)."""
    if not (isinstance(node, ast.For) and isinstance(node.target, ast.Name) and not node.orelse):
        return None
    it = node.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in LOOPS and len(it.args) == 1:
        return node.target.id, it.args[0]
    return None


def _nested_pair(node: ast.AST) -> tuple[ast.For, ast.For] | None:
    """The loop and the loop it directly holds, when its body is that loop alone."""
    if _counting_loop(node) is None:
        return None
    assert isinstance(node, ast.For)
    inner = node.body[0] if len(node.body) == 1 else None
    if inner is None or _counting_loop(inner) is None:
        return None
    assert isinstance(inner, ast.For)
    return node, inner


def _static_extent(extent: ast.expr, shapes: dict[str, tuple[int, ...]]) -> int | None:
    """The value of an extent written as a literal or as `input.shape[k]`; None otherwise."""
    if isinstance(extent, ast.Constant) and isinstance(extent.value, int):
        return extent.value
    return shape_value(extent, shapes) if isinstance(extent, ast.Subscript) and is_shape_read(extent) else None


def _merged(outer: ast.For, inner: ast.For, shapes: dict[str, tuple[int, ...]]) -> ast.For:
    """One loop for the two: when either has extent 1 its variable becomes the other's (collapse); else
    the outer variable runs over both extents and the two indices are its quotient and remainder."""
    (a, extent_a), (b, extent_b) = _counting_loop(outer), _counting_loop(inner)  # type: ignore[misc]
    merged = copy.deepcopy(inner)
    if _static_extent(extent_b, shapes) == 1:
        merged.target = ast.Name(a, ast.Store())
        merged.iter = copy.deepcopy(outer.iter)
        merged.body = [Substitute({b: ast.Name(a, ast.Load())}).visit(s) for s in merged.body]
    elif _static_extent(extent_a, shapes) == 1:
        merged.body = [Substitute({a: ast.Name(b, ast.Load())}).visit(s) for s in merged.body]
    else:
        merged.target = ast.Name(a, ast.Store())
        merged.iter.args = [ast.BinOp(copy.deepcopy(extent_a), ast.Mult(), copy.deepcopy(extent_b))]  # type: ignore[attr-defined]
        split = {
            a: ast.BinOp(ast.Name(a, ast.Load()), ast.FloorDiv(), copy.deepcopy(extent_b)),
            b: ast.BinOp(ast.Name(a, ast.Load()), ast.Mod(), copy.deepcopy(extent_b)),
        }
        merged.body = [Substitute(split).visit(s) for s in merged.body]
    return merged


class MergeLoops(TransformPass):
    """Innermost pairs first, like control-flow: reduction loops live there, and a kernel whose failure
    needs "a reduction" often keeps one reduce loop per axis of the original once each has extent 1."""

    name = "merge-loops"
    leads = True  # before dims and unit-axes drop the tensor axes that a merged loop would still index

    def edits(self, case: Case) -> Iterator[Edit]:
        shapes = input_shapes(parse(case), case)

        def merge(node: ast.AST) -> list[Replacement]:
            pair = _nested_pair(node)
            return [_merged(*pair, shapes)] if pair else []

        return node_edits(case, merge, innermost_first=True)


class MoveExtent(TransformPass):
    """`for a in range(1): for b in range(n):` <-> `for a in range(n): for b in range(1):`: the same size,
    but the loop now of extent 1 can then be flattened or merged away."""

    name = "move-extent"
    enables = ("control-flow", "merge-loops")

    def edits(self, case: Case) -> Iterator[Edit]:
        shapes = input_shapes(parse(case), case)

        def swap(node: ast.AST) -> list[Replacement]:
            pair = _nested_pair(node)
            if pair is None:
                return []
            extents = [_static_extent(_counting_loop(loop)[1], shapes) for loop in pair]  # type: ignore[index]
            if 1 not in extents or extents[0] == extents[1]:
                return []
            swapped = copy.deepcopy(pair[0])
            held = swapped.body[0]
            assert isinstance(held, ast.For) and isinstance(held.iter, ast.Call) and isinstance(swapped.iter, ast.Call)
            swapped.iter.args, held.iter.args = held.iter.args, swapped.iter.args
            return [swapped]

        return node_edits(case, swap, innermost_first=True)
