"""The reference of a fused graph's results: the graph evaluated with numpy, op by op, in MindSpore's
semantics, independent of AKG (its op_dsl.py is AKG's own numpy and shares its authors' reading of an op).

Each op computes in float64 (integers and booleans in their own dtype) and its result is rounded to the
dtype its output desc records, as a kernel storing each op's result would; so the reference is the exact
result of the graph, not numpy's float16 arithmetic. `SUPPORTED` are the ops it knows; `unsupported()` names
the others, which a wrong-result check refuses rather than guesses.

Needs only numpy and the standard library: the wrong-result check (mismatch_run.py beside it) imports it, and a
bundle's repro.py carries it."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def truncating_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division rounding toward zero, as C and MindSpore's integer kernels divide."""
    quotient = np.floor_divide(a, b)
    inexact = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return np.where(inexact, quotient + 1, quotient).astype(quotient.dtype)


def _remainder(rule: Callable[[np.ndarray, np.ndarray], np.ndarray], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A remainder; NaN by an infinite divisor, as MindSpore's kernels give (C's fmod gives the dividend)."""
    return np.where(np.isinf(b), np.nan, rule(a, b)) if b.dtype.kind == "f" else rule(a, b)


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b as MindSpore's kernels divide: integers toward zero, floats by a zero of either sign as by +0."""
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        return truncating_divide(a, b)
    return np.divide(a, np.where(b == 0, 0.0, b))


UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "Abs": np.abs, "Neg": np.negative, "Exp": np.exp, "Expm1": np.expm1, "Log": np.log, "Log1p": np.log1p,
    "Sqrt": np.sqrt, "Rsqrt": lambda x: 1 / np.sqrt(x), "Reciprocal": lambda x: 1 / x, "Tanh": np.tanh,
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)), "Erf": _erf, "Erfc": _erfc, "Sin": np.sin,
    "Cos": np.cos, "Asin": np.arcsin, "ACos": np.arccos, "Atan": np.arctan, "Sinh": np.sinh, "Cosh": np.cosh,
    "Asinh": np.arcsinh, "Acosh": np.arccosh, "Floor": np.floor, "Ceil": np.ceil, "Round": np.rint,
    "Sign": lambda x: np.where(np.isnan(x), 0, np.sign(x)), "Square": np.square,
    "ReLU": lambda x: np.where(x > 0, x, 0), "LogicalNot": np.logical_not,
    "IsNan": np.isnan, "IsInf": np.isinf, "IsFinite": np.isfinite, "ZerosLike": np.zeros_like,
    "OnesLike": np.ones_like, "StopGradient": lambda x: x, "Cast": lambda x: x,
}  # fmt: skip
BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "RealDiv": _divide, "Div": _divide, "Pow": np.power,
    "Maximum": np.maximum, "Minimum": np.minimum, "Atan2": np.arctan2,
    "FloorMod": lambda a, b: _remainder(np.mod, a, b), "Mod": lambda a, b: _remainder(np.fmod, a, b),
    "SquaredDifference": lambda a, b: np.square(a - b), "LogicalAnd": np.logical_and,
    "LogicalOr": np.logical_or, "Greater": np.greater, "GreaterEqual": np.greater_equal, "Less": np.less,
    "LessEqual": np.less_equal, "Equal": np.equal, "NotEqual": np.not_equal,
    "FloorDiv": lambda a, b: np.floor(_divide(a, b)) if a.dtype.kind == "f" else np.floor_divide(a, b),
    "DivNoNan": lambda a, b: np.where(b == 0, 0, _divide(a, np.where(b == 0, 1, b))),
}  # fmt: skip
REDUCE: dict[str, Callable[..., np.ndarray]] = {
    "ReduceSum": np.sum, "ReduceMax": np.max, "ReduceMin": np.min, "ReduceProd": np.prod, "ReduceAll": np.all,
    "ReduceAny": np.any,
}  # fmt: skip
# the input index of an op's attribute-like operand (info version 2 makes these constant inputs)
OPERAND_INDEX = {
    "Transpose": 1, "Reshape": 1, "BroadcastTo": 1, "ExpandDims": 1, "Tile": 1, "Cast": 1,
    **dict.fromkeys(REDUCE, 1),
}  # fmt: skip
SHAPING = {"Transpose", "Reshape", "BroadcastTo", "ExpandDims", "Tile", "Concat", "AddN", "Select", "MatMul",
           "BatchMatMul"}  # fmt: skip
# Ops that divide by their second operand: an integer divisor of 0, or -1 under the type's minimum, traps (SIGFPE)
DIVIDING = frozenset({"RealDiv", "Div", "FloorDiv", "FloorMod", "Mod"})
ELEMENTWISE = frozenset(UNARY) | frozenset(BINARY)
# Ops whose MindSpore meaning the reference does not give on inputs of some dtype kinds (numpy's kind letters),
# and why; found by the op-semantics matrix (op_matrix.py beside this file).
# MindSpore's own float32 kernels of these ops approximate: their largest error in units in the last place of
# the result, as the op matrix (op_matrix.py) measured it on MindSpore 2.10's CPU kernels; every other op is
# within ACCURATE_ULPS of the exact result (SquaredDifference rounds twice).
APPROXIMATE_ULPS = {"Exp": 21, "Tanh": 144}
ACCURATE_ULPS = 2
# Ops whose exact result needs no rounding in any dtype: an integer (a floor, a floored quotient, a comparison, a
# test) or one of its operands, moved or signed. MindSpore's kernels of them are exact (the op matrix holds them
# to 0 ulps, near integer ties included: MindSpore floors a float16 quotient it computed exactly, where rounding
# it to float16 first moves 0.8 % of random quotients across an integer), so a right kernel gives the reference's
# result wherever their operands are exact: they add no error of their own.
EXACT = frozenset({
    "Abs", "Neg", "Floor", "Ceil", "Round", "Sign", "ReLU", "Maximum", "Minimum", "FloorDiv", "Greater",
    "GreaterEqual", "Less", "LessEqual", "Equal", "NotEqual", "LogicalNot", "LogicalAnd", "LogicalOr", "IsNan",
    "IsInf", "IsFinite", "ZerosLike", "OnesLike", "StopGradient",
})  # fmt: skip


# Remainders MindSpore computes as a - b * floor(a / b) (or trunc): rounded at the size of the dividend, not of the
# remainder, which may cancel to nearly nothing (the op matrix: float64 FloorMod of -2.5 by 1 - 2**-53).
AT_DIVIDEND = frozenset({"FloorMod", "Mod"})


def error_scale(name: str, result: np.ndarray, data: list[np.ndarray]) -> np.ndarray:
    """The size at which MindSpore's kernel of op `name` rounds its result: the result's own, but for a remainder
    its dividend's where larger."""
    size = np.abs(np.nan_to_num(np.asarray(result, np.float64), posinf=0, neginf=0))
    if name in AT_DIVIDEND:
        dividend = np.abs(np.nan_to_num(np.asarray(data[0], np.float64), posinf=0, neginf=0))
        size = np.maximum(size, np.broadcast_to(dividend, size.shape))
    return size


def mindspore_ulps(name: str, out_dtype: Any = None) -> int:
    """How many units in the last place MindSpore's own kernel of op `name` (giving `out_dtype`) may be off the
    exact result: 0 for an op whose result needs no rounding (EXACT, and a cast to an integer or boolean dtype:
    it truncates)."""
    if name in EXACT or (name == "Cast" and out_dtype is not None and np.dtype(out_dtype).kind in "iub"):
        return 0
    return APPROXIMATE_ULPS.get(name, ACCURATE_ULPS)


UNSUPPORTED_ON = {
    "Pow": ("iub", "MindSpore's integer Pow goes through floating point (negative exponents, overflow)"),
    **dict.fromkeys(
        ("ReduceAny", "ReduceAll"), ("iuf", "MindSpore's CPU kernels read an input that is not bool as bool bytes")
    ),
}
SUPPORTED = frozenset(UNARY) | frozenset(BINARY) | frozenset(REDUCE) | SHAPING


def traps(a: Any, b: Any, dtype: str) -> bool:
    """Whether the integer division a / b in `dtype` traps: by zero, or the minimum by -1."""
    return b == 0 or (np.dtype(dtype).kind == "i" and b == -1 and a == np.iinfo(dtype).min)


def unsupported(graph: dict[str, Any]) -> list[str]:
    """The ops of `graph` this reference has no rule for ("Pow on int32" where only the dtype is refused), each
    once, in graph order."""
    missing = []
    for op in graph["op_desc"]:
        kinds, _ = UNSUPPORTED_ON.get(op["name"], ("", ""))
        dtypes = [t["data_type"] for desc in op.get("input_desc") or [] for t in desc if "value" not in t]
        if op["name"] not in SUPPORTED:
            missing.append(op["name"])
        missing += [f"{op['name']} on {dtype}" for dtype in dtypes if np.dtype(dtype).kind in kinds]
    return list(dict.fromkeys(missing))


def _attr(op: dict[str, Any], name: str) -> Any:
    return next((a.get("value") for a in op.get("attr") or [] if a.get("name") == name), None)


def _operand(op: dict[str, Any], name: str, tensors: list[dict[str, Any]]) -> Any:
    """The operand `name`: its constant input (info version 2) or its attr (older files)."""
    index = OPERAND_INDEX.get(op["name"])
    if index is not None and index < len(tensors) and "value" in tensors[index]:
        return tensors[index]["value"]
    return _attr(op, name)


def _exact(array: np.ndarray) -> np.ndarray:
    return array.astype(np.float64) if array.dtype.kind == "f" else array


def renamed(op: dict[str, Any], name: str) -> dict[str, Any]:
    """`op` as another op of the same operands (a max as a sum, to reduce a mask the same way)."""
    return {**op, "name": name}


def _reduce(op: dict[str, Any], x: np.ndarray, axis: Any) -> np.ndarray:
    axes = tuple(range(x.ndim)) if axis in (None, []) else tuple(axis if isinstance(axis, list) else [axis])
    return REDUCE[op["name"]](x, axis=axes, keepdims=bool(_attr(op, "keep_dims")))


def _matmul(op: dict[str, Any], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a.swapaxes(-1, -2) if _attr(op, "transpose_a") else a
    b = b.swapaxes(-1, -2) if _attr(op, "transpose_b") else b
    return np.matmul(a, b)


def _broadcast_to(x: np.ndarray, target: list[int]) -> np.ndarray:
    full = [1] * (len(target) - x.ndim) + list(x.shape)
    return np.broadcast_to(x.reshape(full), [full[i] if t == -1 else t for i, t in enumerate(target)])


def _expand_dims(x: np.ndarray, axis: Any) -> np.ndarray:
    for a in axis if isinstance(axis, list) else [axis]:
        x = np.expand_dims(x, a)
    return x


def _in_dtype_range(name: str, result: np.ndarray, data: list[np.ndarray], tensors: list[dict[str, Any]]) -> np.ndarray:
    """What MindSpore's kernels make of the limits of the operands' dtype: DivNoNan gives 0 for a divisor up to
    the epsilon of the dtype it computes in (float16 in float32), not only for 0."""
    dtype = np.dtype(tensors[-1]["data_type"])
    if dtype.kind != "f" or name != "DivNoNan":
        return result
    return np.where(np.abs(data[1]) <= np.finfo(np.promote_types(dtype, np.float32)).eps, 0.0, result)


# Reductions whose MindSpore kernels skip a NaN element (the op matrix): a slice with one is undefined.
_NAN_SKIPPING = frozenset({"ReduceMax", "ReduceMin"})


def undefined(
    op: dict[str, Any], data: list[np.ndarray], tensors: list[dict[str, Any]], shape: tuple[int, ...]
) -> np.ndarray:
    """Where MindSpore's own kernel of `op` gives what it likes, so that a float result there is undefined and
    not compared:
    - an operand of an elementwise op is NaN (ReLU gives 0, Maximum the other operand, NaN / -0.0 -inf), or an
      element of a max or min reduction's slice is (MindSpore's kernels skip it: the maximum of the others);
    - a remainder (FloorMod, Mod) whose quotient is past the dtype's precision or below its smallest normal
      number (computed as a - b * floor(a / b), it keeps no digit), or whose exact quotient lies within float64's
      rounding of an integer: MindSpore floors the quotient it rounded, so the remainder lands on either side of
      its jump by b (float64 operands only: a quotient of float32 or float16 operands is never that close)."""
    name, found = op["name"], np.zeros(shape, bool)
    if name in _NAN_SKIPPING and data[0].dtype.kind == "f":
        return np.reshape(_reduce(renamed(op, "ReduceAny"), np.isnan(data[0]), _operand(op, "axis", tensors)), shape)
    if name not in ELEMENTWISE:
        return found
    for operand in data:
        if operand.dtype.kind == "f":
            found |= np.broadcast_to(np.isnan(operand), shape)
    dtype = np.dtype(tensors[-1]["data_type"])
    if name in AT_DIVIDEND and dtype.kind == "f":
        info = np.finfo(dtype)
        a, b = np.abs(data[0]), np.abs(data[1])
        found |= np.broadcast_to((a >= b * 2.0 ** (info.nmant + 1)) | ((a != 0) & (a < b * float(info.tiny))), shape)
        quotient = np.asarray(data[0], np.longdouble) / np.asarray(data[1], np.longdouble)
        off = np.abs(quotient - np.round(quotient))
        found |= np.broadcast_to((off != 0) & (off <= np.abs(quotient) * np.finfo(np.float64).eps), shape)
    return found


def apply(op: dict[str, Any], data: list[np.ndarray], tensors: list[dict[str, Any]]) -> np.ndarray:
    """What `op` computes from its data inputs (`op_data`), in numpy's dtype of them and its own shape."""
    name = op["name"]
    if name == "Round" and len(data) == 2:  # MindSpore 2.x writes its `decimals` as a second input
        return np.round(data[0], int(data[1].item()))
    if name in UNARY:
        return UNARY[name](data[0])
    if name in BINARY:
        return _in_dtype_range(name, BINARY[name](data[0], data[1]), data, tensors)
    if name in REDUCE:
        return _reduce(op, data[0], _operand(op, "axis", tensors))
    if name in ("MatMul", "BatchMatMul"):
        return _matmul(op, data[0], data[1])
    if name == "Select":
        return np.where(data[0].astype(bool), data[1], data[2])
    if name == "AddN":
        return sum(data[1:], data[0])
    if name == "Concat":
        axis = _attr(op, "axis")
        return np.concatenate(data, axis=tensors[-1]["value"] if axis is None else axis)
    if name == "Transpose":
        return np.transpose(data[0], _operand(op, "perm", tensors))
    if name == "Reshape":
        shape = _operand(op, "shape", tensors)
        return np.reshape(data[0], shape if shape is not None else op["output_desc"][0]["shape"])
    if name == "BroadcastTo":
        return _broadcast_to(data[0], _operand(op, "shape", tensors))
    if name == "ExpandDims":
        return _expand_dims(data[0], _operand(op, "axis", tensors))
    if name == "Tile":
        return np.tile(data[0], _operand(op, "multiples", tensors))
    raise NotImplementedError(f"the numpy reference has no rule for {name}")


def data_tensors(op: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """An op's data operands (constants that are data, such as Select's 0.0, included; an attribute-like
    operand such as Transpose's perm not), and all its input tensors."""
    tensors = [t for desc in op.get("input_desc") or [] for t in desc]
    operand = len(tensors) - 1 if op["name"] == "Concat" else OPERAND_INDEX.get(op["name"])
    return [t for index, t in enumerate(tensors) if index != operand or "value" not in t], tensors


def op_data(
    op: dict[str, Any], values: dict[str, np.ndarray], exact: bool = True
) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """An op's data inputs, read from `values` (constants as arrays of their dtype, in float64 when `exact`),
    and all its input tensors."""
    operands, tensors = data_tensors(op)
    data = []
    for tensor in operands:
        if "value" in tensor:
            constant = np.asarray(tensor["value"], tensor["data_type"])
            data.append(_exact(constant) if exact else constant)
        elif tensor["tensor_name"] not in values:
            raise ValueError(f"{op['name']} reads {tensor['tensor_name']}, which nothing computed before it")
        else:
            data.append(values[tensor["tensor_name"]])
    return data, tensors


# Called after each op with the op, its data inputs (as the op computed with them) and its exact result.
Watcher = Callable[[dict[str, Any], list[np.ndarray], np.ndarray], None]


def evaluate(graph: dict[str, Any], inputs: list[np.ndarray], watch: Watcher | None = None) -> list[np.ndarray]:
    """The graph's outputs on `inputs` (one array per graph input, in input_desc order), each in the dtype
    and shape its output desc records. NotImplementedError for an op without a rule, ValueError for a
    graph that reads a tensor nothing computed."""
    descs = graph["input_desc"] or []
    values = {descs[i][0]["tensor_name"]: _exact(np.asarray(inputs[i])) for i in range(len(descs))}
    stored: dict[str, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for op in graph["op_desc"]:
            data, tensors = op_data(op, values)
            (out,) = op["output_desc"]
            if np.dtype(out["data_type"]).kind == "f":  # a float result is computed in float64 (Sqrt of an int)
                data = [d.astype(np.float64) for d in data]
            result = np.asarray(apply(op, data, tensors))
            if result.dtype.kind == "f":
                result = np.where(undefined(op, data, tensors, result.shape), np.nan, result)
            if watch is not None:
                watch(op, data, result)
            stored[out["tensor_name"]] = result.astype(out["data_type"]).reshape(out["shape"])
            values[out["tensor_name"]] = _exact(stored[out["tensor_name"]])
    return [stored[t["tensor_name"]] for t in graph["output_desc"]]
