"""The wrong-result check of TeLang and ir_builder kernels against the real AKG on CPU: AKG's build of the
kernel's .info, run through tvm's CPU runtime, compared with its compute definition evaluated in numpy (an
ir_builder kernel: plain TVM's build of the same function) run on
its inputs widened. Kernels that compute right are right (an approximate exp, a float16 sum of 1024 terms
that plain TVM adds in order, two outputs, an op attr, an ir_builder kernel); the corpus's TeLang conv2d that
computes wrong with auto-fuse off reduces to a kernel whose repro.py shows it in a fresh folder."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS, ROOT, needs_akg

from reducer.inputs.crash_yaml import load_case
from reducer.kernels.kinds import kind_of

pytestmark = [pytest.mark.akg, needs_akg]

RIGHT = ROOT / "tests" / "data" / "telang_right"
MINDSPORE_WROTE = ROOT / "tests" / "data" / "custom_attrs"  # a TeLang and an ir_builder kernel with an op attr
WRONG = CORPUS / "telang_conv2d_no_autofuse_wrong"
EXIT_NOT_FAILING = 3


def _check(crash: Path, cwd: Path) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "reducer", "check", str(crash)], capture_output=True, text=True, timeout=280, cwd=cwd
    )
    assert run.returncode == EXIT_NOT_FAILING, run.stdout + run.stderr[-2000:]
    return run.stderr


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(p.name for p in RIGHT.iterdir()))
def test_a_telang_kernel_that_computes_right_is_right_at_every_element(name: str, tmp_path: Path) -> None:
    crash = RIGHT / name / "crash.yaml"
    said = _check(crash, tmp_path)
    outputs = kind_of(load_case(crash)).outputs(load_case(crash))
    elements = sum(math.prod(o.shape) for o in outputs)
    assert "computes the same result as its reference" in said
    assert f"within tolerance of the numpy reference ({elements} elements compared)" in said


@pytest.mark.timeout(300)
def test_a_float16_kernel_whose_own_run_overflows_is_right_where_it_does_not(tmp_path: Path) -> None:
    """(x * 284) squared stored in float16 overflows where |x| > 0.66: plain TVM's float16 run gives inf or
    inf - inf = NaN there, its float32 run numbers; any result is right there (AKG's own inlined float32 gives
    x), so those elements are left out and the rest compared: right, not "computes wrong" at the NaNs."""
    said = _check(ROOT / "tests" / "data" / "telang_fp16_overflow" / "crash.yaml", tmp_path)
    assert "computes the same result as its reference" in said
    compared = int(re.search(r"\((\d+) elements compared\)", said)[1])
    assert 0.5 * 512 < compared < 512


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("info", "reference"), [("te_scale.info", "numpy"), ("ib_scale.info", "plain TVM")])
def test_a_kernel_mindspore_wrote_with_an_op_attr_is_right(info: str, reference: str, tmp_path: Path) -> None:
    shutil.copy(MINDSPORE_WROTE / info, tmp_path / info)
    crash = tmp_path / "crash.yaml"
    crash.write_text(yaml.safe_dump({"name": info[:-5], "kernel": info, "expect": {"kind": "mismatch"}}))
    assert f"{reference} reference (32 elements compared)" in _check(crash, tmp_path)


@pytest.mark.timeout(840)
def test_a_telang_kernel_that_computes_wrong_reduces_to_a_repro_of_it(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "reducer", str(WRONG / "crash.yaml"), "-o", str(tmp_path / "out"), "-j", "2",
         "--no-diagnosis"],
        capture_output=True,
        text=True,
        timeout=580,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    bundle = tmp_path / "out" / WRONG.name
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert reduction["signature"]["kind"] == "mismatch" and "wrong values" in reduction["signature"]["message"]
    reduced = load_case(bundle / "crash.yaml")
    assert reduced.attrs == {"enable_auto_fuse": False}  # the bug needs auto-fuse off
    kernel = (bundle / "kernel.py").read_text()
    assert "tvm.if_then_else" in kernel and "tvm.sum" in kernel
    assert reduction["reduced"]["tokens"] <= reduction["original"]["tokens"] / 2
    issue = (bundle / "ISSUE.md").read_text()
    assert "computes **wrong results** on CPU" in issue and "its compute definition evaluated in numpy" in issue
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copy(bundle / "repro.py", fresh)
    repro = subprocess.run([sys.executable, "repro.py"], cwd=fresh, capture_output=True, text=True, timeout=120)
    assert repro.returncode == 1, repro.stdout + repro.stderr
    assert "against the numpy reference" in repro.stdout and "The bug reproduces" in repro.stdout
    assert re.search(r"max abs error [0-9.e-]+ \(\d+ of \d+ compared elements off", repro.stdout)
    assert sorted(p.name for p in fresh.iterdir()) == ["repro.py"]  # the check leaves nothing behind
    # The script of the issue runs the kernel as its user does, build attrs included: without them AKG would
    # die in auto-fuse and MindSpore wait forever.
    script = next(b for b in re.findall(r"```python\n(.*?)```", issue, re.S) if "ops.Custom" in b)
    assert """op.add_prim_attr("func_compile_attrs", '{"enable_auto_fuse": false}')""" in script
    (fresh / "user.py").write_text(script)
    user = subprocess.run([sys.executable, "user.py"], cwd=fresh, capture_output=True, text=True, timeout=240)
    assert user.returncode == 0 and re.search(r"^\[[-0-9. e]+\]$", user.stdout, re.M), user.stdout + user.stderr
