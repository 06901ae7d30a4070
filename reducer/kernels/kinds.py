"""What is common to the two kernel kinds, dispatched on the Case: a Hybrid DSL function (checked by running
it as Python) or a fused graph (checked by shape inference). Callers ask here, not the kind's module."""

from __future__ import annotations

from reducer.kernels import graph as graphs
from reducer.core.case import Case, TensorSpec
from reducer.core.errors import InvalidKernel
from reducer.kernels.hybrid import infer_outputs, parse_function


def graph_specs(tensors: list[graphs.Tensor]) -> tuple[TensorSpec, ...]:
    return tuple(TensorSpec(tuple(t["shape"]), t["data_type"]) for t in tensors)


def outputs_of(case: Case) -> tuple[TensorSpec, ...]:
    """The kernel's output tensors; InvalidKernel if MindSpore would not hand this kernel to AKG."""
    if case.graph is None:
        return infer_outputs(case)
    checked = graphs.infer(graphs.loads(case.graph))
    return graph_specs(checked["output_desc"])


def with_graph(case: Case, graph: graphs.Graph) -> Case:
    """`case` holding `graph` (checked and pruned: InvalidKernel if it is not a valid graph)."""
    graph = graphs.checked(graph)
    return case.with_(graph=graphs.dumps(graph), inputs=graph_specs(graphs.graph_inputs(graph)))


def graph_with_dims(case: Case, dims: list[tuple[int, int]], value: int) -> Case:
    """A graph case with the input dims `dims` set to `value`, its shapes inferred again; when that fails the
    case is returned anyway, and the oracle rejects it as invalid without a compile."""
    edited = graphs.set_input_dims(graphs.loads(case.graph or ""), dims, value)
    try:
        return with_graph(case, edited)
    except InvalidKernel:
        return case.with_(graph=graphs.dumps(edited), inputs=graph_specs(graphs.graph_inputs(edited)))


def input_names(case: Case) -> list[str]:
    """The kernel's inputs as its user knows them: parameter names, or a graph's input tensor names."""
    if case.graph is not None:
        return [t["tensor_name"] for t in graphs.graph_inputs(graphs.loads(case.graph))]
    return [arg.arg for arg in parse_function(case.source).args.args]


def as_float32(case: Case) -> Case | None:
    """`case` with float16 and float64 tensors in float32; None if it has none."""
    unusual = [d for d in ("float16", "float64") if any(t.dtype == d for t in case.inputs)]
    if not unusual:
        return None
    if case.graph is None:
        inputs = tuple(TensorSpec(t.shape, "float32" if t.dtype in unusual else t.dtype) for t in case.inputs)
        return case.with_(inputs=inputs)
    graph = graphs.loads(case.graph)
    for dtype in unusual:
        graph = graphs.replace_dtype(graph, dtype, "float32")
    try:
        return with_graph(case, graph)
    except InvalidKernel:
        return None
