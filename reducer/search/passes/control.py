"""Flatten control flow: a loop becomes its body with the loop variable fixed to its first value, an `if`
becomes one of its branches, a `with` scope becomes its body."""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

from reducer.core.case import Case
from reducer.kernels.hybrid_check import LOOPS
from reducer.search.passes.ast_edit import Replacement, Substitute, node_edits
from reducer.search.passes.base import Edit, TransformPass


def _first_value(loop: ast.For) -> ast.expr | None:
    it = loop.iter
    if (
        isinstance(loop.target, ast.Name)
        and isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id in LOOPS
        and it.args
    ):
        return it.args[0] if len(it.args) >= 2 else ast.Constant(0)
    return None


def _flatten(node: ast.AST) -> list[Replacement]:
    if isinstance(node, ast.For):
        start = _first_value(node)
        if start is None or not isinstance(node.target, ast.Name):
            return []
        body = [Substitute({node.target.id: start}).visit(copy.deepcopy(s)) for s in node.body]
        return [body]
    if isinstance(node, ast.If):
        return [node.body] + ([node.orelse] if node.orelse else [])
    if isinstance(node, ast.With):
        return [node.body]
    return []


class FlattenControl(TransformPass):
    """Innermost first: flattening any loop removes one header whatever its depth, and inner loops are
    where kernel windows and reductions live, the incidental part of most failures."""

    name = "control-flow"

    def edits(self, case: Case) -> Iterator[Edit]:
        return node_edits(case, _flatten, innermost_first=True)
