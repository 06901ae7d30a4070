"""A bare `.info` as input: a Custom hybrid `.info` loads back into the case it was written from; other
`.info` files and malformed ones are clear one-line errors (exit 2, no traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_case

from reducer.core.errors import InputError
from reducer.inputs.load import load_input, original_files
from reducer.kernels.hybrid import infer_outputs
from reducer.kernels.info import custom_info as info_of
from reducer.kernels.kinds import HYBRID, kind_of


def custom_info(tmp_path: Path) -> tuple[Path, dict]:
    case = load_input(write_case(tmp_path / "matmul_bias"))
    info = info_of(case, infer_outputs(case))
    path = tmp_path / "Fused_Custom_7.info"
    path.write_text(json.dumps(info))
    return path, info


def test_custom_hybrid_info_loads_back_into_its_case(tmp_path: Path) -> None:
    original = load_input(write_case(tmp_path / "matmul_bias"))
    path, _ = custom_info(tmp_path)
    case = load_input(path)
    assert case.name == "Fused_Custom_7" and case.function == "matmul_bias"
    assert case.inputs == original.inputs and case.source == original.source
    assert original_files(path) == {"Fused_Custom_7.info": path.read_text()}


def _fused_graph(info: dict) -> dict:
    ops = [{"name": "Add", "attr": [], "input_desc": [], "output_desc": []}, {"name": "ReduceSum", "attr": []}]
    return {**info, "op_desc": ops}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (_fused_graph, "field 'op_desc.0.output_desc': expected a list of tensors"),
        (lambda info: {**info, "op_desc": [{**info["op_desc"][0], "attr": [{"name": "func_type", "value": "aot"}]}]},
         "a Custom op of func_type 'aot'; expected one of hybrid, tvm_compute, ir_builder"),
        (lambda info: {**info, "input_desc": [[{"shape": [0, 2], "data_type": "float32"}]] * 3},
         "field 'input_desc.0.0.shape': expected a list of positive integers"),
        (lambda info: {**info, "input_desc": [[{"shape": [2], "data_type": "complex64"}]] * 3},
         "field 'input_desc.0.0.data_type': expected one of float16"),
        (lambda info: {k: v for k, v in info.items() if k != "op_desc"}, "field 'op_desc' is missing"),
        (lambda info: [info], "expected a JSON object"),
    ],
)  # fmt: skip
def test_other_info_files_are_clear_errors(tmp_path: Path, change, expected: str) -> None:
    path, info = custom_info(tmp_path)
    path.write_text(json.dumps(change(info)))
    with pytest.raises(InputError, match=r"Fused_Custom_7\.info: ") as caught:
        load_input(path)
    assert expected in str(caught.value)
    run = subprocess.run([sys.executable, "-m", "reducer", "check", str(path)], capture_output=True, text=True)
    assert run.returncode == 2 and expected in run.stderr and "Traceback" not in run.stderr


def test_info_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "k.info"
    path.write_text("{not json")
    with pytest.raises(InputError, match=r"k\.info: not JSON"):
        load_input(path)


def test_crash_yaml_may_name_a_custom_hybrid_info(tmp_path: Path) -> None:
    original = load_input(write_case(tmp_path / "matmul_bias"))
    path, _ = custom_info(tmp_path)
    (tmp_path / "crash.yaml").write_text(f"kernel: {path.name}\nattrs: {{enable_auto_inline: false}}\n")
    case = load_input(tmp_path / "crash.yaml")
    assert kind_of(case) is HYBRID and case.function == "matmul_bias" and case.source == original.source
    assert case.inputs == original.inputs and case.attrs == {"enable_auto_inline": False}
