"""Passes over the kernel's inputs: drop inputs the body no longer reads, shrink dimensions (dims that
hold the same value across inputs first as one linked group, then each alone), and simplify dtypes."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import partial

from reducer.core.case import Case, TensorSpec
from reducer.kernels.kinds import SIMPLER_DTYPE, Dim, kind_of, linked_groups
from reducer.search.passes.ast_edit import allocated_shapes, parse, render
from reducer.search.passes.base import Edit, Number, NumberPass, TransformPass


def dims_label(dims: list[Dim]) -> str:
    """Input dims as `input[axis]`, for an edit's description."""
    return ("dims " if len(dims) > 1 else "dim ") + ", ".join(f"{i}[{axis}]" for i, axis in dims)


class ShrinkLinkedDims(NumberPass):
    name = "linked-dims"

    def numbers(self, case: Case) -> list[Number]:
        return [
            Number(dims_label(dims), case.inputs[dims[0][0]].shape[dims[0][1]], partial(with_dims, case, dims))
            for dims in linked_groups(case)
        ]


class ShrinkDims(NumberPass):
    name = "dims"

    def numbers(self, case: Case) -> list[Number]:
        return [
            Number(dims_label([(i, axis)]), d, partial(with_dims, case, [(i, axis)]))
            for i, t in enumerate(case.inputs)
            for axis, d in enumerate(t.shape)
        ]


def with_dims(case: Case, dims: list[Dim], value: int) -> Case:
    return kind_of(case).with_dims(case, dims, value)


class RemoveUnusedInputs(TransformPass):
    """An input whose elements the kernel never reads goes: one it does not name at all, and one it names only
    for its `.shape` or `.dtype`, which become the literal shape and dtype (so the reduction does not keep an
    input for a shape that a constant gives as well). The last input stays: a Custom op takes one."""

    name = "inputs"

    def edits(self, case: Case) -> Iterator[Edit]:
        func = parse(case)
        for i, arg in enumerate(func.args.args[: len(case.inputs)]):
            if len(case.inputs) > 1 and _reads_only_metadata(func, arg.arg):
                edited = parse(case)
                del edited.args.args[i]
                edited = _Metadata(arg.arg, case.inputs[i]).visit(edited)
                reduced = render(case, edited)
                yield Edit(
                    f"remove unused input {arg.arg}", reduced.with_(inputs=case.inputs[:i] + case.inputs[i + 1 :])
                )


def _reads_only_metadata(func: ast.FunctionDef, name: str) -> bool:
    """Does `func` read nothing of input `name` but its shape and dtype (or not name it at all)?"""
    metadata = {
        id(node.value)
        for node in ast.walk(func)
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "dtype") and isinstance(node.value, ast.Name)
    }
    reads = [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return all(id(n) in metadata for n in reads)


class _Metadata(ast.NodeTransformer):
    """`name.shape` and `name.dtype` as the literal shape tuple and dtype string of `spec`."""

    def __init__(self, name: str, spec: TensorSpec) -> None:
        self.name, self.spec = name, spec

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == self.name and node.attr in ("shape", "dtype"):
            if node.attr == "dtype":
                return ast.Constant(self.spec.dtype)
            return ast.Tuple([ast.Constant(d) for d in self.spec.shape], ast.Load())
        return self.generic_visit(node)


class SimplifyDtypes(TransformPass):
    name = "dtypes"

    def edits(self, case: Case) -> Iterator[Edit]:
        for i, t in enumerate(case.inputs):
            if t.dtype in SIMPLER_DTYPE:
                inputs = list(case.inputs)
                inputs[i] = TensorSpec(t.shape, SIMPLER_DTYPE[t.dtype])
                yield Edit(f"input {i}: {t.dtype} -> {inputs[i].dtype}", case.with_(inputs=tuple(inputs)))


def _is_shape_of(node: ast.AST, name: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "shape"
        and isinstance(node.value, ast.Name)
        and node.value.id == name
    )


class DropIndex(ast.NodeTransformer):
    """Remove axis `axis` from every access of tensor `name`: indices, `.shape[k]` reads, and unpacking
    (`n, c, h = x.shape` loses the name bound to the axis; that name's reads become its value, 1)."""

    def __init__(self, name: str, axis: int, rank: int) -> None:
        self.name, self.axis, self.rank = name, axis, rank
        self.unit_names: set[str] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        for stmt in ast.walk(node):
            if isinstance(stmt, ast.Assign) and self._unpacks_shape(stmt):
                target = stmt.targets[0].elts[self.axis]  # type: ignore[attr-defined]
                if isinstance(target, ast.Name):
                    self.unit_names.add(target.id)
        self.generic_visit(node)
        return node

    def _unpacks_shape(self, node: ast.Assign) -> bool:
        target = node.targets[0]
        return isinstance(target, ast.Tuple) and len(target.elts) == self.rank and _is_shape_of(node.value, self.name)

    def visit_Assign(self, node: ast.Assign) -> ast.AST | None:
        if self._unpacks_shape(node):
            target = node.targets[0]
            assert isinstance(target, ast.Tuple)
            del target.elts[self.axis]
            return node if target.elts else None
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.unit_names and isinstance(node.ctx, ast.Load):
            return ast.Constant(1)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id == self.name:
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if len(elts) == self.rank:
                rest = [e for k, e in enumerate(elts) if k != self.axis]
                node.slice = rest[0] if len(rest) == 1 else ast.Tuple(rest, ast.Load())
        elif (
            _is_shape_of(owner, self.name)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, int)
        ):
            k = node.slice.value % self.rank
            if k == self.axis:
                return ast.Constant(1)
            node.slice = ast.Constant(k - 1 if k > self.axis else k)
        return node


class DropUnitAxes(TransformPass):
    """Lower the rank of a tensor along an axis of extent 1: fewer dims, shorter indices, down to a
    scalar tensor (shape `[]`), which MindSpore and AKG accept."""

    name = "unit-axes"

    def edits(self, case: Case) -> Iterator[Edit]:
        func = parse(case)
        for i, (arg, spec) in enumerate(zip(func.args.args[: len(case.inputs)], case.inputs, strict=True)):
            rank = len(spec.shape)
            for axis in range(rank):
                if spec.shape[axis] == 1:
                    edited = parse(case)
                    DropIndex(arg.arg, axis, rank).visit(edited)
                    shape = spec.shape[:axis] + spec.shape[axis + 1 :]
                    inputs = list(case.inputs)
                    inputs[i] = TensorSpec(shape, spec.dtype)
                    edited_case = render(case, edited).with_(inputs=tuple(inputs))
                    yield Edit(f"drop unit axis {axis} of input {arg.arg}", edited_case)
        for index, (name, dims) in enumerate(allocated_shapes(func)):
            rank = len(dims.elts)
            for axis in range(rank):
                dim = dims.elts[axis]
                if isinstance(dim, ast.Constant) and dim.value == 1:
                    edited = parse(case)
                    DropIndex(name, axis, rank).visit(edited)
                    target = list(allocated_shapes(edited))[index][1]
                    del target.elts[axis]
                    yield Edit(f"drop unit axis {axis} of {name}", render(case, edited))
