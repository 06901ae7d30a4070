"""The pass schedules, as data, one per kernel kind: run in this order, round after round, until a round
changes nothing. Hybrid DSL: configuration first, then the biggest cuts of the kernel body while the loops
still have their real extents (shrinking dims to 1 first strands the search in minima where extent-1 loops
are all needed), then shapes (smaller shapes make every later compile faster), then finer edits. TeLang:
configuration, stages, statements and reduce axes, then shapes with their constants, then expressions.
ir_builder: configuration, shapes and dtypes only (its body is IR built call by call). Fused graphs:
configuration, then outputs and ops (ddmin, then cuts at a tensor), dims, op operands and dtypes."""

from __future__ import annotations

from reducer.core.case import Case
from reducer.kernels.kinds import GRAPH, HYBRID, IR_BUILDER_KIND, TELANG, kind_of
from reducer.search.passes.base import DeletionPass, Edit, Number, NumberPass, Pass, TransformPass
from reducer.search.passes.buffers import AccumulatorToOutput
from reducer.search.passes.config import DeleteEntries, SimplifyAttrValues
from reducer.search.passes.control import FlattenControl
from reducer.search.passes.expressions import CompactAssignments, ExpressionToConstant, ExpressionToOperand
from reducer.search.passes.graph import (
    CutGraph,
    DeleteOps,
    DeleteOutputs,
    ShrinkGraphDims,
    SimplifyGraphDtypes,
    SimplifyOperands,
)
from reducer.search.passes.loops import MergeLoops, MoveExtent
from reducer.search.passes.op_attrs import InlineOpAttrs
from reducer.search.passes.statements import DeleteStatements
from reducer.search.passes.telang import (
    DropKeywords,
    DropReduceAxis,
    DropStage,
    DropStageAxes,
    ShrinkDimsWithConstants,
    TeLangToOperand,
)
from reducer.search.passes.tensors import (
    DropUnitAxes,
    RemoveUnusedInputs,
    ShrinkDims,
    ShrinkLinkedDims,
    SimplifyDtypes,
)
from reducer.search.passes.variables import InlineScalars

SCHEDULE: list[Pass] = [
    DeleteEntries("attrs"),
    DeleteEntries("env"),
    InlineOpAttrs(),
    AccumulatorToOutput(),
    DeleteStatements(),
    FlattenControl(),
    MergeLoops(),
    ShrinkLinkedDims(),
    ShrinkDims(),
    InlineScalars(),
    RemoveUnusedInputs(),
    DropUnitAxes(),
    ExpressionToOperand(),
    ExpressionToConstant(),
    CompactAssignments(),
    SimplifyAttrValues(),
    SimplifyDtypes(),
    MoveExtent(),
]

GRAPH_SCHEDULE: list[Pass] = [
    DeleteEntries("attrs"),
    DeleteEntries("env"),
    DeleteOutputs(),
    DeleteOps(),
    CutGraph(),
    ShrinkGraphDims(),
    SimplifyOperands(),
    SimplifyAttrValues(),
    SimplifyGraphDtypes(),
]


TELANG_SCHEDULE: list[Pass] = [
    DeleteEntries("attrs"),
    DeleteEntries("env"),
    InlineOpAttrs(),
    DropStage(),
    DeleteStatements(),
    DropReduceAxis(),
    ShrinkDimsWithConstants(),
    ShrinkLinkedDims(),
    ShrinkDims(),
    InlineScalars(),
    RemoveUnusedInputs(),
    DropUnitAxes(),
    DropStageAxes(),
    TeLangToOperand(),
    ExpressionToConstant(),
    DropKeywords(),
    SimplifyAttrValues(),
    SimplifyDtypes(),
]

IR_BUILDER_SCHEDULE: list[Pass] = [
    DeleteEntries("attrs"),
    DeleteEntries("env"),
    InlineOpAttrs(read_as_dict=True),
    ShrinkLinkedDims(),
    ShrinkDims(),
    SimplifyAttrValues(),
    SimplifyDtypes(),
]

SCHEDULES = {
    HYBRID.name: SCHEDULE,
    TELANG.name: TELANG_SCHEDULE,
    IR_BUILDER_KIND.name: IR_BUILDER_SCHEDULE,
    GRAPH.name: GRAPH_SCHEDULE,
}


def schedule_for(case: Case) -> list[Pass]:
    return SCHEDULES[kind_of(case).name]


__all__ = [
    "GRAPH_SCHEDULE",
    "SCHEDULE",
    "DeletionPass",
    "Edit",
    "Number",
    "NumberPass",
    "Pass",
    "TransformPass",
    "schedule_for",
]
