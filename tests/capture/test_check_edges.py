"""The wrong-result check where it is easily fooled, on real fused kernels: `reduce capture --check-always` on
a MindSpore script of small nets (tests/data/scripts/op_edges.py) run with graph-kernel fusion, and `reduce
check` on a graph MindSpore's CPU fusion never makes (a float16 sum added in float16: MindSpore casts it to
float32 first). Each kernel is judged as it is: right where AKG computes what MindSpore means, imprecise
where AKG's float32 Exp is far less accurate than MindSpore's, not checked where nothing can tell."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import HERE, needs_akg
from graph_builder import Builder, write_info
from test_capture import reduce_cli

pytestmark = [pytest.mark.akg, needs_akg, pytest.mark.timeout(300)]
SCRIPT = HERE / "data" / "scripts" / "op_edges.py"


@pytest.fixture(scope="module")
def edges(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What the capture says of every kernel the script built: ops -> (verdict list, its entry)."""
    cwd = tmp_path_factory.mktemp("edges")
    run = reduce_cli("capture", "-o", "out", "--no-reduce", "--check-always", "--", sys.executable, str(SCRIPT),
                     cwd=cwd)  # fmt: skip
    assert run.returncode == 0, run.stderr
    report = json.loads((cwd / "out" / "capture.json").read_text())
    found: dict[str, Any] = {}
    for verdict in ("kernels", "computes_right", "not_checked", "not_reproduced"):
        for entry in report.get(verdict, []):
            info = next((cwd / "out").rglob(f"{entry['name']}.info"))
            ops = " ".join(op["name"] for op in json.loads(info.read_text())["op_desc"])
            found[ops] = (verdict, entry)
    return found


def test_integer_division_of_negative_operands_by_real_divisors_computes_right(edges: dict) -> None:
    """int32 FloorDiv and FloorMod round down, RealDiv toward zero, as AKG and MindSpore do (the reference
    floored RealDiv: a false alarm), and the divisors are drawn non-zero (a zero killed the check with
    SIGFPE)."""
    verdict, entry = edges["Mul FloorDiv FloorMod Add RealDiv Add"]
    assert verdict == "computes_right" and "(64 elements compared)" in entry["why"]


def test_a_float16_floor_division_may_floor_a_quotient_at_an_integer_either_way(edges: dict) -> None:
    """floor(a * 2 / b) in float16: where the quotient is within float16's rounding of an integer, AKG's
    answer may be one less or more (the old check called it wrong: off by 1 above 0.005); elsewhere it is
    compared exactly."""
    verdict, entry = edges["Mul FloorDiv Add"]
    assert verdict == "computes_right" and "elements compared)" in entry["why"]


def test_ops_defined_on_part_of_the_range_are_checked_where_they_are_defined(edges: dict) -> None:
    """log(x) and sqrt(x - 0.5): inputs drawn at 0.5 and above, so every element is compared (drawn in
    [-1, 1), most would be NaN in the reference and the check compared little)."""
    verdict, entry = edges["Log Mul Add Sqrt Add"]
    assert verdict == "computes_right" and "(64 elements compared)" in entry["why"]


def test_a_float_cast_to_uint8_computes_right(edges: dict) -> None:
    """uint8(x * 255 + 0.5): inputs drawn in [0, 1], where the cast is defined (negative ones wrap in numpy
    and saturate in AKG: 240 off, a false alarm)."""
    assert edges["Mul Add Cast Add"][0] == "computes_right"


def test_a_float16_comparison_and_a_float16_sum_compute_right(edges: dict) -> None:
    """a * b > c in float16, where ties within rounding may go either way; the sum MindSpore adds in float32."""
    assert edges["Mul Greater Add Mul Select Mul Cast ReduceSum"][0] == "computes_right"


def test_a_float32_result_of_float16_arithmetic_may_carry_float16_sized_errors(edges: dict) -> None:
    """float32(a * b + c) * 2 of float16 a, b, c: its error is float16's, as its graph says it computes."""
    verdict, entry = edges["Mul Add Cast Mul"]
    assert verdict == "computes_right" and "(2048 elements compared)" in entry["why"]


def test_a_float32_exp_far_less_accurate_than_mindspores_is_imprecise(edges: dict) -> None:
    """AKG's fused float32 Exp is off by about 5e-5 relative, some 45 times MindSpore's own kernel: under the
    old 1e-3 tolerance it passed; now it is a wrong result of its own kind, precision."""
    verdict, entry = edges["Exp Mul Add"]
    assert verdict == "kernels"
    assert entry["signature"].startswith("mismatch: wrong result: imprecise values")


def _graph_case(folder: Path, graph: dict) -> Path:
    write_info(folder, graph, "k.info")
    (folder / "crash.yaml").write_text(yaml.safe_dump({"name": folder.name, "kernel": "k.info",
                                                       "expect": {"kind": "mismatch"}}))  # fmt: skip
    return folder / "crash.yaml"


def _check(crash: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reducer", "check", str(crash)], capture_output=True, text=True,
                          timeout=280)  # fmt: skip


def test_a_long_float16_sum_added_in_float16_is_not_checked_and_a_short_one_is(tmp_path: Path) -> None:
    """AKG adds a float16 sum in float16; over 4096 positive terms a right sum may then lie anywhere within
    twice the exact one, so the check says it compared nothing (exit 3, "not checked"), never "right"."""
    for terms in (4096, 64):
        b = Builder()
        x = b.input([8, terms], "float16")
        magnitude = b.op("Abs", [x], [8, terms], "float16")
        total = b.op("ReduceSum", [magnitude, b.const([1])], [8], "float16", keep_dims=False)
        check = _check(_graph_case(tmp_path / f"sum{terms}", b.graph([total])))
        assert check.returncode == 3, check.stderr
        said = "not checked: output 0 (0 of 8)" if terms == 4096 else "computes the same result as its reference"
        assert said in check.stderr, check.stderr


def test_the_imprecise_exp_reduces_to_one_exp_that_stays_imprecise(tmp_path: Path) -> None:
    """corpus/fused_exp_float32_imprecise (the script's Exp kernel): the same wrong kind at the same ops, so
    the minimal graph is one float32 Exp."""
    crash = HERE.parent / "corpus" / "fused_exp_float32_imprecise" / "crash.yaml"
    run = reduce_cli(str(crash), "-o", "out", "-j", "2", "--no-diagnosis", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    bundle = tmp_path / "out" / "fused_exp_float32_imprecise"
    minimal = json.loads((bundle / "kernel.info").read_text())
    assert [(op["name"], op["output_desc"][0]["data_type"]) for op in minimal["op_desc"]] == [("Exp", "float32")]
    signature = json.loads((bundle / "reduction.json").read_text())["signature"]
    assert signature["message"] == "wrong result: imprecise values (each off by at most 1 %)"
