"""The pass schedule, as data: run in this order, round after round, until a round changes nothing.
Configuration first, then the biggest cuts of the kernel body while the loops still have their real
extents (shrinking dims to 1 first strands the search in minima where extent-1 loops are all needed),
then shapes (smaller shapes make every later compile faster), then finer edits."""

from __future__ import annotations

from reducer.passes.base import DeletionPass, Pass, TransformPass
from reducer.passes.config import DeleteEntries, SimplifyAttrValues
from reducer.passes.control import FlattenControl
from reducer.passes.expressions import CompactAssignments, ExpressionToConstant, ExpressionToOperand
from reducer.passes.statements import DeleteStatements
from reducer.passes.tensors import (
    DropUnitAxes,
    RemoveUnusedInputs,
    ShrinkDims,
    ShrinkLinkedDims,
    SimplifyDtypes,
)
from reducer.passes.variables import InlineScalars

SCHEDULE: list[Pass] = [
    DeleteEntries("attrs"),
    DeleteEntries("env"),
    DeleteStatements(),
    FlattenControl(),
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
]

__all__ = ["SCHEDULE", "DeletionPass", "Pass", "TransformPass"]
