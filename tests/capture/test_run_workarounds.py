"""The graph-kernel flags of a user's run: those tried to get out of wrong results (which, in what order, when
the trying stops), and the build attrs the run's own flags gave the kernels it built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from graph_builder import Builder

from reducer.capture.found import FLAGS_ENV, built, compile_env, flag_attrs, write_case
from reducer.capture.run_workarounds import FUSION_OFF, candidates, try_flags
from reducer.compile.sandbox import Outcome
from reducer.inputs.kernel_meta import WrittenKernel

pytestmark = pytest.mark.timeout(30)


def _graph() -> dict:
    """Transpose, Neg, Cast."""
    b = Builder()
    x = b.input([4, 4], "float16")
    t = b.op("Transpose", [x, b.const([1, 0])], [4, 4], "float16")
    n = b.op("Neg", [t], [4, 4], "float16")
    return b.graph([b.op("Cast", [n, b.const("float32", "str")], [4, 4], "float32")])


def _outcome(code: int) -> Outcome:
    return Outcome(returncode=code, signal=None, timed_out=False, out_of_memory=False, seconds=1.0, output="")


def test_each_op_kind_is_kept_out_of_fusion_last_op_first_then_fusion_is_off() -> None:
    assert candidates([_graph()]) == [
        "--disable_cluster_ops=Cast",
        "--disable_cluster_ops=Neg",
        "--disable_cluster_ops=Transpose",
        FUSION_OFF,
    ]


def test_trying_stops_at_the_first_flag_that_makes_the_run_pass(tmp_path: Path) -> None:
    runs: list[str] = []

    def rerun(flag: str, log: Path) -> tuple[str, Outcome]:
        runs.append(flag)
        return f"MS_DEV_GRAPH_KERNEL_FLAGS={flag!r}", _outcome(0 if flag.endswith("Neg") else 1)

    tried = try_flags([_graph()], rerun, tmp_path)
    assert runs == ["--disable_cluster_ops=Cast", "--disable_cluster_ops=Neg"]
    assert [w.passes for w in tried] == [False, True]
    assert tried[0].outcome == "the run still fails (exit status 1)"


def test_a_kernel_that_is_no_graph_gets_no_flags(tmp_path: Path) -> None:
    custom = {"op_desc": [{"name": "Custom"}]}
    assert try_flags([custom], lambda flag, log: pytest.fail("ran"), tmp_path) == []


def _exp_graph() -> dict:
    """Exp, Mul."""
    b = Builder()
    x = b.input([8])
    return b.graph([b.op("Mul", [b.op("Exp", [x], [8]), b.const(0.5, "float32")], [8])])


def test_two_wrong_kernels_of_different_ops_are_kept_out_together(tmp_path: Path) -> None:
    """A run with two wrong kernels passes only when both are out of fusion: each flag names an op of each,
    and the trying takes as many runs as for one kernel, not one search per kernel."""
    assert candidates([_graph(), _exp_graph()]) == [
        "--disable_cluster_ops=Cast,Mul",
        "--disable_cluster_ops=Neg,Exp",
        "--disable_cluster_ops=Transpose,Exp",
        FUSION_OFF,
    ]
    runs: list[str] = []

    def rerun(flag: str, log: Path) -> tuple[str, Outcome]:
        runs.append(flag)
        both_out = "Neg" in flag and "Exp" in flag
        return f"MS_DEV_GRAPH_KERNEL_FLAGS={flag!r}", _outcome(0 if both_out else 1)

    tried = try_flags([_graph(), _exp_graph()], rerun, tmp_path)
    assert [w.passes for w in tried] == [False, True] and len(runs) == 2


def test_a_kernel_the_run_built_is_checked_with_the_attrs_its_flags_gave_it(tmp_path: Path) -> None:
    """MindSpore logs a kernel's build attrs only when its build fails; those of a kernel it built are what
    its graph-kernel flags make of them (online_tuning above 0, repository_path), besides the cache's and the
    log's, which only steer."""
    flags = "--opt_level=2 --online_tuning=2 --repository_path=/data/tiling.json --enable_expand_ops=Gelu"
    assert flag_attrs({FLAGS_ENV: flags}) == {"online_tuning": 2, "repository_path": "/data/tiling.json"}
    assert flag_attrs({FLAGS_ENV: "--online_tuning=0 --online_tuning=x"}) == {} == flag_attrs({})
    written = tmp_path / "Fused_Exp_fusion_1.info"
    written.write_text(json.dumps(_exp_graph()))
    (kernel,) = built([WrittenKernel(written, _exp_graph(), compiled=True)], tmp_path, {"online_tuning": 2})
    crash = yaml.safe_load(write_case(kernel, {}, tmp_path / "case", "").read_text())
    assert crash["attrs"] == {"online_tuning": 2}


def test_a_captured_case_keeps_the_variables_akg_reads_and_none_of_akg_reduces() -> None:
    """A run started under akg-reduce (its cache, its sandbox variables set) is not a different compile."""
    env = {"AKG_WHITE_LIST_PATH": "/repo", "AKG_REDUCE_CACHE": "/tmp/c.sqlite", "AKG_REDUCE_SANDBOX": "42",
           "MS_DEV_DUMP_IR": "on", FLAGS_ENV: "--enable_cluster_ops=FloorDiv", "HOME": "/root"}  # fmt: skip
    assert compile_env(env) == {"AKG_WHITE_LIST_PATH": "/repo", FLAGS_ENV: "--enable_cluster_ops=FloorDiv"}
