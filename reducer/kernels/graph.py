"""Fused graph kernels as MindSpore's graph-kernel fusion writes them for AKG (`akg_kernel_meta/Fused_*.info`):
reading and checking such a graph, shape and dtype inference for each op kind, and the edits the graph passes
make (delete ops with rewiring, cut at a tensor, change dims or dtypes). Every edit is pruned (dead ops and
unused graph inputs go) and re-inferred; a graph whose shapes do not follow from its inputs is invalid.

A graph is the `.info` JSON object itself, so every field MindSpore wrote and we do not edit reaches AKG as it
was. Values that became inputs in info version 2 (a reduce's axis, a transpose's perm, a reshape's shape) are
read from the input's `value`, or from the attr of that name in older files.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Iterable
from typing import Any

from reducer.core.errors import InputError, InvalidKernel
from reducer.core.targets import TARGETS

Graph = dict[str, Any]
Tensor = dict[str, Any]
MAX_VOLUME = 2**31

UNARY = {
    "Abs", "Neg", "Exp", "Expm1", "Log", "Log1p", "Sqrt", "Rsqrt", "Reciprocal", "Tanh", "Sigmoid", "Erf",
    "Erfc", "Sin", "Cos", "Asin", "ACos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Floor", "Ceil", "Round",
    "Sign", "Square", "ReLU", "LogicalNot", "Assign", "Reshape_", "ZerosLike", "OnesLike", "StopGradient",
}  # fmt: skip
ELEMENTWISE = {
    "Add", "Sub", "Mul", "RealDiv", "Div", "DivNoNan", "FloorDiv", "Mod", "FloorMod", "Pow", "Maximum",
    "Minimum", "Atan2", "SquaredDifference", "AddN", "Select", "LogicalAnd", "LogicalOr",
}  # fmt: skip
COMPARISON = {"Greater", "GreaterEqual", "Less", "LessEqual", "Equal", "NotEqual"}
PREDICATE = {"IsNan", "IsInf", "IsFinite"}
REDUCE = {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceAll", "ReduceAny"}
MATMUL = {"MatMul", "BatchMatMul"}
# ops whose shape-valued operand follows the dims of the graph (shrunk together with them)
SHAPE_OPERAND = {"Reshape": ("shape", 1), "BroadcastTo": ("shape", 1)}
# MindSpore's type ids, for Cast's dst_type input (akg/ms/info_version_adapt.py)
TYPE_IDS = {
    "bool": 30, "int8": 32, "int16": 33, "int32": 34, "int64": 35, "uint8": 37, "uint16": 38, "uint32": 39,
    "uint64": 40, "float16": 42, "float32": 43, "float64": 44, "bfloat16": 45,
}  # fmt: skip
TYPE_NAMES = {v: k for k, v in TYPE_IDS.items()}


def is_graph(info: Any) -> bool:
    """A fused graph, as opposed to a Custom op carrying Hybrid DSL source."""
    ops = info.get("op_desc") if isinstance(info, dict) else None
    if not isinstance(ops, list) or not ops:
        return False
    return not (len(ops) == 1 and isinstance(ops[0], dict) and ops[0].get("name") == "Custom")


def dumps(graph: Graph) -> str:
    return json.dumps(graph, separators=(",", ":"))


def loads(text: str) -> Graph:
    return json.loads(text)


# ---- reading --------------------------------------------------------------------------------------------


def graph_inputs(graph: Graph) -> list[Tensor]:
    """The graph's tensor inputs; a graph of constants only (an accumulator zeroed by BroadcastTo) has
    `"input_desc": null`."""
    return [desc[0] for desc in graph["input_desc"] or []]


def op_inputs(op: dict[str, Any]) -> list[Tensor]:
    return [desc[0] for desc in op.get("input_desc") or []]


def is_constant(tensor: Tensor) -> bool:
    return "value" in tensor


def op_names(graph: Graph) -> list[str]:
    return [op["name"] for op in graph["op_desc"]]


def _attr(op: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((a for a in op.get("attr") or [] if a.get("name") == name), None)


def operand(op: dict[str, Any], name: str, index: int) -> Any:
    """An op's attribute-like operand: the constant input at `index` (info v2), else the attr `name`."""
    inputs = op_inputs(op)
    if index < len(inputs) and is_constant(inputs[index]):
        return inputs[index]["value"]
    attr = _attr(op, name)
    return None if attr is None else attr.get("value")


def set_operand(op: dict[str, Any], name: str, index: int, value: Any) -> None:
    inputs = op_inputs(op)
    if index < len(inputs) and is_constant(inputs[index]):
        inputs[index]["value"] = value
        if isinstance(value, list):
            inputs[index]["shape"] = [len(value)]
        return
    attr = _attr(op, name)
    if attr is not None:
        attr["value"] = value


def flag(op: dict[str, Any], name: str) -> bool:
    attr = _attr(op, name)
    return bool(attr and attr.get("value"))


def set_flag(op: dict[str, Any], name: str, value: bool) -> None:
    attr = _attr(op, name)
    if attr is not None:
        attr["value"] = value


def check_structure(info: Any, origin: str) -> Graph:
    """`info` as a graph, or an InputError naming the first field that is not what MindSpore writes."""

    def fail(field: str, expected: str) -> InputError:
        return InputError(f"{origin}: field '{field}': expected {expected}")

    for key in ("input_desc", "output_desc", "op_desc"):
        if not isinstance(info.get(key), list) and not (key == "input_desc" and info.get(key) is None):
            raise fail(key, "a list" if key != "input_desc" else "a list, or null for a graph of constants")
    if info.get("process") not in TARGETS:
        raise fail("process", f"one of {', '.join(TARGETS)}")

    def tensor(node: Any, field: str) -> None:
        if not isinstance(node, dict):
            raise fail(field, "a tensor description")
        shape = node.get("shape")
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 1 for d in shape):
            raise fail(f"{field}.shape", f"a list of positive integers, got {shape!r}")
        if not isinstance(node.get("data_type"), str):
            raise fail(f"{field}.data_type", "a dtype name")
        if not isinstance(node.get("tensor_name"), str):
            raise fail(f"{field}.tensor_name", "a name")

    for i, desc in enumerate(info["input_desc"] or []):
        if not isinstance(desc, list) or len(desc) != 1:
            raise fail(f"input_desc.{i}", "a list holding one tensor")
        tensor(desc[0], f"input_desc.{i}.0")
    for i, node in enumerate(info["output_desc"]):
        tensor(node, f"output_desc.{i}")
    for i, op in enumerate(info["op_desc"]):
        if not isinstance(op, dict) or not isinstance(op.get("name"), str):
            raise fail(f"op_desc.{i}.name", "an op name")
        if op.get("attr") not in (None, {}) and not isinstance(op["attr"], list):
            raise fail(f"op_desc.{i}.attr", "a list of attrs, {} or null")
        if not all(isinstance(a, dict) for a in op.get("attr") or []):
            raise fail(f"op_desc.{i}.attr", "attrs as objects (name, value)")
        for j, desc in enumerate(op.get("input_desc") or []):
            if not isinstance(desc, list) or not desc:
                raise fail(f"op_desc.{i}.input_desc.{j}", "a list of tensors")
            for k, node in enumerate(desc):
                tensor(node, f"op_desc.{i}.input_desc.{j}.{k}")
        if not isinstance(op.get("output_desc"), list) or not op["output_desc"]:
            raise fail(f"op_desc.{i}.output_desc", "a list of tensors")
        for j, node in enumerate(op["output_desc"]):
            tensor(node, f"op_desc.{i}.output_desc.{j}")
    return info


# ---- inference ------------------------------------------------------------------------------------------


def broadcast(shapes: Iterable[list[int]]) -> list[int]:
    out: list[int] = []
    for shape in shapes:
        rank = max(len(out), len(shape))
        a, b = [1] * (rank - len(out)) + out, [1] * (rank - len(shape)) + list(shape)
        if any(x != y and 1 not in (x, y) for x, y in zip(a, b, strict=True)):
            raise InvalidKernel(f"shapes {out} and {shape} do not broadcast")
        out = [max(x, y) for x, y in zip(a, b, strict=True)]
    return out


def _axes(value: Any, rank: int) -> list[int]:
    axes = value if isinstance(value, list) else [] if value is None else [value]
    if not all(isinstance(a, int) and -max(rank, 1) <= a < max(rank, 1) for a in axes):
        raise InvalidKernel(f"axis {value} out of range for rank {rank}")
    return sorted({a % max(rank, 1) for a in axes}) or list(range(rank))


def _reduce(op: dict[str, Any], x: list[int]) -> list[int]:
    axes = _axes(operand(op, "axis", 1), len(x))
    if flag(op, "keep_dims"):
        return [1 if i in axes else d for i, d in enumerate(x)]
    return [d for i, d in enumerate(x) if i not in axes] or [1]


def _matmul(op: dict[str, Any], a: list[int], b: list[int]) -> list[int]:
    batch = op["name"] == "BatchMatMul"
    if len(a) < 2 or len(b) < 2 or (not batch and (len(a) != 2 or len(b) != 2)):
        raise InvalidKernel(f"{op['name']} of shapes {a} and {b}")
    m, k = (a[-1], a[-2]) if flag(op, "transpose_a") else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if flag(op, "transpose_b") else (b[-2], b[-1])
    if k != k2:
        raise InvalidKernel(f"{op['name']} contracts {k} with {k2}")
    return [*broadcast([a[:-2], b[:-2]]), m, n] if batch else [m, n]


def _reshape(op: dict[str, Any], x: list[int]) -> list[int]:
    """The target shape; when it no longer holds the input's elements (a dim was shrunk), the one target
    dim that makes the volumes equal again is adjusted. Older graphs give no shape operand: the output desc
    holds the target (a ResNet's NHWC weight reshaped to NCHW)."""
    value = operand(op, "shape", 1)
    target = list(value if value is not None else op["output_desc"][0]["shape"])
    volume = math.prod(x)
    if not target and volume == 1:  # to a scalar, which MindSpore records as [1]
        return [1]
    if -1 in target:
        known = math.prod(d for d in target if d != -1)
        return [volume // known if d == -1 else d for d in target]
    if math.prod(target) == volume:
        return target
    for i in sorted(range(len(target)), key=lambda i: -target[i]):
        rest = math.prod(target[:i] + target[i + 1 :])
        if rest and volume % rest == 0:
            target[i] = volume // rest
            set_operand(op, "shape", 1, target)
            return target
    raise InvalidKernel(f"Reshape of {x} to {target}")


def _transpose(op: dict[str, Any], x: list[int]) -> list[int]:
    perm = operand(op, "perm", 1)
    if not isinstance(perm, list) or sorted(perm) != list(range(len(x))):
        raise InvalidKernel(f"Transpose of rank {len(x)} with perm {perm}")
    return [x[p] for p in perm]


def _broadcast_to(op: dict[str, Any], x: list[int]) -> list[int]:
    target = operand(op, "shape", 1)
    if not isinstance(target, list) or len(target) < len(x):
        raise InvalidKernel(f"BroadcastTo of {x} to {target}")
    full = [1] * (len(target) - len(x)) + x
    out = [f if t == -1 else t for t, f in zip(target, full, strict=True)]
    if broadcast([full, out]) != out:
        raise InvalidKernel(f"BroadcastTo of {x} to {target}")
    return out


def _expand_dims(op: dict[str, Any], x: list[int]) -> list[int]:
    axis = operand(op, "axis", 1)
    axes = axis if isinstance(axis, list) else [axis]
    out = list(x)
    for a in axes:
        if not isinstance(a, int) or not -len(out) - 1 <= a <= len(out):
            raise InvalidKernel(f"ExpandDims of {x} at axis {axis}")
        out.insert(a % (len(out) + 1), 1)
    return out


def _tile(op: dict[str, Any], x: list[int]) -> list[int]:
    multiples = operand(op, "multiples", 1)
    if not isinstance(multiples, list) or len(multiples) < len(x) or not all(m >= 1 for m in multiples):
        raise InvalidKernel(f"Tile of {x} by {multiples}")
    full = [1] * (len(multiples) - len(x)) + x
    return [d * m for d, m in zip(full, multiples, strict=True)]


def _concat(op: dict[str, Any], xs: list[list[int]]) -> list[int]:
    axis = operand(op, "axis", len(xs))
    rank = len(xs[0])
    if not isinstance(axis, int) or not -rank <= axis < rank:
        raise InvalidKernel(f"Concat of rank {rank} at axis {axis}")
    axis %= rank
    rest = [x[:axis] + x[axis + 1 :] for x in xs]
    if any(len(x) != rank or r != rest[0] for x, r in zip(xs, rest, strict=True)):
        raise InvalidKernel(f"Concat of {xs} at axis {axis}")
    return [*xs[0][:axis], sum(x[axis] for x in xs), *xs[0][axis + 1 :]]


def _gather(op: dict[str, Any], params: list[int], indices: list[int]) -> list[int]:
    axis = operand(op, "axis", 2)
    if not isinstance(axis, int) or not -len(params) <= axis < len(params):
        raise InvalidKernel(f"Gather of {params} at axis {axis}")
    axis %= len(params)
    return [*params[:axis], *indices, *params[axis + 1 :]]


def _cast_dtype(op: dict[str, Any], recorded: str) -> str:
    value = operand(op, "dst_type", 1)
    if isinstance(value, int):
        return TYPE_NAMES.get(value, recorded)
    return value if isinstance(value, str) else recorded


ShapeRule = Callable[[dict[str, Any], list[list[int]]], list[int]]
SHAPE_RULES: dict[str, ShapeRule] = {
    **{name: (lambda op, xs: list(xs[0])) for name in UNARY | PREDICATE | {"Cast"}},
    **{name: (lambda op, xs: broadcast(xs)) for name in ELEMENTWISE | COMPARISON},
    **{name: (lambda op, xs: _reduce(op, xs[0])) for name in REDUCE},
    **{name: (lambda op, xs: _matmul(op, xs[0], xs[1])) for name in MATMUL},
    "Reshape": lambda op, xs: _reshape(op, xs[0]),
    "Transpose": lambda op, xs: _transpose(op, xs[0]),
    "BroadcastTo": lambda op, xs: _broadcast_to(op, xs[0]),
    "ExpandDims": lambda op, xs: _expand_dims(op, xs[0]),
    "Tile": lambda op, xs: _tile(op, xs[0]),
    "Concat": _concat,
    "Gather": lambda op, xs: _gather(op, xs[0], xs[1]),
}


def _out_dtype(op: dict[str, Any], dtypes: list[str]) -> str:
    name, recorded = op["name"], op["output_desc"][0]["data_type"]
    if name == "Cast":
        return _cast_dtype(op, recorded)
    if name in COMPARISON or name in PREDICATE:
        # AKG writes the dtype the output desc asks for (a LessEqual to float16 in MindSpore's dropout fusion)
        return recorded
    if name == "Gather":
        return dtypes[0]
    if name in MATMUL:
        attr = _attr(op, "dst_type")
        return attr["value"] if attr and isinstance(attr.get("value"), str) else dtypes[0]
    data = dtypes[1:] if name == "Select" else dtypes
    if not data:  # its data are constants (Select between 0.0 and 1.0): their dtype is what the desc says
        return recorded
    if len(set(data)) > 1:
        raise InvalidKernel(f"{name} of dtypes {', '.join(data)}")
    return data[0]


def infer(graph: Graph) -> Graph:
    """Recompute every op's input and output shapes and dtypes from the graph inputs, in op order; the
    graph's output_desc follows. InvalidKernel when a tensor is read before it exists, an op's operands do
    not fit, or an op of unknown kind sees other shapes than recorded."""
    known: dict[str, Tensor] = {}
    for tensor in graph_inputs(graph):
        if tensor["tensor_name"] in known:
            raise InvalidKernel(f"graph input {tensor['tensor_name']} listed twice")
        known[tensor["tensor_name"]] = tensor
    for op in graph["op_desc"]:
        data: list[Tensor] = []
        for desc in op.get("input_desc") or []:
            for tensor in desc:
                if is_constant(tensor):
                    continue
                source = known.get(tensor["tensor_name"])
                if source is None:
                    raise InvalidKernel(f"{op['name']} reads {tensor['tensor_name']} before it is computed")
                if op["name"] not in SHAPE_RULES and (
                    tensor["shape"] != source["shape"] or tensor["data_type"] != source["data_type"]
                ):
                    raise InvalidKernel(f"{op['name']} (no shape rule) would see other inputs than recorded")
                tensor["shape"], tensor["data_type"] = list(source["shape"]), source["data_type"]
                data.append(tensor)
        rule = SHAPE_RULES.get(op["name"])
        if not data:  # an op of constants only (BroadcastTo of 0.0 to the shape attr): its data is the first
            data = op_inputs(op)[:1]
        if rule is not None:
            if not data:
                raise InvalidKernel(f"{op['name']} has no tensor input")
            if len(op["output_desc"]) != 1:
                raise InvalidKernel(f"{op['name']} with {len(op['output_desc'])} outputs")
            out = op["output_desc"][0]
            try:
                out["shape"] = rule(op, [t["shape"] for t in data])
                out["data_type"] = _out_dtype(op, [t["data_type"] for t in data if not is_constant(t)])
            except (TypeError, ValueError, ZeroDivisionError, IndexError) as exc:  # operand values of a wrong kind
                raise InvalidKernel(f"{op['name']} cannot take its operands: {type(exc).__name__}: {exc}") from None
        for out in op["output_desc"]:
            if math.prod(out["shape"]) > MAX_VOLUME or not all(d >= 1 for d in out["shape"]):
                raise InvalidKernel(f"{op['name']} output of shape {out['shape']}")
            if out["tensor_name"] in known:
                raise InvalidKernel(f"tensor {out['tensor_name']} written twice")
            known[out["tensor_name"]] = out
    if not graph["output_desc"]:
        raise InvalidKernel("the graph has no outputs")
    for out in graph["output_desc"]:
        source = known.get(out["tensor_name"])
        if source is None or source in graph_inputs(graph):
            raise InvalidKernel(f"graph output {out['tensor_name']} is not computed by an op")
        out["shape"], out["data_type"] = list(source["shape"]), source["data_type"]
    return graph


def prune(graph: Graph) -> Graph:
    """Drop ops no output depends on and graph inputs no op reads."""
    live = {t["tensor_name"] for t in graph["output_desc"]}
    kept = []
    for op in reversed(graph["op_desc"]):
        if any(t["tensor_name"] in live for t in op["output_desc"]):
            kept.append(op)
            live |= {t["tensor_name"] for desc in op.get("input_desc") or [] for t in desc if not is_constant(t)}
    graph["op_desc"] = kept[::-1]
    graph["input_desc"] = [d for d in graph["input_desc"] or [] if d[0]["tensor_name"] in live]
    return graph


def checked(graph: Graph) -> Graph:
    """The graph pruned and re-inferred (InvalidKernel if that fails)."""
    return infer(prune(graph))


def mismatches(graph: Graph) -> list[str]:
    """Where the recorded shapes and dtypes of a graph differ from what its inputs give."""
    inferred = infer(copy.deepcopy(graph))
    out = []
    for op, again in zip(graph["op_desc"], inferred["op_desc"], strict=True):
        for t, u in zip(op["output_desc"], again["output_desc"], strict=True):
            if (t["shape"], t["data_type"]) != (u["shape"], u["data_type"]):
                out.append(
                    f"{op['name']} writes {t['tensor_name']} as {t['shape']} {t['data_type']}, "
                    f"its inputs give {u['shape']} {u['data_type']}"
                )
    return out


# ---- edits ----------------------------------------------------------------------------------------------


def _fresh_name(graph: Graph) -> str:
    names = {t["tensor_name"] for t in graph_inputs(graph)}
    names |= {t["tensor_name"] for op in graph["op_desc"] for desc in op.get("input_desc") or [] for t in desc}
    i = len(names)
    while f"input_{i}" in names:
        i += 1
    return f"input_{i}"


def _rename_reads(graph: Graph, old: str, new: str, start: int) -> None:
    for op in graph["op_desc"][start:]:
        for desc in op.get("input_desc") or []:
            for t in desc:
                if not is_constant(t) and t["tensor_name"] == old:
                    t["tensor_name"] = new


def delete_ops(graph: Graph, drop: Iterable[int], fresh: bool = False) -> Graph:
    """`graph` without the ops `drop`: who read a deleted op's output reads the op's first input of the same
    shape and dtype instead, or (none, or `fresh`) a new graph input of that shape and dtype. A graph output
    written by a deleted op is replaced by the op's inputs that other ops compute. Not yet pruned or checked."""
    graph = copy.deepcopy(graph)
    drop = set(drop)
    feeds: dict[str, list[str]] = {}  # a deleted op's output -> the tensors that op read
    for index in sorted(drop):
        op = graph["op_desc"][index]
        reads = [t for t in op_inputs(op) if not is_constant(t)]
        for out in op["output_desc"]:
            feeds[out["tensor_name"]] = [t["tensor_name"] for t in reads]
            same = [t for t in reads if (t["shape"], t["data_type"]) == (out["shape"], out["data_type"])]
            if same and not fresh:
                name = same[0]["tensor_name"]
            else:
                name = _fresh_name(graph)
                graph["input_desc"] = [*(graph["input_desc"] or []), [_graph_input(out, name)]]
            _rename_reads(graph, out["tensor_name"], name, index + 1)
    graph["op_desc"] = [op for i, op in enumerate(graph["op_desc"]) if i not in drop]
    computed = {t["tensor_name"]: t for op in graph["op_desc"] for t in op["output_desc"]}
    outputs: dict[str, Tensor] = {}
    for out in graph["output_desc"]:
        for name in feeds.get(out["tensor_name"], [out["tensor_name"]]):
            if name in computed:
                outputs.setdefault(name, _graph_input(computed[name], name))
    graph["output_desc"] = list(outputs.values())
    return graph


def _graph_input(like: Tensor, name: str) -> Tensor:
    return {"data_type": like["data_type"], "format": like.get("format", "DefaultFormat"),
            "shape": list(like["shape"]), "tensor_name": name}  # fmt: skip


def cut_at(graph: Graph, tensor_name: str) -> Graph:
    """Only what computes `tensor_name`, which becomes the graph's one output. Not yet pruned or checked."""
    graph = copy.deepcopy(graph)
    source = next(t for op in graph["op_desc"] for t in op["output_desc"] if t["tensor_name"] == tensor_name)
    graph["output_desc"] = [_graph_input(source, tensor_name)]
    return graph


def shape_operands(graph: Graph) -> list[tuple[dict[str, Any], str, int]]:
    """The shape-valued operands that follow the graph's dims: (op, attr name, input index)."""
    return [(op, *SHAPE_OPERAND[op["name"]]) for op in graph["op_desc"] if op["name"] in SHAPE_OPERAND]


def dim_values(graph: Graph) -> dict[int, str]:
    """Every dim value > 1 of the graph inputs and shape operands, biggest first, with the first place it
    occurs (`x[1]`, `Reshape shape`): a value is named by where it is, which stays when it changes."""
    places: dict[int, str] = {}
    for t in graph_inputs(graph):
        for axis, d in enumerate(t["shape"]):
            places.setdefault(d, f"{t['tensor_name']}[{axis}]")
    for op, name, index in shape_operands(graph):
        for d in operand(op, name, index) or []:
            if isinstance(d, int):
                places.setdefault(d, f"{op['name']} {name}")
    return {v: places[v] for v in sorted(places, reverse=True) if v > 1}


def _shape_operands_follow(graph: Graph, old: int, new: int) -> None:
    """Every entry `old` of the shape operands set to `new`, in place."""
    for op, name, index in shape_operands(graph):
        value = operand(op, name, index)
        if isinstance(value, list):
            set_operand(op, name, index, [new if d == old else d for d in value])


def replace_dim_value(graph: Graph, old: int, new: int) -> Graph:
    """Every dim equal to `old` in the graph inputs and shape operands set to `new`. Not yet checked."""
    graph = copy.deepcopy(graph)
    for t in graph_inputs(graph):
        t["shape"] = [new if d == old else d for d in t["shape"]]
    _shape_operands_follow(graph, old, new)
    return graph


def set_input_dims(graph: Graph, dims: Iterable[tuple[int, int]], value: int) -> Graph:
    """The graph with each (input, axis) of `dims` set to `value`; shape operands holding the first dim's
    old value follow. Not yet checked."""
    graph = copy.deepcopy(graph)
    inputs = graph_inputs(graph)
    dims = list(dims)
    old = inputs[dims[0][0]]["shape"][dims[0][1]]
    for index, axis in dims:
        inputs[index]["shape"][axis] = value
    _shape_operands_follow(graph, old, value)
    return graph


def replace_dtype(graph: Graph, old: str, new: str) -> Graph:
    """Every tensor of dtype `old` made `new`, and so every Cast or MatMul result type. Not yet checked."""
    graph = copy.deepcopy(graph)
    tensors = [*graph_inputs(graph), *graph["output_desc"]]
    for op in graph["op_desc"]:
        tensors += [t for desc in op.get("input_desc") or [] for t in desc if not is_constant(t)]
        tensors += op["output_desc"]
        if op["name"] == "Cast" and _cast_dtype(op, "") == old:
            value = operand(op, "dst_type", 1)
            set_operand(op, "dst_type", 1, TYPE_IDS[new] if isinstance(value, int) else new)
        attr = _attr(op, "dst_type")
        if op["name"] in MATMUL and attr is not None and attr.get("value") == old:
            attr["value"] = new
    for t in tensors:
        if t["data_type"] == old:
            t["data_type"] = new
    return graph


def describe(graph: Graph) -> str:
    """The graph as one line per op, for people: `out [shape] dtype = Op(in [shape], operand=value, ...)`."""

    def tensor(t: Tensor) -> str:
        return json.dumps(t["value"]) if is_constant(t) else f"{t['tensor_name']} {t['shape']} {t['data_type']}"

    lines = [f"inputs: {', '.join(tensor(t) for t in graph_inputs(graph))}"]
    for op in graph["op_desc"]:
        args = [tensor(t) for t in op_inputs(op)]
        args += [f"{a['name']}={json.dumps(a.get('value'))}" for a in op.get("attr") or []]
        outs = ", ".join(tensor(t) for t in op["output_desc"])
        lines.append(f"{outs} = {op['name']}({', '.join(args)})")
    lines.append(f"outputs: {', '.join(t['tensor_name'] for t in graph['output_desc'])}")
    return "\n".join(lines) + "\n"


def dtypes(graph: Graph) -> set[str]:
    return {t["data_type"] for t in graph_inputs(graph)} | {
        t["data_type"] for op in graph["op_desc"] for t in op["output_desc"]
    }
