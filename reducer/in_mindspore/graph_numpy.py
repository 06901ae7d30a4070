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
UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "Abs": np.abs, "Neg": np.negative, "Exp": np.exp, "Expm1": np.expm1, "Log": np.log, "Log1p": np.log1p,
    "Sqrt": np.sqrt, "Rsqrt": lambda x: 1 / np.sqrt(x), "Reciprocal": lambda x: 1 / x, "Tanh": np.tanh,
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)), "Erf": _erf, "Erfc": lambda x: 1 - _erf(x), "Sin": np.sin,
    "Cos": np.cos, "Asin": np.arcsin, "ACos": np.arccos, "Atan": np.arctan, "Sinh": np.sinh, "Cosh": np.cosh,
    "Asinh": np.arcsinh, "Acosh": np.arccosh, "Floor": np.floor, "Ceil": np.ceil, "Round": np.rint,
    "Sign": np.sign, "Square": np.square, "ReLU": lambda x: np.maximum(x, 0), "LogicalNot": np.logical_not,
    "IsNan": np.isnan, "IsInf": np.isinf, "IsFinite": np.isfinite, "ZerosLike": np.zeros_like,
    "OnesLike": np.ones_like, "StopGradient": lambda x: x, "Cast": lambda x: x,
}  # fmt: skip
BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "RealDiv": np.divide, "Pow": np.power,
    "Maximum": np.maximum, "Minimum": np.minimum, "Atan2": np.arctan2, "FloorMod": np.mod, "Mod": np.fmod,
    "SquaredDifference": lambda a, b: np.square(a - b), "LogicalAnd": np.logical_and,
    "LogicalOr": np.logical_or, "Greater": np.greater, "GreaterEqual": np.greater_equal, "Less": np.less,
    "LessEqual": np.less_equal, "Equal": np.equal, "NotEqual": np.not_equal,
    "Div": lambda a, b: np.floor_divide(a, b) if a.dtype.kind in "iu" else np.divide(a, b),
    "FloorDiv": lambda a, b: np.floor(np.divide(a, b)) if a.dtype.kind == "f" else np.floor_divide(a, b),
    "DivNoNan": lambda a, b: np.where(b == 0, 0, np.divide(a, np.where(b == 0, 1, b))),
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
SUPPORTED = frozenset(UNARY) | frozenset(BINARY) | frozenset(REDUCE) | SHAPING


def unsupported(graph: dict[str, Any]) -> list[str]:
    """The ops of `graph` this reference has no rule for, each once, in graph order."""
    return list(dict.fromkeys(op["name"] for op in graph["op_desc"] if op["name"] not in SUPPORTED))


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


def apply(op: dict[str, Any], data: list[np.ndarray], tensors: list[dict[str, Any]]) -> np.ndarray:
    """What `op` computes from its data inputs (`op_data`), in numpy's dtype of them and its own shape."""
    name = op["name"]
    if name == "Round" and len(data) == 2:  # MindSpore 2.x writes its `decimals` as a second input
        return np.round(data[0], int(data[1].item()))
    if name in UNARY:
        return UNARY[name](data[0])
    if name in BINARY:
        return BINARY[name](data[0], data[1])
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


def op_data(
    op: dict[str, Any], values: dict[str, np.ndarray], exact: bool = True
) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """An op's data inputs, read from `values` (constants that are data, such as Select's 0.0, as arrays of
    their dtype, in float64 when `exact`), and all its input tensors."""
    tensors = [t for desc in op.get("input_desc") or [] for t in desc]
    operand = len(tensors) - 1 if op["name"] == "Concat" else OPERAND_INDEX.get(op["name"])
    data = []
    for index, tensor in enumerate(tensors):
        if "value" in tensor:
            if index != operand:
                constant = np.asarray(tensor["value"], tensor["data_type"])
                data.append(_exact(constant) if exact else constant)
            continue
        if tensor["tensor_name"] not in values:
            raise ValueError(f"{op['name']} reads {tensor['tensor_name']}, which nothing computed before it")
        data.append(values[tensor["tensor_name"]])
    return data, tensors


def evaluate(graph: dict[str, Any], inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The graph's outputs on `inputs` (one array per graph input, in input_desc order), each in the dtype
    and shape its output desc records. NotImplementedError for an op without a rule, ValueError for a
    graph that reads a tensor nothing computed."""
    descs = graph["input_desc"] or []
    values = {descs[i][0]["tensor_name"]: _exact(np.asarray(inputs[i])) for i in range(len(descs))}
    stored: dict[str, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for op in graph["op_desc"]:
            data, tensors = op_data(op, values)
            result = np.asarray(apply(op, data, tensors))
            (out,) = op["output_desc"]
            stored[out["tensor_name"]] = result.astype(out["data_type"]).reshape(out["shape"])
            values[out["tensor_name"]] = _exact(stored[out["tensor_name"]])
    return [stored[t["tensor_name"]] for t in graph["output_desc"]]
