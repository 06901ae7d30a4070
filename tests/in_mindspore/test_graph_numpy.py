"""The numpy reference of fused graphs (reducer/in_mindspore/graph_numpy.py), what a wrong-result check of a graph
trusts: each op as MindSpore defines it, computed exactly and rounded once to the recorded dtype, and a clear
refusal of the ops it has no rule for."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import CORPUS
from graph_builder import DUMPED, Builder

from reducer.core.errors import InputError
from reducer.in_mindspore import graph_numpy
from reducer.inputs.load import load_input

pytestmark = pytest.mark.timeout(60)


def test_castup_graph_transposes_by_its_constant_perm() -> None:
    info = json.loads((CORPUS / "castup_transpose_fp16_mismatch" / "Fused_Transpose_split.info").read_text())
    x = np.arange(256, dtype=np.float16).reshape(16, 16)
    (out,) = graph_numpy.evaluate(info, [x])
    assert out.dtype == np.float16 and np.array_equal(out, x.T)


def test_a_whole_graph_against_numpy_written_by_hand() -> None:
    b = Builder()
    h, gamma = b.input([2, 3, 4]), b.input([4])
    x = b.op("Mul", [h, gamma], [2, 3, 4])
    x = b.op("Maximum", [x, b.const(0.0, "float32")], [2, 3, 4])
    peak = b.op("ReduceMax", [x, b.const([1])], [2, 1, 4], keep_dims=True)
    t = b.op("Transpose", [x, b.const([0, 2, 1])], [2, 4, 3])
    e = b.op("Exp", [b.op("Sub", [x, peak], [2, 3, 4])], [2, 3, 4])
    s = b.op("ReduceSum", [e, b.const([1])], [2, 4], keep_dims=False)
    half = b.op("Cast", [s, b.const("float16", "str")], [2, 4], "float16")
    picked = b.op("Select", [b.op("Greater", [s, b.const(2.0, "float32")], [2, 4], "bool"), s,
                             b.const(0.0, "float32")], [2, 4])  # fmt: skip
    graph = b.graph([half, t, picked])
    rng = np.random.default_rng(0)
    hv, gv = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32), rng.uniform(-1, 1, 4).astype(np.float32)
    xv = np.maximum(hv * gv, 0)
    sv = np.exp(xv - xv.max(axis=1, keepdims=True)).sum(axis=1)
    want = [sv.astype(np.float16), xv.transpose(0, 2, 1), np.where(sv > 2, sv, 0)]
    got = graph_numpy.evaluate(graph, [hv, gv])
    assert [g.dtype for g in got] == [np.float16, np.float32, np.float32]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_float16_ops_are_computed_exactly_and_rounded_once() -> None:
    """4096 values summed one by one in float16 drift far from the true sum; the reference rounds the exact
    sum once, which is what a kernel accumulating in float32 gives."""
    b = Builder()
    x = b.input([4096], "float16")
    graph = b.graph([b.op("ReduceSum", [x, b.const([0])], [1], "float16", keep_dims=False)])
    values = np.full(4096, 0.1, np.float16)
    (got,) = graph_numpy.evaluate(graph, [values])
    exact = np.float16(values.astype(np.float64).sum())
    assert got[0] == exact and abs(float(np.cumsum(values, dtype=np.float16)[-1]) - float(exact)) > 100


def test_matmul_flags_broadcast_and_concat_axis_as_a_constant() -> None:
    b = Builder()
    a, w, v = b.input([3, 2]), b.input([4, 3]), b.input([1, 4])
    m = b.op("MatMul", [a, w], [2, 4], transpose_a=True, transpose_b=True)
    wide = b.op("BroadcastTo", [v, b.const([2, 4])], [2, 4])
    cat = b.op("Concat", [m, wide, b.const(0)], [4, 4])
    av, wv, vv = (np.arange(n, dtype=np.float32).reshape(s) for n, s in ((6, (3, 2)), (12, (4, 3)), (4, (1, 4))))
    (got,) = graph_numpy.evaluate(b.graph([cat]), [av, wv, vv])
    np.testing.assert_allclose(got, np.concatenate([av.T @ wv.T, np.broadcast_to(vv, (2, 4))]))


@pytest.mark.parametrize("path", sorted(DUMPED.glob("*.info")) + sorted(CORPUS.glob("*/*.info")), ids=lambda p: p.name)
def test_every_graph_mindspore_wrote_is_covered_or_its_ops_named(path: Path) -> None:
    graph = json.loads(path.read_text())
    missing = graph_numpy.unsupported(graph)
    if missing:
        with pytest.raises(NotImplementedError):
            graph_numpy.evaluate(graph, [np.zeros(t[0]["shape"], t[0]["data_type"]) for t in graph["input_desc"]])
    else:
        outs = graph_numpy.evaluate(graph, [np.ones(t[0]["shape"], t[0]["data_type"]) for t in graph["input_desc"]])
        assert [list(o.shape) for o in outs] == [t["shape"] for t in graph["output_desc"]]


def test_a_wrong_result_case_of_a_graph_with_an_op_the_reference_lacks_is_refused(tmp_path: Path) -> None:
    b = Builder()
    x, i = b.input([4, 4]), b.input([2], "int32")
    (tmp_path / "k.info").write_text(json.dumps(b.graph([b.op("Gather", [x, i, b.const(0)], [2, 4])])))
    (tmp_path / "crash.yaml").write_text(yaml.safe_dump({"kernel": "k.info", "expect": {"kind": "mismatch"}}))
    with pytest.raises(InputError, match=r"field 'expect.kind': the numpy reference of fused graphs has no rule for "
                                         r"Gather"):  # fmt: skip
        load_input(tmp_path / "crash.yaml")


def test_a_wrong_result_case_of_a_graph_for_a_gpu_is_refused(tmp_path: Path) -> None:
    graph = json.loads((CORPUS / "castup_transpose_fp16_mismatch" / "Fused_Transpose_split.info").read_text())
    (tmp_path / "k.info").write_text(json.dumps({**graph, "process": "cuda"}))
    (tmp_path / "crash.yaml").write_text(
        yaml.safe_dump({"kernel": "k.info", "target": "cuda", "expect": {"kind": "mismatch"}})
    )
    with pytest.raises(InputError, match=r"cuda fused graphs run on a GPU only .*takes target cpu"):
        load_input(tmp_path / "crash.yaml")


def test_round_takes_the_decimals_mindspore_writes_as_a_second_input() -> None:
    b = Builder()
    x = b.input([4])
    graph = b.graph([b.op("Round", [x, b.const(1)], [4])])
    (got,) = graph_numpy.evaluate(graph, [np.array([0.25, 0.75, -1.25, 2.5], np.float32)])
    np.testing.assert_allclose(got, [0.2, 0.8, -1.2, 2.5], rtol=1e-6)  # halves to even, as MindSpore's Round
