"""What the crashing-shape map varies in a case: knobs. A knob is a set of input dims and integer constants
of the kernel (loop extents and the shapes of `output_tensor`/`allocate`; of TeLang, the shapes of
`tvm.compute` and the ranges of `tvm.reduce_axis`) that take one value together: a dim alone, or with the dims
and constants of equal value when changing it alone is not a valid kernel."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from reducer.core.case import Case
from reducer.kernels.kinds import Dim, kind_of
from reducer.search.passes.ast_edit import parse, preorder, render, tvm_call

_SHAPED_CALLS = ("range", "output_tensor", "allocate")  # Hybrid DSL: range's every argument, the others' first
_SHAPED_TVM_CALLS = ("compute", "reduce_axis")  # TeLang: the first argument


@dataclass(frozen=True)
class Knob:
    dims: tuple[Dim, ...]
    constants: tuple[int, ...]  # preorder indices of ast.Constant nodes in the kernel's function
    value: int  # in the case it was found in

    def apply(self, case: Case, value: int) -> Case:
        if self.constants:
            func = parse(case)
            nodes = list(preorder(func))
            for index in self.constants:
                node = nodes[index]
                assert isinstance(node, ast.Constant)
                node.value = value
            case = render(case, func)
        return kind_of(case).with_dims(case, list(self.dims), value) if self.dims else case

    def label(self, case: Case) -> str:
        """'x.shape[1] = constant 17 (lines 4, 6)', named by the kernel's parameters."""
        names = kind_of(case).input_names(case)
        parts = [f"{names[i]}.shape[{axis}]" for i, axis in self.dims]
        if self.constants:
            nodes = list(preorder(parse(case)))
            lines = sorted({getattr(nodes[i], "lineno", 0) for i in self.constants})
            parts.append(f"constant {self.value} (line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))})")
        return " = ".join(parts)


def _shape_arguments(node: ast.AST) -> list[ast.expr]:
    """The arguments of a call that give a loop extent or a tensor's shape."""
    if not isinstance(node, ast.Call):
        return []
    if isinstance(node.func, ast.Name) and node.func.id in _SHAPED_CALLS:
        return node.args if node.func.id == "range" else node.args[:1]
    if tvm_call(node) in _SHAPED_TVM_CALLS:
        return node.args[:1]
    return []


def shape_constants(case: Case) -> dict[int, list[int]]:
    """Integer constants >= 2 a Custom op's kernel uses as a loop extent or in a tensor's shape: value ->
    their preorder indices."""
    if not kind_of(case).python_function:
        return {}
    nodes = list(preorder(parse(case)))
    index_of = {id(node): i for i, node in enumerate(nodes)}
    found: dict[int, list[int]] = {}
    for node in nodes:
        for arg in _shape_arguments(node):
            for inner in [arg, *(arg.elts if isinstance(arg, ast.Tuple) else [])]:
                if isinstance(inner, ast.Constant) and type(inner.value) is int and inner.value >= 2:
                    found.setdefault(inner.value, []).append(index_of[id(inner)])
    return found


def knobs(case: Case, valid: Callable[[Case], bool]) -> list[Knob]:
    """Every input dim and every group of equal shape constants, each alone when `valid` accepts it changed
    alone, else together with the dims and constants of the same value."""
    constants = shape_constants(case)
    dims_of: dict[int, list[Dim]] = {}
    for i, spec in enumerate(case.inputs):
        for axis, value in enumerate(spec.shape):
            dims_of.setdefault(value, []).append((i, axis))
    found: list[Knob] = []
    taken: set[Dim] = set()
    linked_values: set[int] = set()
    for value, dims in dims_of.items():
        for dim in dims:
            if dim in taken:
                continue
            alone = Knob((dim,), (), value)
            if valid(alone.apply(case, value + 1)):
                found.append(alone)
                taken.add(dim)
                continue
            found.append(Knob(tuple(d for d in dims if d not in taken), tuple(constants.get(value, [])), value))
            taken.update(dims)
            linked_values.add(value)
    for value, indices in constants.items():
        if value in linked_values:
            continue
        alone = Knob((), tuple(indices), value)
        together = Knob(tuple(dims_of.get(value, [])), tuple(indices), value)
        found.append(alone if not together.dims or valid(alone.apply(case, value + 1)) else together)
    return found
