"""The op-semantics matrix (reducer/in_mindspore/op_matrix.py) against the installed MindSpore: every op the
numpy reference of fused graphs knows means, on every dtype MindSpore's CPU kernels accept and on edge inputs,
what MindSpore's own single-op kernel computes; where it cannot, the op and dtype are refused by name."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from conftest import needs_akg

from reducer.core.case import Case, Mismatch, TensorSpec
from reducer.in_mindspore import graph_numpy, script
from reducer.kernels.kinds import GRAPH

pytestmark = [pytest.mark.akg, needs_akg, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def matrix() -> list[dict]:
    done = subprocess.run(
        [sys.executable, script("op_matrix"), "CPU"], capture_output=True, text=True, timeout=170, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def _lines(rows: list[dict]) -> Iterator[str]:
    for row in rows:
        yield f"{row['op']} on {row['dtype']}: {row.get('detail', '')}"


def test_every_rule_of_the_reference_agrees_with_mindspore(matrix: list[dict]) -> None:
    differs = [row for row in matrix if row["verdict"] == "differs"]
    assert not differs, "\n".join(_lines(differs))


def test_every_supported_op_is_compared_on_some_dtype(matrix: list[dict]) -> None:
    compared = {row["op"] for row in matrix if row["verdict"] == "agrees"}
    assert compared == graph_numpy.SUPPORTED


def test_integer_division_truncates_and_floors_as_mindspore_does(matrix: list[dict]) -> None:
    """RealDiv on int32 rounds toward zero, FloorDiv down; Div of integers gives MindSpore's float quotient."""
    rows = {(row["op"], row["dtype"]): row for row in matrix}
    assert rows["RealDiv", "int32"]["verdict"] == rows["FloorDiv", "int32"]["verdict"] == "agrees"
    assert rows["Div", "int32"] == {**rows["Div", "int32"], "verdict": "agrees", "out": "float32"}


def test_a_refused_dtype_is_refused_for_a_reason_that_a_matrix_row_shows(matrix: list[dict]) -> None:
    """Pow on integers and ReduceAny/ReduceAll on anything but bool: the reference refuses them, so a graph
    with them is not checked (graph_numpy.unsupported names them)."""
    refused = {(row["op"], row["dtype"]) for row in matrix if row["verdict"] == "unsupported"}
    assert {("Pow", "int32"), ("ReduceAny", "float32"), ("ReduceAll", "int32")} <= refused
    assert {op for op, _ in refused} == set(graph_numpy.UNSUPPORTED_ON)
    graph = {"op_desc": [{"name": "Pow", "input_desc": [[{"data_type": "int32"}], [{"data_type": "int32"}]]}]}
    assert graph_numpy.unsupported(graph) == ["Pow on int32"]
    case = Case("pow", "", "", (TensorSpec((8,), "int32"),) * 2, graph=json.dumps(graph), mismatch=Mismatch())
    said = GRAPH.uncheckable(case)
    assert "no rule for Pow on int32; Pow: MindSpore's integer Pow goes through floating point" in said
