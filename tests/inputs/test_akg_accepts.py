"""Kernels AKG and MindSpore take are taken (issue 31's list, each as a file the project writes in the shape of
AKG's and MindSpore's own test kernels): a kernel JSON in a `.json` file, an op with `"attr": {}`, a graph with
no tensor input (`"input_desc": null`), BroadcastTo of a constant to the shape in its attr, a compare op whose
output desc says float16, a Reshape to a scalar, a Select between constants, a Custom op whose func_name is not
its def's name, and `allocate(shape, dtype, 'local')`. Each loads; the real AKG compiles them, and the tool
says so (exit 3), never exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import needs_akg

from reducer.core.errors import InputError
from reducer.inputs.load import load_input
from reducer.kernels import graph as graphs
from reducer.kernels.kinds import GRAPH, HYBRID, kind_of
from reducer.nightly.discover import discover


def tensor(name: str, shape: list[int], dtype: str = "float32", **more: object) -> dict:
    return {"data_type": dtype, "format": "DefaultFormat", "name": name, "shape": shape, "tensor_name": name, **more}


def op(name: str, inputs: list[dict], out: dict, attr: object = None) -> dict:
    return {"attr": attr, "impl_path": "", "input_desc": [[t] for t in inputs], "name": name, "output_desc": [out]}


def kernel_json(ops: list[dict], inputs: list[dict] | None, outputs: list[dict]) -> dict:
    return {"composite": True, "composite_graph": "1.1", "id": 1, "input_desc": [[t] for t in inputs] if inputs
            else None, "op": "Fused_accepts", "op_desc": ops, "output_desc": outputs, "platform": "AKG",
            "process": "cpu", "version": 1}  # fmt: skip


def atomic_clean() -> dict:
    """The graph MindSpore's parallel fusion writes to zero an accumulator: BroadcastTo of 0.0, no input."""
    zero = op("BroadcastTo", [tensor("input_0", [1], value=0.0)], tensor("output_0_0", [256]),
              [{"data_type": "listInt", "name": "shape", "value": [256]}])  # fmt: skip
    return kernel_json([zero], None, [tensor("output_0_0", [256])])


def mixed_graph() -> dict:
    """Attr {}, a compare to float16 as in a dropout fusion, a Select between constants, a Reshape to a scalar."""
    x, keep = tensor("input_1", [4, 8], "float16"), tensor("input_2", [1], "float16", value=0.9)
    mask = op("LessEqual", [x, keep], tensor("output_0_1", [4, 8], "float16"))
    scaled = op("Mul", [tensor("output_0_1", [4, 8], "float16"), x], tensor("output_0_2", [4, 8], "float16"), {})
    flag = op("Greater", [tensor("input_3", [1], value=1.0), tensor("input_4", [1], value=0.0)],
              tensor("output_0_3", [1], "bool"))  # fmt: skip
    picked = op("Select", [tensor("output_0_3", [1], "bool"), tensor("input_5", [1], value=2.0),
                           tensor("input_6", [1], value=3.0)], tensor("output_0_4", [1]))  # fmt: skip
    scalar = op("Reshape", [tensor("output_0_4", [1])], tensor("output_0_5", [1]),
                [{"data_type": "listInt", "name": "shape", "value": []}])  # fmt: skip
    nchw = op("Reshape", [tensor("output_0_2", [4, 8], "float16")], tensor("output_0_6", [8, 4, 1], "float16"))
    ops = [mask, scaled, flag, picked, scalar, nchw]  # the last: no shape operand, its output desc says it
    outputs = [tensor("output_0_6", [8, 4, 1], "float16"), tensor("output_0_5", [1])]
    return kernel_json(ops, [x], outputs)


SCOPED = """def trsm_kernel(a, b):
    acc = allocate(b.shape, b.dtype, 'local')
    out = output_tensor(b.shape, b.dtype)
    for i in range(b.shape[0]):
        for j in range(b.shape[1]):
            acc[i, j] = a[i, i] * b[i, j]
            out[i, j] = acc[i, j] + b[i, j]
    return out
"""


def custom_op() -> dict:
    """A Custom hybrid op registered as `trsm` (func_name), its source defining `trsm_kernel`."""
    attrs = [{"data_type": "str", "name": n, "value": v}
             for n, v in (("func_type", "hybrid"), ("func_name", "trsm"), ("func_source_str", SCOPED))]  # fmt: skip
    a, b = tensor("input_0", [8, 8]), tensor("input_1", [8, 16])
    custom = op("Custom", [a, b], tensor("output_0_0", [8, 16]), attrs)
    return kernel_json([custom], [a, b], [tensor("output_0_0", [8, 16])])


KERNELS = {"atomic_clean.json": atomic_clean, "mixed.info": mixed_graph, "Fused_Custom_trsm.info": custom_op}


@pytest.fixture
def kernels(tmp_path: Path) -> Path:
    for name, make in KERNELS.items():
        (tmp_path / name).write_text(json.dumps(make(), indent=1))
    (tmp_path / "case").mkdir()
    (tmp_path / "case" / "dropout.json").write_text(json.dumps(mixed_graph()))
    (tmp_path / "case" / "crash.yaml").write_text(yaml.safe_dump({"kernel": "dropout.json", "target": "cpu"}))
    (tmp_path / "report.json").write_text(json.dumps({"bugs": []}))  # a JSON that is no kernel
    return tmp_path


def test_each_loads_as_the_kernel_it_is(kernels: Path) -> None:
    clean = load_input(kernels / "atomic_clean.json")
    assert kind_of(clean) is GRAPH and clean.inputs == ()
    assert graphs.graph_inputs(graphs.loads(clean.graph or "")) == []
    mixed = load_input(kernels / "mixed.info")
    outputs = graphs.loads(mixed.graph or "")["op_desc"]
    assert outputs[0]["output_desc"][0]["data_type"] == "float16" and outputs[4]["output_desc"][0]["shape"] == [1]
    shrunk = graphs.checked(graphs.replace_dim_value(graphs.loads(mixed.graph or ""), 8, 2))  # a dim shrinks
    assert shrunk["op_desc"][5]["output_desc"][0]["shape"] == [2, 4, 1]  # the reshape without operand follows
    custom = load_input(kernels / "Fused_Custom_trsm.info")
    assert kind_of(custom) is HYBRID and custom.function == "trsm_kernel"
    assert load_input(kernels / "case" / "crash.yaml").graph == load_input(kernels / "case" / "dropout.json").graph


def test_a_night_finds_json_kernels_and_leaves_other_json_alone(kernels: Path) -> None:
    found = {c.slug: c.problem for c in discover(kernels, kernels / "out")}
    assert found == {"atomic_clean": "", "mixed": "", "Fused_Custom_trsm": "", "case": ""}


@pytest.mark.quick
@needs_akg
@pytest.mark.akg
def test_the_real_akg_compiles_them_and_the_tool_says_so(kernels: Path) -> None:
    for name in [*KERNELS, "case/crash.yaml"]:
        run = subprocess.run([sys.executable, "-m", "reducer", "check", str(kernels / name)],
                             capture_output=True, text=True, timeout=240)  # fmt: skip
        assert run.returncode == 3 and "compiles without error" in run.stderr, (name, run.stderr[-1500:])


def test_a_json_that_is_no_kernel_says_what_it_was_read_as(kernels: Path) -> None:
    with pytest.raises(InputError, match=r"report\.json: field 'kernel': .*no kernel JSON, which has 'op_desc'"):
        load_input(kernels / "report.json")
