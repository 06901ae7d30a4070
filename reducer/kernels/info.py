"""The AKG kernel JSON (`.info`) of a Hybrid DSL Case, laid out as MindSpore 2.x writes it for a Custom
op of func_type "hybrid" in `akg_kernel_meta/Fused_Custom_*.info`, and the way back: such a file as a Case."""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path
from typing import Any

from reducer.kernels import graph as graphs
from reducer.core import pyparse
from reducer.core.case import DTYPES, Case, TensorSpec, function_source
from reducer.core.errors import InputError, InvalidKernel
from reducer.kernels.kinds import graph_specs

TARGET_INFO = {
    "cpu": {"arch": "x86_64", "cpu": "core-avx2", "feature": "avx", "system": "linux"},
}


def _tensor(spec: TensorSpec, tensor_name: str, name: str | None = None) -> dict[str, Any]:
    desc: dict[str, Any] = {"data_type": spec.dtype, "format": "DefaultFormat"}
    if name is not None:
        desc["name"] = name
    desc["shape"] = list(spec.shape)
    desc["tensor_name"] = tensor_name
    return desc


def _attr(name: str, data_type: str, value: Any) -> dict[str, Any]:
    return {"data_type": data_type, "name": name, "value": value}


def _inplace_outputs(source: str) -> list[tuple[int, int]]:
    """Which outputs are really inputs (returned parameters), as MindSpore's `inplace_assign_output`."""
    func = pyparse.parse(source).body[0]
    assert isinstance(func, ast.FunctionDef)
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


def build_info(case: Case, outputs: tuple[TensorSpec, ...]) -> dict[str, Any]:
    """The `.info` dict for `case` whose inferred outputs are `outputs`; a fused graph is its own `.info`."""
    if case.graph is not None:
        return graphs.loads(case.graph)
    # As MindSpore writes it for ops.Custom(func, func_type="hybrid") without out_shape (tests/data/custom/),
    # but for imply_path: MindSpore writes the path of its own _ms_kernel.py there (AKG does not read it) and
    # hashes it into uniq_name; left empty, the .info names no local path and is the same on every machine.
    imply_path = ""
    source_hash = hashlib.sha256((imply_path + case.source).encode()).hexdigest()
    attrs = [
        _attr("imply_path", "str", imply_path),
        _attr("multi_output", "bool", len(outputs) > 1),
        _attr("func_type", "str", "hybrid"),
        _attr("func_source_str", "str", case.source),
        _attr("output_is_dynamic_shape", "bool", False),
        _attr("func_compile_attrs", "str", "{}"),
        _attr("uniq_name", "str", f"Custom_{case.function}_{source_hash}"),
        _attr("func_name", "str", case.function),
        _attr("inputs_num", "int", len(case.inputs)),
        _attr("autodiff", "bool", False),
    ]
    inplace = _inplace_outputs(case.source)
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
    if case.target in TARGET_INFO:
        info["target_info"] = TARGET_INFO[case.target]
    info["version"] = 2
    return info


def info_text(case: Case, outputs: tuple[TensorSpec, ...]) -> str:
    return json.dumps(build_info(case, outputs), indent=4)


def _field(info: dict[str, Any], path: str, origin: str) -> Any:
    node: Any = info
    for part in path.split("."):
        key: str | int = int(part) if part.isdigit() else part
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            raise InputError(f"{origin}: field '{path}' is missing") from None
    return node


def _input_spec(desc: Any, index: int, origin: str) -> TensorSpec:
    field = f"input_desc.{index}.0"
    tensor = desc[0] if isinstance(desc, list) and desc else desc
    if not isinstance(tensor, dict):
        raise InputError(f"{origin}: field '{field}': expected a tensor description (shape, data_type)")
    shape, dtype = tensor.get("shape"), tensor.get("data_type")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 1 for d in shape):
        raise InputError(f"{origin}: field '{field}.shape': expected a list of positive integers, got {shape!r}")
    if dtype not in DTYPES:
        raise InputError(f"{origin}: field '{field}.data_type': expected one of {', '.join(DTYPES)}, got {dtype!r}")
    return TensorSpec(tuple(shape), dtype)


def _graph_case(path: Path, info: dict[str, Any]) -> Case:
    """The Case of a fused graph `.info`, its recorded shapes checked against what its inputs give."""
    origin = str(path)
    graph = graphs.check_structure(info, origin)
    try:
        wrong = graphs.mismatches(graph)
    except InvalidKernel as exc:
        raise InputError(f"{origin}: not a valid fused graph: {exc}") from None
    if wrong:
        raise InputError(f"{origin}: field 'op_desc': {wrong[0]}")
    return Case(
        name=path.stem,
        source="",
        function="",
        inputs=graph_specs(graphs.graph_inputs(graph)),
        target=str(info["process"]),
        graph=graphs.dumps(graph),
    )


def case_from_info(path: Path, text: str) -> Case:
    """The Case of a `.info` as MindSpore writes it: a fused graph, or a Custom hybrid op (Hybrid DSL
    source in `func_source_str`)."""
    origin = str(path)
    try:
        info = json.loads(text)
    except ValueError as exc:
        raise InputError(f"{origin}: not JSON: {exc}") from None
    if not isinstance(info, dict):
        raise InputError(f"{origin}: expected a JSON object (an AKG kernel .info)")
    ops = _field(info, "op_desc", origin)
    if not isinstance(ops, list) or not ops or not all(isinstance(op, dict) for op in ops):
        raise InputError(f"{origin}: field 'op_desc': expected a non-empty list of ops")
    if graphs.is_graph(info):
        return _graph_case(path, info)
    attrs = {a.get("name"): a.get("value") for a in ops[0].get("attr") or [] if isinstance(a, dict)}
    if attrs.get("func_type") != "hybrid":
        raise InputError(
            f"{origin}: field 'op_desc.0.attr': a Custom op of func_type {attrs.get('func_type')!r}; "
            "only func_type 'hybrid' (Hybrid DSL source in func_source_str) can be reduced"
        )
    source = attrs.get("func_source_str")
    if not isinstance(source, str) or "def " not in source:
        raise InputError(f"{origin}: field 'op_desc.0.attr.func_source_str': expected Hybrid DSL source")
    source, function = function_source(source, attrs.get("func_name"), origin)
    descs = info.get("input_desc") or []
    if not isinstance(descs, list):
        raise InputError(f"{origin}: field 'input_desc': expected a list of inputs")
    return Case(
        name=path.stem,
        source=source,
        function=function,
        inputs=tuple(_input_spec(d, i, origin) for i, d in enumerate(descs)),
        target=str(info.get("process", "cpu")),
    )
