"""A `.info` as MindSpore writes it in akg_kernel_meta/, read into a Case: a fused graph of basic ops, or a
Custom op (its Hybrid DSL, TeLang or ir_builder source in func_source_str, the language in func_type)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from reducer.core.case import DTYPES, Case, TensorSpec
from reducer.core.errors import InputError, InvalidKernel
from reducer.core.targets import DEFAULT, target_named
from reducer.inputs.source import function_source
from reducer.kernels import graph as graphs
from reducer.kernels.kinds import FUNC_TYPES, graph_specs, kind_of_info
from reducer.kernels.telang import AKG_FUNC_TYPE


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


def json_object(text: str, where: str, what: str) -> dict[str, Any]:
    """`text` as a JSON object, else an InputError naming `where` and what was expected."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise InputError(f"{where}: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a JSON object ({what}), got {type(value).__name__}")
    return value


def is_kernel_json(text: str) -> bool:
    """Is `text` an AKG kernel JSON (a JSON object with `op_desc`), as opposed to a crash.yaml?"""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and "op_desc" in value


def _defined(source: str, func_name: Any) -> str | None:
    """`func_name` when the source defines a function of that name, else None: AKG compiles the one function
    of func_source_str whatever it is called (a kernel registered under another name)."""
    if isinstance(func_name, str) and re.search(rf"^\s*def\s+{re.escape(func_name)}\s*\(", source, re.MULTILINE):
        return func_name
    return None


def case_from_info(path: Path, text: str) -> Case:
    """The Case of a `.info` as MindSpore writes it: a fused graph, or a Custom op (its source in
    `func_source_str`, of the language `func_type` names)."""
    origin = str(path)
    info = json_object(text, origin, "an AKG kernel .info")
    ops = _field(info, "op_desc", origin)
    if not isinstance(ops, list) or not ops or not all(isinstance(op, dict) for op in ops):
        raise InputError(f"{origin}: field 'op_desc': expected a non-empty list of ops")
    kind = kind_of_info(info)
    attrs = {a.get("name"): a.get("value") for a in ops[0].get("attr") or [] if isinstance(a, dict)}
    if kind is None:
        known = [t for t in FUNC_TYPES if t != AKG_FUNC_TYPE]
        raise InputError(
            f"{origin}: field 'op_desc.0.attr': a Custom op of func_type {attrs.get('func_type')!r}; expected one "
            f"of {', '.join(known)}, the ones AKG compiles from source (func_source_str)"
        )
    if not kind.python_function:
        return _graph_case(path, info)
    source = attrs.get("func_source_str")
    if not isinstance(source, str) or "def " not in source:
        raise InputError(f"{origin}: field 'op_desc.0.attr.func_source_str': expected the function's source")
    source, function = function_source(source, _defined(source, attrs.get("func_name")), origin)
    descs = info.get("input_desc") or []
    if not isinstance(descs, list):
        raise InputError(f"{origin}: field 'input_desc': expected a list of inputs")
    return Case(
        name=path.stem,
        source=source,
        function=function,
        inputs=tuple(_input_spec(d, i, origin) for i, d in enumerate(descs)),
        target=target_named(info.get("process", DEFAULT.name), f"{origin}: field 'process'").name,
        func_type=kind.func_type,
        op_attrs=_op_attrs(attrs, origin),
    )


def _op_attrs(attrs: dict[Any, Any], origin: str) -> dict[str, Any]:
    """The Custom op's own attrs: those `attr_names` lists that carry a value (MindSpore writes one only for an
    attr given a value, `reg_info` or `add_prim_attr`)."""
    names = attrs.get("attr_names") or []
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InputError(f"{origin}: field 'op_desc.0.attr.attr_names': expected a list of attr names")
    return {name: attrs[name] for name in names if name in attrs}
