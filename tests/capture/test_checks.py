"""What capture and from-log do with each failing kernel before reducing it, against the real AKG: kernels
of one bug are merged (the smallest is the one reduced), a kernel that compiles alone or fails alone with a
failure the run did not show is not reduced (same bug or nothing), and the exit code says what was found."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, needs_akg

from reducer.inputs.failure_log import read_log

pytestmark = [pytest.mark.akg, needs_akg]

CUSTOM_LOG = (ROOT / "tests" / "data" / "logs" / "voxel_conv3d_custom.log").read_text()
FUSION_LOG = (ROOT / "corpus" / "pointnet_head_fusion_dst_type" / "run.log").read_text()
ADD = """def add(a, b):
    c = output_tensor(a.shape, a.dtype)
    for i in range(a.shape[0]):
        c[i] = a[i] + b[i]
    return c
"""


def message(info: dict[str, Any]) -> str:
    """A compile error line as MindSpore 2.10 prints it."""
    return f'ValueError: Compile error, args: {json.dumps(info)}! build attrs: {{"compile_cache":"./"}}\n'


def smaller_conv(info: dict[str, Any]) -> dict[str, Any]:
    """The captured conv3d on a 7x7x7 grid: the same bug, a different kernel."""
    other = copy.deepcopy(info)
    other["op"] = "Fused_Custom_7"
    other["input_desc"][0][0]["shape"] = [1, 4, 7, 7, 7]
    for desc in (other["output_desc"], other["op_desc"][0]["output_desc"]):
        desc[0]["shape"] = [1, 8, 5, 5, 5]
    return other


def add_kernel(info: dict[str, Any]) -> dict[str, Any]:
    """The captured Custom op with an elementwise add as its source: it compiles."""
    other = copy.deepcopy(info)
    other["op"] = "Fused_Custom_add"
    for attr in other["op_desc"][0]["attr"]:
        if attr["name"] == "func_source_str":
            attr["value"] = "from mindspore.ops import kernel\n\n\n@kernel\n" + ADD
        if attr["name"] == "func_name":
            attr["value"] = "add"
    spec = {"data_type": "float32", "format": "DefaultFormat", "shape": [16]}
    other["input_desc"] = [[{**spec, "tensor_name": f"input_{i}"}] for i in range(2)]
    other["op_desc"][0]["input_desc"] = copy.deepcopy(other["input_desc"])
    out = {"data_type": "float32", "format": "DefaultFormat", "shape": [16], "tensor_name": "output_0_0"}
    other["output_desc"] = [out]
    other["op_desc"][0]["output_desc"] = [{**out, "name": "output_0"}]
    return other


def from_log(tmp_path: Path, text: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    log = tmp_path / "run.log"
    log.write_text(text)
    command = [sys.executable, "-m", "reducer", "from-log", str(log), "-o", str(tmp_path / "out"), "--no-reduce"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=280)
    report = tmp_path / "out" / "capture.json"
    return run, json.loads(report.read_text()) if report.exists() else {}


def test_two_kernels_of_one_bug_are_merged_onto_the_smaller(tmp_path: Path) -> None:
    conv = read_log(CUSTOM_LOG).kernels[0].info
    run, report = from_log(tmp_path, CUSTOM_LOG + message(smaller_conv(conv)))
    assert run.returncode == 0, run.stderr
    statuses = {k["name"]: (k["status"], k.get("duplicate_of")) for k in report["kernels"]}
    assert statuses == {"Fused_Custom_7": ("captured", None), conv["op"]: ("duplicate", "Fused_Custom_7")}
    assert len({k["bug"] for k in report["kernels"]}) == 1


def test_a_kernel_that_compiles_alone_is_not_reproduced(tmp_path: Path) -> None:
    conv = read_log(CUSTOM_LOG).kernels[0].info
    run, report = from_log(tmp_path, message(add_kernel(conv)) + "RuntimeError: Response is empty.\n")
    assert run.returncode == 3, run.stderr
    [entry] = report["not_reproduced"]
    assert entry["name"] == "Fused_Custom_add" and "compiles fine on its own" in entry["why"]
    assert not report["kernels"]


def test_a_kernel_failing_alone_otherwise_than_the_run_showed_is_not_reduced(tmp_path: Path) -> None:
    fusion = read_log(FUSION_LOG).kernels[0].info
    run_said = "[ERROR] AKG:2026-12-03-17:29:30.645.393 [tiling_utils.cc:193] [tiling] Check failed: x < y\n"
    run, report = from_log(tmp_path, run_said + message(fusion) + "RuntimeError: Response is empty.\n")
    assert run.returncode == 3, run.stderr
    [entry] = report["not_reproduced"]
    assert "which the run did not show" in entry["why"] and "Check failed: x < y" in entry["why"]


def test_a_kernel_name_from_a_log_cannot_leave_the_output_folder(tmp_path: Path) -> None:
    conv = copy.deepcopy(read_log(CUSTOM_LOG).kernels[0].info)
    conv["op"] = "../../escaped"
    run, report = from_log(tmp_path, message(conv))
    assert run.returncode == 0, run.stderr
    [kernel] = report["kernels"]
    assert Path(kernel["crash_yaml"]).resolve().is_relative_to((tmp_path / "out").resolve())
    assert not (tmp_path / "escaped").exists() and not (tmp_path.parent / "escaped").exists()
