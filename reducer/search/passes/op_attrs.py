"""A Custom op's attrs become literals: each attr's reads in the function are replaced by its value and the attr
goes (a parameter after the inputs of a Hybrid DSL or TeLang function; `attrs["name"]` of an ir_builder
function), so the minimal kernel needs no reg_info to be run."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from reducer.core.case import Case
from reducer.search.passes.ast_edit import Substitute, parse, render
from reducer.search.passes.base import Edit, TransformPass


def literal(value: Any) -> ast.expr:
    if isinstance(value, list):
        return ast.List([literal(v) for v in value], ast.Load())
    return ast.Constant(value)


class _AttrReads(ast.NodeTransformer):
    """`attrs["name"]` (an ir_builder function's attrs dict) becomes `value`."""

    def __init__(self, attrs: str, name: str, value: Any) -> None:
        self.attrs, self.name, self.value = attrs, name, value

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if (
            isinstance(node.value, ast.Name)
            and node.value.id == self.attrs
            and isinstance(node.slice, ast.Constant)
            and node.slice.value == self.name
        ):
            return literal(self.value)
        return self.generic_visit(node)


class InlineOpAttrs(TransformPass):
    """`read_as_dict`: the function reads its attrs from its second parameter, a dict (ir_builder); else each
    attr is a parameter of its own."""

    name = "op-attrs"

    def __init__(self, read_as_dict: bool = False) -> None:
        self.read_as_dict = read_as_dict

    def edits(self, case: Case) -> Iterator[Edit]:
        for name, value in case.op_attrs.items():
            func = parse(case)
            if self.read_as_dict:
                params = func.args.args
                if len(params) < 2:
                    continue
                func = _AttrReads(params[1].arg, name, value).visit(func)
            else:
                func.args.args = [a for a in func.args.args if a.arg != name]
                func = Substitute({name: literal(value)}).visit(func)
            rest = {k: v for k, v in case.op_attrs.items() if k != name}
            yield Edit(f"op attr {name} -> its value {value!r}", render(case, func).with_(op_attrs=rest))
