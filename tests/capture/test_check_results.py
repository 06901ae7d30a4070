"""`reduce capture --check-results -- CMD` on a real MindSpore script whose fused kernels compute wrongly
(MindSpore's own test_castup net, examples/point_features_castup.py): the wrong kernel is named, reduced to a
minimal graph that still computes wrongly, its repro.py shows the error in a fresh dir, and the graph-kernel
flag that makes the run itself pass is found; a run whose kernels are right is "nothing wrong in AKG"."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, needs_akg
from test_capture import one_error_line, reduce_cli, snapshot

EXAMPLE = ROOT / "examples" / "point_features_castup.py"
pytestmark = [pytest.mark.akg, needs_akg]


@pytest.mark.timeout(400)
def test_the_wrong_fused_kernel_of_a_failing_test_is_reduced_with_a_way_out(tmp_path: Path) -> None:
    before = snapshot(EXAMPLE.parent)
    run = reduce_cli("capture", "-o", "out", "--no-diagnosis", "--check-results", "--",
                     sys.executable, str(EXAMPLE), cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert snapshot(EXAMPLE.parent) == before
    report = json.loads((tmp_path / "out" / "capture.json").read_text())
    assert report["final_error"].startswith("AssertionError")
    [wrong] = report["kernels"]
    assert wrong["name"].startswith("Fused_Transpose_") and wrong["signature"].startswith("mismatch:")
    assert [k["name"][: len("Fused_Neg_Cast")] for k in report["computes_right"]] == ["Fused_Neg_Cast"]
    [way_out] = [w for w in wrong["run_workarounds"] if w["passes"]]
    assert way_out["setting"] == "MS_DEV_GRAPH_KERNEL_FLAGS='--disable_cluster_ops=Transpose'"
    assert way_out["setting"] in run.stdout

    bundle = Path(tmp_path / wrong["bundle"])
    minimal = json.loads((bundle / "kernel.info").read_text())
    assert [op["name"] for op in minimal["op_desc"]] == ["Transpose"]
    assert minimal["input_desc"][0][0]["data_type"] == "float16"
    issue = (bundle / "ISSUE.md").read_text()
    assert "computes **wrong results** on CPU" in issue and "a numpy evaluation of the graph's ops" in issue
    assert "| element of output 0 | expected | AKG gives |" in issue and "input_0 = [[" in issue
    assert "<details><summary>Graph-kernel settings tried on the user's run" in issue
    assert "**the run passes (exit status 0)**" in issue
    assert "- On your run: `MS_DEV_GRAPH_KERNEL_FLAGS=" in (bundle / "README.md").read_text()  # what to do: there
    assert str(tmp_path) not in issue and sys.prefix not in issue  # a captured run's paths are redacted
    assert "<details><summary>kernel.info: the kernel JSON MindSpore hands to AKG</summary>" in issue
    assert "AssertionError" in issue  # where it came from
    assert "output 0: max abs error" in issue and "AKG-REDUCE-DETAIL" not in issue  # the check's own lines

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copy(bundle / "repro.py", fresh / "repro.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TVM_", "LD_LIBRARY"))}
    repro = subprocess.run(
        [sys.executable, "repro.py"], cwd=fresh, capture_output=True, text=True, timeout=120, env=env
    )
    assert repro.returncode == 1, repro.stdout + repro.stderr
    assert "The bug reproduces: AKG computes a wrong result." in repro.stdout
    assert "against the numpy reference" in repro.stdout
    assert [p.name for p in fresh.iterdir()] == ["repro.py"]  # AKG's files went to the check's temp dir


@pytest.mark.timeout(300)
def test_a_run_whose_fused_kernels_are_right_is_nothing_wrong_in_akg(tmp_path: Path) -> None:
    """With the Transpose kept out of fusion the net passes: --check-results then checks nothing (the run
    passed), --check-always checks the kernel that is left and finds it right."""
    env = {**os.environ, "MS_DEV_GRAPH_KERNEL_FLAGS": "--disable_cluster_ops=Transpose"}
    command = ["--", sys.executable, str(EXAMPLE)]
    passed = subprocess.run([sys.executable, "-m", "reducer", "capture", "-o", "a", "--check-results", *command],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=280)  # fmt: skip
    assert passed.returncode == 3
    assert one_error_line(passed).startswith("error: nothing wrong in AKG: ") and "exit status 0" in passed.stderr
    assert "--check-always" in passed.stderr
    checked = subprocess.run([sys.executable, "-m", "reducer", "capture", "-o", "b", "--check-always", *command],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=280)  # fmt: skip
    assert checked.returncode == 3
    line = one_error_line(checked)
    assert line.startswith("error: nothing wrong in AKG: every kernel checked computes what its reference says (")
    assert "Fused_Cast_" in line and "Fused_Neg_" in line and "Transpose" not in line
