"""An independent check of a fused graph's recorded shapes and dtypes: the graph evaluated with numpy on
zero-filled inputs, op by op (MindSpore's semantics where numpy's differ: a full reduction gives [1]).
Tests compare it with what the reducer's own shape inference wrote, so the inference is not checked by
itself."""

from __future__ import annotations

from typing import Any

import numpy as np

from reducer.kernels import graph as graphs

UNARY = {"Exp": np.exp, "Log": np.log, "Sqrt": np.sqrt, "Rsqrt": lambda x: 1 / np.sqrt(x), "Neg": np.negative,
         "Abs": np.abs, "ReLU": lambda x: np.maximum(x, 0)}  # fmt: skip
BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "RealDiv": np.divide, "Maximum": np.maximum,
          "Minimum": np.minimum}  # fmt: skip
REDUCE = {"ReduceSum": np.sum, "ReduceMax": np.max, "ReduceMin": np.min, "ReduceMean": np.mean}


def _reduce(op: dict[str, Any], x: np.ndarray) -> np.ndarray:
    axis = graphs.operand(op, "axis", 1)
    axes = tuple(range(x.ndim)) if axis in (None, []) else tuple(axis if isinstance(axis, list) else [axis])
    out = REDUCE[op["name"]](x, axis=axes, keepdims=graphs.flag(op, "keep_dims"))
    return out.reshape(1) if out.ndim == 0 else out


def _matmul(op: dict[str, Any], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a.swapaxes(-1, -2) if graphs.flag(op, "transpose_a") else a
    b = b.swapaxes(-1, -2) if graphs.flag(op, "transpose_b") else b
    return np.matmul(a, b)


def _apply(op: dict[str, Any], data: list[np.ndarray]) -> np.ndarray:
    name = op["name"]
    if name in UNARY:
        return UNARY[name](data[0])
    if name in BINARY:
        return BINARY[name](data[0], data[1])
    if name in REDUCE:
        return _reduce(op, data[0])
    if name in ("MatMul", "BatchMatMul"):
        return _matmul(op, data[0], data[1])
    if name == "Transpose":
        return np.transpose(data[0], graphs.operand(op, "perm", 1))
    if name == "Reshape":
        return np.reshape(data[0], graphs.operand(op, "shape", 1))
    if name == "BroadcastTo":
        target = graphs.operand(op, "shape", 1)
        full = [1] * (len(target) - data[0].ndim) + list(data[0].shape)
        return np.broadcast_to(data[0], [f if t == -1 else t for t, f in zip(target, full, strict=True)])
    if name == "Cast":
        return data[0].astype(op["output_desc"][0]["data_type"])
    raise NotImplementedError(f"no numpy rule for {name}: add one")


def numpy_mismatches(graph: dict[str, Any]) -> list[str]:
    """Where the recorded shapes and dtypes of `graph` differ from numpy's evaluation of it; a read of a
    tensor that does not exist yet, an output no op writes, or an op numpy refuses is a mismatch too."""
    values = {t["tensor_name"]: np.zeros(t["shape"], t["data_type"]) for t in graphs.graph_inputs(graph)}
    problems = []
    with np.errstate(all="ignore"):
        for op in graph["op_desc"]:
            data = []
            for tensor in graphs.op_inputs(op):
                if graphs.is_constant(tensor):
                    if op["name"] in BINARY:
                        data.append(np.asarray(tensor["value"], tensor["data_type"]))
                    continue
                if tensor["tensor_name"] not in values:
                    return [f"{op['name']} reads {tensor['tensor_name']}, which nothing wrote before"]
                data.append(values[tensor["tensor_name"]])
            try:
                result = _apply(op, data)
            except ValueError as exc:
                return [f"{op['name']}: numpy refuses its inputs: {exc}"]
            (out,) = op["output_desc"]
            values[out["tensor_name"]] = result
            if (list(result.shape), str(result.dtype)) != (out["shape"], out["data_type"]):
                problems.append(f"{op['name']} records {out['shape']} {out['data_type']}, numpy gives "
                                f"{list(result.shape)} {result.dtype}")  # fmt: skip
    written = {out["tensor_name"] for op in graph["op_desc"] for out in op["output_desc"]}
    problems += [f"graph output {t['tensor_name']} is written by no op" for t in graph["output_desc"]
                 if t["tensor_name"] not in written]  # fmt: skip
    return problems
