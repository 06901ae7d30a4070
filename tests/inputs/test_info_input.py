"""A bare `.info` as input: a Custom hybrid `.info` loads back into the case it was written from; other
`.info` files and malformed ones are clear one-line errors (exit 2, no traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import compile_case, needs_akg, write_case

from reducer.core.errors import InputError
from reducer.inputs.crash_yaml import case_to_yaml
from reducer.inputs.info_file import case_from_info
from reducer.inputs.load import load_input, original_files
from reducer.kernels.hybrid import infer_outputs
from reducer.kernels.info import custom_info as info_of
from reducer.kernels.kinds import HYBRID, kind_of, outputs_of


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


WITH_ATTRS = Path(__file__).parent.parent / "data" / "custom_attrs"  # written by MindSpore: dump_custom_info.py


@pytest.mark.akg
@needs_akg
@pytest.mark.timeout(120)
@pytest.mark.parametrize("path", sorted(WITH_ATTRS.glob("*.info")), ids=lambda p: p.name)
def test_a_custom_ops_attrs_are_read_handed_to_its_function_and_written_as_mindspore_writes_them(path: Path) -> None:
    """A TeLang and an ir_builder op with an attr, as MindSpore wrote them: the attr is read, the function
    gets it (it evaluates), it is written back with its data_type, `attr_names` and a parameter count that
    includes it, and AKG builds the kernel."""
    theirs = {a["name"]: a for a in json.loads(path.read_text())["op_desc"][0]["attr"]}
    case = case_from_info(path, path.read_text())
    assert case.op_attrs == {"scale": theirs["scale"]["value"]}
    ours = {a["name"]: a for a in info_of(case, outputs_of(case))["op_desc"][0]["attr"]}
    for name in ("scale", "attr_names", "inputs_num", "func_type", "func_name"):
        assert ours[name] == theirs[name], name
    outcome = compile_case(case, outputs_of(case))
    assert outcome.returncode == 0 and outcome.signal is None, outcome.output[-2000:]


def test_op_attrs_round_trip_through_crash_yaml_and_a_function_that_does_not_take_them_is_refused(
    tmp_path: Path,
) -> None:
    crash = write_case(tmp_path / "scaled", op_attrs={"scale": 0.5, "axes": [0, 1]})
    with pytest.raises(InputError, match=r"field 'inputs': matmul_bias takes 3 parameters; 3 inputs and 2 op attrs"):
        load_input(crash)
    kernel = (tmp_path / "scaled" / "kernel.py").read_text().replace("(a, b, bias)", "(a, b, bias, scale, axes)", 1)
    (tmp_path / "scaled" / "kernel.py").write_text(kernel)
    case = load_input(crash)
    assert case.op_attrs == {"scale": 0.5, "axes": [0, 1]}
    again = tmp_path / "again.yaml"
    again.write_text(case_to_yaml(case, str(tmp_path / "scaled" / "kernel.py"), None))
    assert load_input(again).key() == case.key()
    attrs = {a["name"]: a for a in info_of(case, infer_outputs(case))["op_desc"][0]["attr"]}
    assert attrs["axes"] == {"data_type": "listInt", "name": "axes", "value": [0, 1]}
    assert attrs["attr_names"]["value"] == ["scale", "axes"] and attrs["inputs_num"]["value"] == 5
