"""Passes over a fused graph: delete outputs and ops (ddmin, consumers rewired), cut the graph at a tensor, shrink dims
through every op, simplify op operands (reduce axes, keep_dims, transpose perms, matmul transposes) and
dtypes. Each candidate is pruned and re-inferred; one that does not infer is never proposed."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence

from reducer.kernels import graph as graphs
from reducer.core.case import Case
from reducer.core.errors import InvalidKernel
from reducer.kernels.kinds import with_graph
from reducer.search.passes.tensors import SIMPLER_DTYPE, smaller_values


def _graph(case: Case) -> graphs.Graph:
    assert case.graph is not None
    return graphs.loads(case.graph)


def _valid(case: Case, edit: Callable[[], graphs.Graph]) -> Case | None:
    try:
        return with_graph(case, edit())
    except InvalidKernel:
        return None


def _valid_all(case: Case, edits: Iterator[Callable[[], graphs.Graph]]) -> Iterator[Case]:
    for edit in edits:
        candidate = _valid(case, edit)
        if candidate is not None:
            yield candidate


class DeleteOutputs:
    """ddmin over the graph's outputs; what only computed a dropped output goes with it."""

    name = "outputs"

    def groups(self, case: Case) -> int:
        return 1 if case.graph is not None and len(_graph(case)["output_desc"]) > 1 else 0

    def units(self, case: Case, group: int) -> int:
        return len(_graph(case)["output_desc"])

    def keep(self, case: Case, group: int, kept: Sequence[int]) -> Case | None:
        graph = _graph(case)
        graph["output_desc"] = [graph["output_desc"][i] for i in kept]
        return _valid(case, lambda: graph)


class DeleteOps:
    """ddmin over the ops; a deleted op's readers read its input of the same shape, else a new input."""

    name = "ops"

    def groups(self, case: Case) -> int:
        return 1 if case.graph is not None and len(_graph(case)["op_desc"]) > 1 else 0

    def units(self, case: Case, group: int) -> int:
        return len(_graph(case)["op_desc"])

    def keep(self, case: Case, group: int, kept: Sequence[int]) -> Case | None:
        graph = _graph(case)
        drop = set(range(len(graph["op_desc"]))) - set(kept)
        return _valid(case, lambda: graphs.delete_ops(graph, drop))


class CutGraph:
    """One tensor as the only output (what computes it stays), or one op's result read from a new graph
    input instead (what only computed it goes); the longest cuts first."""

    name = "cut"

    def candidates(self, case: Case) -> Iterator[Case]:
        if case.graph is None:
            return
        graph = _graph(case)
        names = [t["tensor_name"] for op in graph["op_desc"] for t in op["output_desc"]]
        yield from _valid_all(case, ((lambda n=n: graphs.cut_at(graph, n)) for n in names))
        indices = range(len(graph["op_desc"]))
        yield from _valid_all(case, ((lambda i=i: graphs.delete_ops(graph, [i], fresh=True)) for i in indices))


class ShrinkGraphDims:
    """A dim value shrunk everywhere it appears in the graph inputs and shape operands (dims that must stay
    equal), then each input dim alone; every op's shapes follow by inference."""

    name = "graph-dims"

    def candidates(self, case: Case) -> Iterator[Case]:
        if case.graph is None:
            return
        graph = _graph(case)
        for value in graphs.dim_values(graph):
            edits = ((lambda old=value, v=v: graphs.replace_dim_value(graph, old, v)) for v in smaller_values(value))
            yield from _valid_all(case, edits)
        for i, tensor in enumerate(graphs.graph_inputs(graph)):
            for axis, dim in enumerate(tensor["shape"]):
                edits = (
                    (lambda v=v, i=i, axis=axis: graphs.set_input_dims(graph, [(i, axis)], v))
                    for v in smaller_values(dim)
                )
                yield from _valid_all(case, edits)


def _operand_edits(graph: graphs.Graph) -> Iterator[Callable[[], graphs.Graph]]:
    for index, op in enumerate(graph["op_desc"]):
        name = op["name"]
        if name in graphs.REDUCE:
            axes = graphs.operand(op, "axis", 1)
            if isinstance(axes, list) and len(axes) > 1:
                for k in range(len(axes)):
                    yield _operand_edit(graph, index, "axis", 1, axes[:k] + axes[k + 1 :])
            if graphs.flag(op, "keep_dims"):
                yield _flag_edit(graph, index, "keep_dims")
        if name == "Transpose":
            perm = graphs.operand(op, "perm", 1)
            if isinstance(perm, list) and perm != sorted(perm):
                yield _operand_edit(graph, index, "perm", 1, sorted(perm))
        if name in graphs.MATMUL:
            for position, attr in enumerate(("transpose_a", "transpose_b")):
                if graphs.flag(op, attr):
                    yield _untranspose_edit(graph, index, attr, position)


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


class SimplifyOperands:
    name = "op-operands"

    def candidates(self, case: Case) -> Iterator[Case]:
        if case.graph is not None:
            yield from _valid_all(case, _operand_edits(_graph(case)))


class SimplifyGraphDtypes:
    """Every tensor of one unusual dtype made the ordinary one (float16 -> float32, ...), casts included."""

    name = "graph-dtypes"

    def candidates(self, case: Case) -> Iterator[Case]:
        if case.graph is None:
            return
        graph = _graph(case)
        for old in sorted(graphs.dtypes(graph)):
            if old in SIMPLER_DTYPE:
                yield from _valid_all(
                    case, iter([lambda old=old: graphs.replace_dtype(graph, old, SIMPLER_DTYPE[old])])
                )
