"""Hybrid DSL kernels as Python: the intrinsics MindSpore runs them with, and validity and output shape
inference as MindSpore's auto-infer does it (its static checks, hybrid_check.py, then a run on zero inputs):
the cheap check done before any compile."""

from __future__ import annotations

import ast
import contextlib
import itertools
import math
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from types import FrameType
from typing import Any

import numpy as np

from reducer.core import pyparse
from reducer.core.case import Case, TensorSpec
from reducer.core.errors import InvalidKernel
from reducer.kernels.hybrid_check import BINARY_BASIC, BINARY_GENERAL, LOOPS, UNARY_BASIC, UNARY_GENERAL, static_check
from reducer.kernels.padding import Dim, PaddingEffect, effect_of
from reducer.kernels.well_formed import (
    IllFormed,
    Tracked,
    check_outputs_stored,
    check_outputs_written,
    tensor_shape,
    tracked_intrinsics,
)


def _allocate(shape: Any, dtype: str = "float32", scope: str = "global") -> np.ndarray:
    del scope
    return np.zeros(tensor_shape(shape), dtype=dtype)


def _grid(extents: Any) -> Any:
    return itertools.product(*(range(int(e)) for e in extents))


class _WithStub:
    def __enter__(self) -> _WithStub:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __call__(self, *args: object, **kwargs: object) -> _WithStub:
        return self


_LOOPS = dict.fromkeys(LOOPS, range)

# The Hybrid DSL intrinsics MindSpore 2.x runs a kernel with (mindspore/ops/operations/_ms_kernel.py).
INTRINSICS: dict[str, Any] = {
    "allocate": _allocate,
    "output_tensor": _allocate,
    **_LOOPS,
    "grid": _grid,
    "attr": _WithStub(),
    "block_realize": _WithStub(),
    "sqrt": np.sqrt,
    "sign": np.sign,
    "log": np.log,
    "tanh": np.tanh,
    "exp": np.exp,
    "abs": np.abs,
    "int32": np.int32,
    "float16": np.float16,
    "float32": np.float32,
    "power": np.power,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "erf": np.vectorize(math.erf),
    "isnan": np.isnan,
    "int8": np.int8,
    "int16": np.int16,
    "int64": np.int64,
    "float64": np.float64,
    "sin": np.sin,
    "cos": np.cos,
    "isinf": np.isinf,
    "isfinite": np.isfinite,
    "atan": np.arctan,
    "atan2": np.arctan2,
    "expm1": np.expm1,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": np.round,
    "ceil_div": lambda a, b: (a + b - 1) // b,
    "max": max,
    "min": min,
}
# A full Python run of a kernel on zero inputs checks indices too; past this many executed lines it is
# cut short and only the output shapes (from a run with empty loops) are used.
LINE_BUDGET = 200_000
WELL_FORMED_CAP = 8


def parse_function(source: str) -> ast.FunctionDef:
    try:
        tree = pyparse.parse(source)
    except SyntaxError as exc:
        raise InvalidKernel(f"syntax error: {exc.msg}") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        raise InvalidKernel("the source must be exactly one function")
    return tree.body[0]


# Calls whose value is computed from their arguments: an expression pass may replace one by an argument.
ELEMENTWISE_CALLS = UNARY_BASIC | UNARY_GENERAL | BINARY_BASIC | BINARY_GENERAL | {"max", "min"}


class _LineBudget:
    def __init__(self, budget: int) -> None:
        self.left = budget

    def __call__(self, frame: FrameType, event: str, arg: object) -> Any:
        if event == "line":
            self.left -= 1
            if self.left < 0:
                raise BudgetSpent
        return self


class BudgetSpent(Exception):
    """The kernel ran LINE_BUDGET lines of Python without finishing."""


@contextlib.contextmanager
def _line_budget() -> Iterator[None]:
    old = sys.gettrace()
    sys.settrace(_LineBudget(LINE_BUDGET))
    try:
        yield
    finally:
        sys.settrace(old)


def _check_well_formed_capped(case: Case, func: ast.FunctionDef) -> None:
    """Well-formedness of a kernel too long to run whole: checked on the same kernel with every input dim
    cut to WELL_FORMED_CAP (what a flattened loop or a deleted statement leaves unwritten at full size it
    leaves unwritten there too), and when that cannot run either, only that every output is written somewhere.
    Without it a case too big to check would be accepted ill-formed, and every smaller dim refused after."""
    capped = tuple(TensorSpec(tuple(min(d, WELL_FORMED_CAP) for d in t.shape), t.dtype) for t in case.inputs)
    if capped != case.inputs:
        try:
            full = _as_outputs(_run(case, _empty_range))
            with _line_budget():
                results = _run(case, tracked=func, inputs=capped)
            # An output whose shape is a literal (300 x 300) keeps its size when the inputs are cut, while
            # the loops that follow the inputs shrink: what it leaves unwritten then says nothing.
            check_outputs_written(tuple(r for r, o in zip(_listed(results), full, strict=False) if r.shape != o.shape))
            check_outputs_stored(func)
            return
        except IllFormed as exc:
            raise IllFormed(f"{exc} (run with every input dim cut to {WELL_FORMED_CAP})") from None
        except Exception:  # any other failure of the cut kernel: its indices need the real dims
            pass
    check_outputs_stored(func)


def _empty_range(*args: int) -> range:
    return range(0)


def _run(
    case: Case,
    loops: Callable[..., Iterable[int]] | None = None,
    tracked: ast.FunctionDef | None = None,
    inputs: tuple[TensorSpec, ...] | None = None,
    values: list[np.ndarray] | None = None,
) -> Any:
    """Run the kernel on zero inputs (its own, or `inputs`), or on `values`, and its op attrs, as AKG calls it;
    `loops` replaces the loop intrinsics (range, serial, ...); with `tracked` (the parsed kernel), fresh tensors
    remember which elements were written and reads of the others fail (well_formed.py)."""
    env: dict[str, Any] = dict(INTRINSICS)
    if tracked is not None:
        env.update(tracked_intrinsics(tracked))
    if loops is not None:
        env.update({k: loops for k in _LOOPS})
        env["grid"] = lambda extents: iter(())
    code = compile(case.source, f"<kernel {case.function}>", "exec")
    exec(code, env)
    args = values if values is not None else [np.zeros(t.shape, t.dtype) for t in (inputs or case.inputs)]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return env[case.function](*args, *case.op_attrs.values())


def _listed(result: Any) -> tuple[Any, ...]:
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _as_outputs(result: Any) -> tuple[TensorSpec, ...]:
    results = _listed(result)
    outputs = []
    for r in results:
        if not isinstance(r, (np.ndarray, Tracked)):
            raise InvalidKernel("the kernel must return its output tensors")
        outputs.append(TensorSpec(tuple(int(d) for d in r.shape), str(r.dtype)))
    return tuple(outputs)


def infer_outputs(case: Case) -> tuple[TensorSpec, ...]:
    """Validate `case` as a kernel and return its output tensors, as MindSpore's auto-infer would. Unless
    the case allows it, the kernel must also be well-formed (IllFormed otherwise); a wrong-result case
    always must, as a kernel whose result depends on what fresh memory held cannot be compared."""
    func = parse_function(case.source)
    if func.name != case.function:
        raise InvalidKernel("function renamed")
    if len(func.args.args) != len(case.inputs) + len(case.op_attrs):
        raise InvalidKernel("the parameters are not its inputs and op attrs")
    static_check(func, case.target)
    if sum(math.prod(t.shape) for t in case.inputs) > 2**31:
        raise InvalidKernel("inputs too large to run as Python")
    tracked = func if case.mismatch is not None or not case.allow_ill_formed else None
    try:
        with _line_budget():
            results = _run(case, tracked=tracked)
            outputs = _as_outputs(results)
            if tracked is not None:
                check_outputs_written(results)
    except BudgetSpent:
        outputs = None
    except InvalidKernel:
        raise
    except Exception as exc:
        raise InvalidKernel(f"running the kernel as Python fails: {type(exc).__name__}: {exc}") from None
    if outputs is None:
        if tracked is not None:
            _check_well_formed_capped(case, tracked)
        try:
            outputs = _as_outputs(_run(case, _empty_range))
        except InvalidKernel:
            raise
        except Exception as exc:
            raise InvalidKernel(f"output shapes cannot be inferred: {type(exc).__name__}: {exc}") from None
    return outputs


def loop_nest_extents(case: Case) -> list[int]:
    """The extents of the kernel's deepest loop nest, outermost first, found by running every loop once
    (index 0); [] when the kernel cannot run that way."""
    seen: list[tuple[int, int]] = []  # (depth, extent) of every loop, in the order they start
    open_loops: list[int] = []

    def first_only(*args: int) -> Iterator[int]:
        extent = len(range(*args))
        seen.append((len(open_loops), extent))
        open_loops.append(extent)
        try:
            if extent:
                yield range(*args)[0]
        finally:
            open_loops.pop()

    try:
        _run(case, first_only)
    except Exception:
        return []
    if not seen:
        return []
    deepest = max(range(len(seen)), key=lambda i: seen[i][0])
    nest = [seen[deepest][1]]
    depth = seen[deepest][0]
    for d, extent in reversed(seen[:deepest]):
        if d == depth - 1:
            nest.append(extent)
            depth = d
    return nest[::-1]


def padding_effect(case: Case, dims: list[Dim]) -> PaddingEffect:
    """What padding `dims` of the inputs does to the kernel's results, run as Python (padding.py)."""

    def run(values: list[np.ndarray]) -> list[np.ndarray]:
        with _line_budget():
            return list(_listed(_run(case, values=values)))

    try:
        return effect_of(run, case.inputs, dims)
    except BudgetSpent:
        return PaddingEffect.untold_because("the kernel runs too long as Python at this shape")
    except Exception as exc:
        return PaddingEffect.untold_because(f"run padded as Python, it fails: {type(exc).__name__}: {exc}")
