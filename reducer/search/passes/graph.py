"""Passes over a fused graph: delete outputs and ops (ddmin, consumers rewired), cut the graph at a tensor, shrink dims
through every op, simplify op operands (reduce axes, keep_dims, transpose perms, matmul transposes) and
dtypes. Each candidate is pruned and re-inferred; one that does not infer is never proposed."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from functools import partial

from reducer.core.case import Case
from reducer.core.errors import InvalidKernel
from reducer.kernels import graph as graphs
from reducer.kernels.kinds import GRAPH, SIMPLER_DTYPE, with_graph
from reducer.search.passes.base import DeletionPass, Edit, Number, NumberPass, TransformPass


def _valid(case: Case, edit: Callable[[], graphs.Graph]) -> Case | None:
    try:
        return with_graph(case, edit())
    except InvalidKernel:
        return None


GraphEdit = tuple[str, Callable[[], graphs.Graph]]  # what it does, and the edited graph (or InvalidKernel)


def _valid_all(case: Case, edits: Iterator[GraphEdit]) -> Iterator[Edit]:
    for description, edit in edits:
        candidate = _valid(case, edit)
        if candidate is not None:
            yield Edit(description, candidate)


class DeleteOutputs(DeletionPass):
    """ddmin over the graph's outputs; what only computed a dropped output goes with it."""

    name = "outputs"

    def groups(self, case: Case) -> int:
        return 1 if len(GRAPH.graph(case)["output_desc"]) > 1 else 0

    def units(self, case: Case, group: int) -> list[str]:
        return [f"output {t['tensor_name']}" for t in GRAPH.graph(case)["output_desc"]]

    def keep(self, case: Case, group: int, kept: Sequence[int]) -> Case | None:
        graph = GRAPH.graph(case)
        graph["output_desc"] = [graph["output_desc"][i] for i in kept]
        return _valid(case, lambda: graph)


class DeleteOps(DeletionPass):
    """ddmin over the ops; a deleted op's readers read its input of the same shape, else a new input."""

    name = "ops"

    def groups(self, case: Case) -> int:
        return 1 if len(GRAPH.graph(case)["op_desc"]) > 1 else 0

    def units(self, case: Case, group: int) -> list[str]:
        return [_op_label(op) for op in GRAPH.graph(case)["op_desc"]]

    def keep(self, case: Case, group: int, kept: Sequence[int]) -> Case | None:
        graph = GRAPH.graph(case)
        drop = set(range(len(graph["op_desc"]))) - set(kept)
        return _valid(case, lambda: graphs.delete_ops(graph, drop))


class CutGraph(TransformPass):
    """One tensor as the only output (what computes it stays), or one op's result read from a new graph
    input instead (what only computed it goes); the longest cuts first."""

    name = "cut"

    def edits(self, case: Case) -> Iterator[Edit]:
        graph = GRAPH.graph(case)
        names = [t["tensor_name"] for op in graph["op_desc"] for t in op["output_desc"]]
        yield from _valid_all(case, ((f"{n} as the only output", lambda n=n: graphs.cut_at(graph, n)) for n in names))
        ops = list(enumerate(graph["op_desc"]))
        yield from _valid_all(
            case,
            (
                (f"{_op_label(op)} read from a new input", lambda i=i: graphs.delete_ops(graph, [i], fresh=True))
                for i, op in ops
            ),
        )


class ShrinkGraphDims(NumberPass):
    """A dim value shrunk everywhere it appears in the graph inputs and shape operands (dims that must stay
    equal), then each input dim alone; every op's shapes follow by inference."""

    name = "graph-dims"

    def numbers(self, case: Case) -> list[Number]:
        graph = GRAPH.graph(case)
        everywhere = [
            Number(f"every dim equal to {place}", value, partial(_with_dim_value, case, graph, value))
            for value, place in graphs.dim_values(graph).items()
        ]
        alone = [
            Number(f"dim {tensor['tensor_name']}[{axis}]", dim, partial(_with_input_dim, case, graph, i, axis))
            for i, tensor in enumerate(graphs.graph_inputs(graph))
            for axis, dim in enumerate(tensor["shape"])
        ]
        return everywhere + alone


def _with_dim_value(case: Case, graph: graphs.Graph, old: int, new: int) -> Case | None:
    return _valid(case, lambda: graphs.replace_dim_value(graph, old, new))


def _with_input_dim(case: Case, graph: graphs.Graph, i: int, axis: int, value: int) -> Case | None:
    return _valid(case, lambda: graphs.set_input_dims(graph, [(i, axis)], value))


def _op_label(op: dict) -> str:
    return f"{op['name']} -> {', '.join(t['tensor_name'] for t in op['output_desc'])}"


def _operand_edits(graph: graphs.Graph) -> Iterator[GraphEdit]:
    for index, op in enumerate(graph["op_desc"]):
        name, label = op["name"], _op_label(op)
        if name in graphs.REDUCE:
            axes = graphs.operand(op, "axis", 1)
            if isinstance(axes, list) and len(axes) > 1:
                for k in range(len(axes)):
                    fewer = axes[:k] + axes[k + 1 :]
                    yield f"{label}: axis {axes} -> {fewer}", _operand_edit(graph, index, "axis", 1, fewer)
            if graphs.flag(op, "keep_dims"):
                yield f"{label}: keep_dims off", _flag_edit(graph, index, "keep_dims")
        if name == "Transpose":
            perm = graphs.operand(op, "perm", 1)
            if isinstance(perm, list) and perm != sorted(perm):
                yield f"{label}: perm {perm} -> {sorted(perm)}", _operand_edit(graph, index, "perm", 1, sorted(perm))
        if name in graphs.MATMUL:
            for position, attr in enumerate(("transpose_a", "transpose_b")):
                if graphs.flag(op, attr):
                    yield (
                        f"{label}: {attr} off, operand stored transposed",
                        _untranspose_edit(graph, index, attr, position),
                    )


def _operand_edit(graph: graphs.Graph, index: int, name: str, position: int, value: object):
    def edit() -> graphs.Graph:
        edited = copy.deepcopy(graph)
        graphs.set_operand(edited["op_desc"][index], name, position, value)
        return edited

    return edit


def _flag_edit(graph: graphs.Graph, index: int, name: str):
    def edit() -> graphs.Graph:
        edited = copy.deepcopy(graph)
        graphs.set_flag(edited["op_desc"][index], name, False)
        return edited

    return edit


def _untranspose_edit(graph: graphs.Graph, index: int, attr: str, position: int):
    """A matmul transpose flag off, the operand (a graph input) stored transposed instead."""

    def edit() -> graphs.Graph:
        edited = copy.deepcopy(graph)
        op = edited["op_desc"][index]
        operand = graphs.op_inputs(op)[position]
        source = next((t for t in graphs.graph_inputs(edited) if t["tensor_name"] == operand["tensor_name"]), None)
        if source is None or graphs.is_constant(operand):
            raise InvalidKernel("the transposed operand is computed in the graph")
        source["shape"][-2:] = source["shape"][-1], source["shape"][-2]
        graphs.set_flag(op, attr, False)
        return edited

    return edit


class SimplifyOperands(TransformPass):
    name = "op-operands"

    def edits(self, case: Case) -> Iterator[Edit]:
        yield from _valid_all(case, _operand_edits(GRAPH.graph(case)))


class SimplifyGraphDtypes(TransformPass):
    """Every tensor of one unusual dtype made the ordinary one (float16 -> float32, ...), casts included."""

    name = "graph-dtypes"

    def edits(self, case: Case) -> Iterator[Edit]:
        for old in sorted(graphs.dtypes(GRAPH.graph(case))):
            if old in SIMPLER_DTYPE:
                simpler = GRAPH.with_dtypes(case, {old: SIMPLER_DTYPE[old]})
                if simpler is not None:
                    yield Edit(f"every {old} tensor -> {SIMPLER_DTYPE[old]}", simpler)
