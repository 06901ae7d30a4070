"""Well-formedness of a Hybrid DSL kernel: every element of every output written, and no element of an
`allocate`d or output tensor read before the kernel wrote it. Checked by running the kernel as Python with
tensors that remember which of their elements were written (`Tracked`); AKG gives no value to an unwritten
element, so a kernel that reads one, or returns one, is not a report an AKG maintainer can act on."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from reducer.core.errors import InvalidKernel


def tensor_shape(shape: Any) -> tuple[int, ...]:
    """The shape an `allocate`/`output_tensor` call asks for, as ints; ValueError if a dim is below 1."""
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if any(int(d) < 1 for d in dims):
        raise ValueError(f"non-positive tensor shape {dims}")
    return tuple(int(d) for d in dims)


class IllFormed(InvalidKernel):
    """The candidate is a valid kernel, but it reads tensor elements it never wrote or leaves output
    elements unwritten."""


class Tracked:
    """A fresh tensor (`allocate`, `output_tensor`) whose element reads fail until the element is written."""

    def __init__(self, name: str, shape: tuple[int, ...], dtype: Any) -> None:
        self.name = name
        self.values = np.zeros(shape, dtype=dtype)
        self.written = np.zeros(shape, dtype=bool)
        self.shape = self.values.shape
        self.dtype = self.values.dtype

    def __getitem__(self, index: Any) -> Any:
        if not np.all(self.written[index]):
            where = ", ".join(str(i) for i in (index if isinstance(index, tuple) else (index,)))
            raise IllFormed(f"reads {self.name}[{where}] before writing it")
        return self.values[index]

    def __setitem__(self, index: Any, value: Any) -> None:
        self.values[index] = value
        self.written[index] = True

    def unwritten(self) -> int:
        return int(self.written.size - np.count_nonzero(self.written))


class TrackedAllocator:
    """`allocate` / `output_tensor` for a tracked run; each tensor is named by the order it was made in,
    the kernel's own names are put in by `name_tensors` from the source."""

    def __init__(self, kind: str, names: list[str]) -> None:
        self.kind = kind
        self.names = names
        self.made = 0

    def __call__(self, shape: Any, dtype: str = "float32", scope: str = "global") -> Tracked:
        del scope
        name = self.names[self.made] if self.made < len(self.names) else f"{self.kind}#{self.made}"
        self.made += 1
        return Tracked(name, tensor_shape(shape), dtype)


def tensor_names(func: ast.FunctionDef, call: str) -> list[str]:
    """The names `name = call(...)` binds, in source order (the order a straight-line kernel makes them)."""
    calls = [
        node
        for node in ast.walk(func)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == call
    ]
    calls.sort(key=lambda node: (node.lineno, node.col_offset))
    return [node.targets[0].id if isinstance(node.targets[0], ast.Name) else call for node in calls]


def tracked_intrinsics(func: ast.FunctionDef) -> dict[str, TrackedAllocator]:
    return {call: TrackedAllocator(call, tensor_names(func, call)) for call in ("allocate", "output_tensor")}


def check_outputs_written(results: Any) -> None:
    """IllFormed if an output the kernel returns has elements it never wrote."""
    for r in results if isinstance(results, (tuple, list)) else (results,):
        if isinstance(r, Tracked) and r.unwritten():
            raise IllFormed(f"leaves {r.unwritten()} of {r.written.size} elements of output {r.name} unwritten")


def check_outputs_stored(func: ast.FunctionDef) -> None:
    """The part of the check that needs no run (for kernels too long to run whole as Python): every
    `output_tensor` the kernel makes is written somewhere."""
    stored = {
        n.value.id
        for n in ast.walk(func)
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
    }
    for name in tensor_names(func, "output_tensor"):
        if name not in stored:
            raise IllFormed(f"never writes output {name}")
