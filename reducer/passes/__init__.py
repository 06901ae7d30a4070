"""The pass schedule, as data: run in this order, round after round, until a round changes nothing.
Configuration and shapes come first (smaller shapes make every later compile faster), then the biggest
cuts of the kernel body, then finer edits."""

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

SCHEDULE: list[Pass] = [
    DeleteEntries("attrs"),
    DeleteEntries("env"),
    ShrinkLinkedDims(),
    ShrinkDims(),
    DeleteStatements(),
    FlattenControl(),
    RemoveUnusedInputs(),
    DropUnitAxes(),
    ExpressionToOperand(),
    ExpressionToConstant(),
    CompactAssignments(),
    SimplifyAttrValues(),
    SimplifyDtypes(),
]

__all__ = ["SCHEDULE", "DeletionPass", "Pass", "TransformPass"]
