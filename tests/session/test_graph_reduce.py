"""Reductions of fused graphs against the fake compiler (bug G: a ReduceMax and a Transpose reading one
tensor, a dim >= 4): ops deleted with rewiring, dims shrunk through the graph, never slipping to bug H,
a bundle that replays the graph."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from conftest import FAKE_COMPILER
from graph_builder import pointnet_branch, write_info

from reducer.inputs.crash_yaml import load_case
from reducer.kernels import graph as graphs
from reducer.kernels.kinds import size_of
from reducer.session import Settings, reduce_case


def graph_case(folder: Path, **fields: object) -> Path:
    write_info(folder, pointnet_branch(64))
    shutil.copy(FAKE_COMPILER, folder / "fake_compiler.py")
    data = {"kernel": "Fused_test.info", "compiler": "fake_compiler.py", "timeout": 20,
            "attrs": {"enable_auto_fuse": False}, **fields}  # fmt: skip
    (folder / "crash.yaml").write_text(yaml.safe_dump(data))
    return folder / "crash.yaml"


def _reduce(crash: Path, out: Path, jobs: int = 1) -> Path:
    files = {"crash.yaml": crash.read_text(), "Fused_test.info": (crash.parent / "Fused_test.info").read_text()}
    bundle, _ = reduce_case(load_case(crash), files, out, Settings(jobs=jobs, diagnose=False))
    return bundle


def test_graph_reduces_to_the_two_ops_of_the_bug(tmp_path: Path) -> None:
    crash = graph_case(tmp_path / "branch")
    bundle = _reduce(crash, tmp_path / "out")
    reduced = load_case(bundle / "crash.yaml")
    graph = graphs.loads(reduced.graph or "")
    assert sorted(graphs.op_names(graph)) == ["ReduceMax", "Transpose"]
    assert max(d for t in reduced.inputs for d in t.shape) == 4 and len(reduced.inputs) == 1
    assert reduced.attrs == {} and size_of(reduced) < size_of(load_case(crash))
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert reduction["signature"]["location"] == "fake_band.cc:12"
    assert reduction["original"]["ops"] == 7 and reduction["reduced"]["ops"] == 2
    assert (
        not (bundle / "kernel.py").exists()
        and yaml.safe_load((bundle / "crash.yaml").read_text())["kernel"] == "kernel.info"
    )
    issue = (bundle / "ISSUE.md").read_text()
    assert "fused graph kernel of 2 ops" in issue and "= ReduceMax(input_" in issue
    assert "from a fused graph of 7 ops, 2 inputs and" in issue and "to 2 ops, 1 input and" in issue
    assert (bundle / "original" / "Fused_test.info").read_text() == (crash.parent / "Fused_test.info").read_text()


def test_graph_reduction_never_ends_on_another_bug(tmp_path: Path) -> None:
    """With the attr "trap", a Transpose left alone fails too, differently: never accepted."""
    crash = graph_case(tmp_path / "trap", attrs={"trap": 1})
    reduced = load_case(_reduce(crash, tmp_path / "out") / "crash.yaml")
    assert "ReduceMax" in graphs.op_names(graphs.loads(reduced.graph or ""))


def test_parallel_graph_reduction_equals_sequential(tmp_path: Path) -> None:
    crash = graph_case(tmp_path / "branch")
    one = _reduce(crash, tmp_path / "j1", jobs=1)
    two = _reduce(crash, tmp_path / "j2", jobs=2)
    assert (one / "kernel.info").read_text() == (two / "kernel.info").read_text()
