"""Fused graph kernels (`Fused_*.info` as MindSpore writes them): loading, shape inference through each op
kind, the graph edits and passes (every proposed candidate is a valid graph), and input errors."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import CORPUS, edited_cases
from graph_builder import DUMPED, Builder, pointnet_branch, write_info
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy_graph import numpy_mismatches

from reducer.core.errors import InputError, InvalidKernel
from reducer.inputs.crash_yaml import load_case
from reducer.inputs.load import load_input
from reducer.kernels import graph as graphs
from reducer.kernels.kinds import GRAPH, info_text, kind_of, outputs_of, size_of, with_graph
from reducer.search.passes.graph import (
    CutGraph,
    DeleteOps,
    DeleteOutputs,
    ShrinkGraphDims,
    SimplifyGraphDtypes,
    SimplifyOperands,
)


@pytest.mark.parametrize("path", sorted(DUMPED.glob("*.info")) + sorted(CORPUS.glob("*/*.info")), ids=lambda p: p.name)
def test_graphs_written_by_mindspore_load_and_infer_as_recorded(path: Path) -> None:
    case = load_input(path)
    info = json.loads(path.read_text())
    assert kind_of(case) is GRAPH and case.name == path.stem
    assert graphs.mismatches(info) == []
    assert numpy_mismatches(info) == []  # the independent check agrees with MindSpore too
    assert [list(t.shape) for t in outputs_of(case)] == [t["shape"] for t in info["output_desc"]]
    assert size_of(case).ops == len(info["op_desc"])


def test_reduce_axis_written_as_a_constant_input_is_read() -> None:
    info = json.loads((DUMPED / "Fused_Mul_ReduceSum_split_7440413551994960349.info").read_text())
    reduce_sum = info["op_desc"][1]
    assert graphs.operand(reduce_sum, "axis", 1) == [1]
    graphs.set_operand(reduce_sum, "axis", 1, [0])
    assert graphs.infer(info)["output_desc"][0]["shape"] == [32]


@pytest.mark.parametrize(
    ("name", "shapes", "attrs", "operand", "expected"),
    [
        ("Add", [[4, 1, 3], [5, 1]], {}, None, [4, 5, 3]),
        ("ReduceSum", [[4, 5, 3]], {"keep_dims": True}, [0, -1], [1, 5, 1]),
        ("ReduceMax", [[4, 5, 3]], {"keep_dims": False}, [0, 1, 2], [1]),
        ("MatMul", [[7, 4], [5, 4]], {"transpose_a": False, "transpose_b": True}, None, [7, 5]),
        ("BatchMatMul", [[2, 4, 7], [1, 4, 5]], {"transpose_a": True, "transpose_b": False}, None, [2, 7, 5]),
        ("Transpose", [[2, 3, 4]], {}, [2, 0, 1], [4, 2, 3]),
        ("Reshape", [[2, 3, 4]], {}, [6, -1], [6, 4]),
        ("BroadcastTo", [[3, 1]], {}, [2, 3, 5], [2, 3, 5]),
        ("ExpandDims", [[2, 3]], {}, [-1], [2, 3, 1]),
        ("Tile", [[2, 3]], {}, [2, 1, 2], [2, 2, 6]),
        ("Gather", [[5, 3], [2, 4]], {}, 0, [2, 4, 3]),
    ],
)  # fmt: skip
def test_shape_rules(name: str, shapes: list, attrs: dict, operand: object, expected: list[int]) -> None:
    b = Builder()
    ins = [b.input(s) for s in shapes] + ([b.const(operand)] if operand is not None else [])
    out = b.op(name, ins, [1], **attrs)
    assert graphs.infer(b.graph([out]))["output_desc"][0]["shape"] == expected


def test_concat_reads_its_tensors_from_one_input_entry() -> None:
    b = Builder()
    x, y = b.input([2, 3]), b.input([2, 5])
    out = b.op("Concat", [x, y], [1], axis=1)
    out_op = b.ops[-1]
    out_op["input_desc"] = [[out_op["input_desc"][0][0], out_op["input_desc"][1][0]]]  # as MindSpore writes it
    out_op["attr"][0]["data_type"] = "int"
    assert graphs.infer(b.graph([out]))["output_desc"][0]["shape"] == [2, 8]


@pytest.mark.parametrize(
    ("name", "shapes", "operand"),
    [("Add", [[4, 2], [3, 2]], None), ("MatMul", [[2, 3], [4, 5]], None), ("Transpose", [[2, 3]], [0, 0]),
     ("BroadcastTo", [[3, 2]], [3, 4]), ("Reshape", [[5, 7]], [3, 11])],
)  # fmt: skip
def test_operands_that_do_not_fit_are_invalid(name: str, shapes: list, operand: object) -> None:
    b = Builder()
    ins = [b.input(s) for s in shapes] + ([b.const(operand)] if operand is not None else [])
    with pytest.raises(InvalidKernel):
        graphs.infer(b.graph([b.op(name, ins, [1])]))


def test_deleting_an_op_rewires_its_readers_and_keeps_what_it_read_as_output() -> None:
    graph = pointnet_branch()
    exp = 4  # Exp(feat): its readers (ReduceSum, RealDiv) read feat, which has its shape
    edited = graphs.checked(graphs.delete_ops(graph, [exp]))
    assert graphs.op_names(edited) == ["Mul", "Maximum", "ReduceMax", "Transpose", "ReduceSum", "RealDiv"]
    assert graphs.op_inputs(edited["op_desc"][4])[0]["tensor_name"] == "output_0_2"
    last = graphs.checked(graphs.delete_ops(graph, [6]))  # RealDiv wrote an output: e and s become outputs
    assert [t["tensor_name"] for t in last["output_desc"]] == ["output_0_4", "output_0_5", "output_0_3"]


def test_deleting_an_op_without_a_same_shaped_input_reads_a_new_graph_input() -> None:
    graph = pointnet_branch()
    edited = graphs.checked(graphs.delete_ops(graph, [2]))  # ReduceMax [2,64,8] -> [2,8]
    assert graphs.op_names(edited)[:2] == ["Mul", "Maximum"]
    assert [t["shape"] for t in graphs.graph_inputs(edited)] == [[2, 64, 8], [8], [2, 8]]


def test_cut_keeps_only_what_computes_the_tensor() -> None:
    edited = graphs.checked(graphs.cut_at(pointnet_branch(), "output_0_2"))
    assert graphs.op_names(edited) == ["Mul", "Maximum", "ReduceMax"]
    assert [t["tensor_name"] for t in edited["output_desc"]] == ["output_0_2"]


def test_linked_dims_shrink_through_shape_operands() -> None:
    b = Builder()
    x = b.input([6, 4])
    y = b.op("BroadcastTo", [x, b.const([3, 6, 4])], [3, 6, 4])
    z = b.op("Reshape", [y, b.const([18, 4])], [18, 4])
    graph = b.graph([z])
    shrunk = graphs.checked(graphs.replace_dim_value(graph, 6, 2))
    assert shrunk["output_desc"][0]["shape"] == [6, 4]
    assert graphs.operand(shrunk["op_desc"][0], "shape", 1) == [3, 2, 4]
    assert graphs.operand(shrunk["op_desc"][1], "shape", 1) == [6, 4]


def test_dtype_pass_changes_casts_too() -> None:
    b = Builder()
    x = b.input([4], "float16")
    y = b.op("Cast", [x, b.const(43)], [4], "float32")
    z = b.op("Add", [y, y], [4])
    case = load_input(write_info_case(b.graph([z])))
    (candidate,) = [e.after for e in SimplifyGraphDtypes().edits(case)]
    graph = graphs.loads(candidate.graph or "")
    assert graphs.dtypes(graph) == {"float32"} and candidate.inputs[0].dtype == "float32"


def write_info_case(graph: dict) -> Path:
    return write_info(Path(tempfile.mkdtemp()), graph)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_candidate_of_every_graph_pass_is_a_valid_smaller_graph(data: st.DataObject) -> None:
    case = load_input(write_info_case(pointnet_branch(data.draw(st.sampled_from([4, 5, 64])))))
    size = size_of(case)
    candidates = [c for p in (CutGraph(), ShrinkGraphDims(), SimplifyOperands()) for c in edited_cases(p, case)]
    for deletion in (DeleteOps(), DeleteOutputs()):
        units = len(deletion.units(case, 0))
        for _ in range(3):
            kept = data.draw(st.lists(st.integers(0, units - 1), unique=True, max_size=units - 1))
            candidate = deletion.keep(case, 0, sorted(kept))
            if candidate is not None:
                candidates.append(candidate)
    assert candidates
    for candidate in candidates:
        graph = graphs.loads(candidate.graph or "")
        assert numpy_mismatches(graph) == []  # the shapes it records are what numpy computes
        assert with_graph(candidate, copy.deepcopy(graph)).graph == candidate.graph  # already pruned and inferred
        assert size_of(candidate) < size


def test_crash_yaml_may_name_an_info_kernel(tmp_path: Path) -> None:
    write_info(tmp_path, pointnet_branch())
    (tmp_path / "crash.yaml").write_text("kernel: Fused_test.info\nattrs: {enable_auto_fuse: false}\n")
    case = load_case(tmp_path / "crash.yaml")
    assert kind_of(case) is GRAPH and case.attrs == {"enable_auto_fuse": False} and len(case.inputs) == 2
    (tmp_path / "crash.yaml").write_text("kernel: Fused_test.info\ninputs: [{shape: [1], dtype: float32}]\n")
    with pytest.raises(InputError, match=r"field 'inputs': differs from the inputs in Fused_test\.info"):
        load_case(tmp_path / "crash.yaml")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda g: g["op_desc"][2]["output_desc"][0].update(shape=[2, 9]),
         "field 'op_desc': ReduceMax writes output_0_2 as [2, 9] float32, its inputs give [2, 8] float32"),
        (lambda g: g["op_desc"][0]["input_desc"][0][0].update(tensor_name="nowhere"),
         "not a valid fused graph: Mul reads nowhere before it is computed"),
        (lambda g: g["input_desc"][0][0].update(shape=[2, 0, 8]), "field 'input_desc.0.0.shape'"),
        (lambda g: g.pop("output_desc"), "field 'output_desc': expected a list"),
        (lambda g: g.update(process="tpu"), "field 'process': expected one of cpu, cuda, aicore"),
        (lambda g: g["op_desc"][3]["input_desc"][1][0].update(value=[0, "a", 1]),
         "not a valid fused graph: Transpose cannot take its operands: TypeError"),
    ],
)  # fmt: skip
def test_broken_graphs_are_clear_errors(tmp_path: Path, change, expected: str) -> None:
    graph = pointnet_branch()
    change(graph)
    path = write_info(tmp_path, graph)
    before = path.read_text()
    run = subprocess.run([sys.executable, "-m", "reducer", "check", str(path)], capture_output=True, text=True)
    assert run.returncode == 2 and expected in run.stderr and "Traceback" not in run.stderr
    assert path.read_text() == before


def test_attrs_option_gives_the_build_attrs(tmp_path: Path) -> None:
    path = write_info(tmp_path, pointnet_branch())
    assert load_input(path, attrs='{"enable_auto_fuse": false}').attrs == {"enable_auto_fuse": False}
    run = subprocess.run([sys.executable, "-m", "reducer", "check", str(path), "--attrs", "{dim"],
                         capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 2 and "option '--attrs': not JSON" in run.stderr and "Traceback" not in run.stderr


def test_a_graph_moved_to_another_target_is_written_as_mindspore_writes_it_there() -> None:
    """MindSpore gives a fused graph `target_info` on CPU only (and GPU, from the device): none for Ascend."""
    case = load_input(DUMPED / "Fused_Mul_Add_ReLU_fusion_15115381953234874906.info")
    assert case.target == "cpu" and "target_info" in GRAPH.graph(case)
    ascend = GRAPH.on_target(case, "aicore")
    info = json.loads(info_text(ascend, outputs_of(ascend)))
    assert ascend.target == "aicore" and info["process"] == "aicore" and "target_info" not in info
    assert GRAPH.graph(GRAPH.on_target(ascend, "cpu")) == GRAPH.graph(case)
    assert info["op_desc"] == GRAPH.graph(case)["op_desc"]
