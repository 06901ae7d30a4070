"""The AKG kernel JSON (`.info`) of a Custom op's Case (Hybrid DSL, TeLang or ir_builder), laid out as MindSpore
2.x writes it in `akg_kernel_meta/Fused_Custom_*.info` (reading such a file: inputs/info_file.py)."""

from __future__ import annotations

import ast
import hashlib
from typing import Any

from reducer.core.case import Case, TensorSpec
from reducer.core.targets import TARGETS
from reducer.kernels.hybrid import parse_function


def _tensor(spec: TensorSpec, tensor_name: str, name: str | None = None) -> dict[str, Any]:
    desc: dict[str, Any] = {"data_type": spec.dtype, "format": "DefaultFormat"}
    if name is not None:
        desc["name"] = name
    desc["shape"] = list(spec.shape)
    desc["tensor_name"] = tensor_name
    return desc


def _attr(name: str, data_type: str, value: Any) -> dict[str, Any]:
    return {"data_type": data_type, "name": name, "value": value}


# MindSpore's names of the dtypes in a reg_info's dtype_format (mindspore.ops.DataType)
_REG_INFO_DTYPE = {
    "float16": "F16",
    "float32": "F32",
    "float64": "F64",
    "int8": "I8",
    "int16": "I16",
    "int32": "I32",
    "int64": "I64",
    "uint8": "U8",
    "bool": "BOOL",
}


def dtype_format(dtype: str) -> str:
    """The name of `dtype` in the default format in a reg_info's dtype_format (an attribute of
    mindspore.ops.DataType)."""
    return f"{_REG_INFO_DTYPE[dtype]}_Default"


def attr_data_type(value: Any) -> str:
    """The data_type MindSpore writes for a Custom op's attr of this value."""
    if isinstance(value, list):
        kinds = {attr_data_type(v) for v in value} or {"int"}
        return "list" + (kinds.pop() if len(kinds) == 1 else "float").capitalize()
    return {bool: "bool", int: "int", float: "float"}.get(type(value), "str")


def _op_attrs(case: Case) -> list[dict[str, Any]]:
    """A Custom op's own attrs as MindSpore writes them (each with its value, then `attr_names`), as for
    `ops.Custom(..., reg_info=CustomRegOp().attr(name, ..., value=v))`; none when it has none."""
    if not case.op_attrs:
        return []
    values = [_attr(name, attr_data_type(value), value) for name, value in case.op_attrs.items()]
    return [*values, _attr("attr_names", "listStr", list(case.op_attrs))]


def _inplace_outputs(source: str) -> list[tuple[int, int]]:
    """Which outputs are really inputs (returned parameters), as MindSpore's `inplace_assign_output`."""
    func = parse_function(source)
    params = [a.arg for a in func.args.args]
    for node in ast.walk(func):
        if isinstance(node, ast.Return) and node.value is not None:
            elts = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            names = [e.id for e in elts if isinstance(e, ast.Name)]
            return [(i, params.index(n)) for i, n in enumerate(names) if n in params]
    return []


def kernel_name(case: Case) -> str:
    digest = int(hashlib.sha256(case.key().encode()).hexdigest()[:15], 16)
    return f"Fused_Custom_{digest}"


def custom_info(case: Case, outputs: tuple[TensorSpec, ...]) -> dict[str, Any]:
    """The `.info` dict for the Custom op `case` (its func_type says the language) whose outputs are `outputs`."""
    # As MindSpore writes it for ops.Custom(func, func_type="hybrid") without out_shape, and for
    # ops.Custom(func, out_shape, out_dtype, func_type="akg") (tests/data/custom/), but for imply_path:
    # MindSpore writes the path of its own _ms_kernel.py (hybrid) or of the user's script there (AKG does not
    # read it) and hashes it into uniq_name; left empty, the .info names no local path and is the same on
    # every machine. func_compile_attrs and autodiff come from MindSpore's analysis of a hybrid function only.
    imply_path = ""
    source_hash = hashlib.sha256((imply_path + case.source).encode()).hexdigest()
    hybrid = case.func_type == "hybrid"
    attrs = [
        _attr("imply_path", "str", imply_path),
        _attr("multi_output", "bool", len(outputs) > 1),
        _attr("func_type", "str", case.func_type),
        _attr("func_source_str", "str", case.source),
        _attr("output_is_dynamic_shape", "bool", False),
        *([_attr("func_compile_attrs", "str", "{}")] if hybrid else []),
        _attr("uniq_name", "str", f"Custom_{case.function}_{source_hash}"),
        _attr("func_name", "str", case.function),
        _attr("inputs_num", "int", len(case.inputs) + len(case.op_attrs)),
        *_op_attrs(case),
        *([_attr("autodiff", "bool", False)] if hybrid else []),
    ]
    inplace = _inplace_outputs(case.source) if hybrid else []
    if inplace:
        after = next(i for i, a in enumerate(attrs) if a["name"] == "output_is_dynamic_shape") + 1
        attrs.insert(after, _attr("inplace_assign_output", "str", " ".join(f"{o} {i}" for o, i in inplace)))
    inputs = [[_tensor(t, f"input_{i}")] for i, t in enumerate(case.inputs)]
    op_inputs = [[_tensor(t, f"input_{i}", f"input_{i}")] for i, t in enumerate(case.inputs)]
    outs = [_tensor(t, f"output_0_{i}") for i, t in enumerate(outputs)]
    op_outs = [_tensor(t, f"output_0_{i}", f"output_{i}") for i, t in enumerate(outputs)]
    info: dict[str, Any] = {
        "composite": True,
        "composite_graph": "seg_trans__anonymous__1",
        "id": 0,
        "input_desc": inputs,
        "op": kernel_name(case),
        "op_desc": [
            {
                "attr": attrs,
                "impl_path": "",
                "input_desc": op_inputs,
                "name": "Custom",
                "output_desc": op_outs,
            }
        ],
        "output_desc": outs,
        "platform": "AKG",
        "process": case.target,
    }
    if (target_info := TARGETS[case.target].target_info) is not None:
        info["target_info"] = dict(target_info)
    info["version"] = 2
    return info
