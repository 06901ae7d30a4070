"""TeLang kernels against the real AKG: the TeLang user script of examples/ is captured (ended early once
MindSpore waits forever for the compile that crashed) and reduced to the same bug (its frame) in a fraction of
its tokens, with a bundle a maintainer can use (kernel.py in TeLang, the `ops.Custom(..., func_type="akg")`
script, repro.py that reproduces in a fresh dir, auto-fuse off refused as a way out: the original then
compiles and computes wrong); a bare `.info`
MindSpore wrote for a TeLang op is reduced like it; an ir_builder kernel is reduced in its configuration."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, ROOT, needs_akg

from reducer.inputs.crash_yaml import load_case
from reducer.kernels.kinds import size_of

pytestmark = [pytest.mark.akg, needs_akg]

CASE = "telang_conv3d_autofuse_segv"
FRAME = "akg::schedule::FuseCheck::GetInnerNonReduceAxisLen"
MAX_TOKEN_SHARE = 0.4


@pytest.mark.quick
@pytest.mark.timeout(300)
def test_a_telang_info_mindspore_wrote_reduces(tmp_path: Path) -> None:
    info = ROOT / "tests" / "data" / "telang" / "Fused_Custom_5358066002288502.info"
    run = subprocess.run(
        [sys.executable, "-m", "reducer", str(info), "-o", str(tmp_path / "out"), "--no-diagnosis"],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    bundle = tmp_path / "out" / info.stem
    kernel = json.loads((bundle / "kernel.info").read_text())
    attrs = {a["name"]: a["value"] for a in kernel["op_desc"][0]["attr"]}
    assert attrs["func_type"] == "tvm_compute" and attrs["func_source_str"] == (bundle / "kernel.py").read_text()
    assert FRAME in json.loads((bundle / "reduction.json").read_text())["signature"]["frames"][0]


@pytest.mark.timeout(900)
def test_the_telang_script_is_captured_reduced_and_diagnosed_well_before_its_timeout(tmp_path: Path) -> None:
    """examples/voxel_conv3d_telang.py, the voxel conv3d in TeLang (corpus/telang_conv3d_autofuse_segv is its
    kernel): AKG crashes, MindSpore waits forever, capture ends the run once it stalls, and the kernel reduces
    to the same frame in at most 40 % of its tokens, with a bundle a maintainer can use."""
    script = ROOT / "examples" / "voxel_conv3d_telang.py"
    timeout = "400"
    run = subprocess.run(
        [sys.executable, "-m", "reducer", "capture", "--run-timeout", timeout, "-o", "out", "-j", "2", "--",
         sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=880,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((tmp_path / "out" / "capture.json").read_text())
    assert report["killed"] == "stalled" and report["seconds"] < float(timeout) / 2
    assert "MindSpore waits forever for a compile that died" in run.stderr
    [kernel] = report["kernels"]
    assert kernel["status"] == "reduced" and FRAME in kernel["signature"]
    bundle = tmp_path / "out" / kernel["name"]
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert reduction["signature"]["kind"] == "signal" and FRAME in reduction["signature"]["frames"][0]
    reduced = load_case(bundle / "crash.yaml")
    assert reduced.func_type == "tvm_compute" and "tvm.compute" in (bundle / "kernel.py").read_text()
    assert size_of(reduced).tokens <= MAX_TOKEN_SHARE * size_of(load_case(CORPUS / CASE / "crash.yaml")).tokens
    issue = (bundle / "ISSUE.md").read_text()
    assert "TeLang (TVM compute) kernel, Custom op func_type='akg'" in issue and 'func_type="akg"' in issue
    assert "well-formed: every element of every output is defined by its `tvm.compute` (by construction)" in issue
    # The original compiles with auto-fuse off, and computes wrong (corpus/telang_conv2d_no_autofuse_wrong):
    # no way out.
    assert "**auto-fuse off**" not in issue
    assert "| auto-fuse off | passes | compiles, computes wrong: mismatch: wrong result: wrong values" in issue
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copy(bundle / "repro.py", fresh)
    repro = subprocess.run([sys.executable, "repro.py"], cwd=fresh, capture_output=True, text=True, timeout=120)
    assert repro.returncode == 1 and "The bug reproduces." in repro.stdout, repro.stdout + repro.stderr


ROW_SUM_IR = """def row_sum_ir(ins, attrs):
    def body(src, dst):
        ib = tvm.ir_builder.create()
        with ib.for_range(0, src.shape[0], name="i") as i:
            ib.store(dst, i, tvm.const(0, src.dtype))
            with ib.for_range(0, src.shape[1], name="j") as j:
                ib.store(dst, i, ib.load(dst, i) + ib.load(src, i * attrs["cols"] + j))
        return ib.get()
    return tvm.extern((ins[0].shape[0],), ins, lambda i, o: body(i[0], o[0]), dtype=ins[0].dtype)
"""


@pytest.mark.quick
@pytest.mark.timeout(300)
def test_an_ir_builder_kernel_is_reduced_in_attrs_env_dims_and_dtypes(tmp_path: Path) -> None:
    """An ir_builder kernel that loads its 2-D input with one flat index (AKG's buffer.cc check says so), its
    row length an op attr read from the attrs dict AKG hands it; the attr becomes its value in the minimal
    kernel."""
    (tmp_path / "k.py").write_text(ROW_SUM_IR)
    (tmp_path / "crash.yaml").write_text(
        "kernel: k.py\ninputs: [{shape: [64, 32], dtype: float16}]\nop_attrs: {cols: 32}\n"
        "attrs: {enable_auto_fuse: false, dim: '0 0 4 4'}\nenv: {MS_DEV_X: '1'}\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "reducer", str(tmp_path / "crash.yaml"), "-o", str(tmp_path / "out"), "--no-diagnosis"],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    reduced = load_case(tmp_path / "out" / tmp_path.name / "crash.yaml")
    assert reduced.func_type == "ir_builder" and reduced.op_attrs == {}
    assert "ib.load(src, i * 32 + j)" in reduced.source and "attrs[" not in reduced.source
    assert reduced.attrs == {} and reduced.env == {}
    assert [(t.shape, t.dtype) for t in reduced.inputs] == [((1, 1), "float32")]
    assert "ir_builder (TVM IR builder) kernel" in (tmp_path / "out" / tmp_path.name / "ISSUE.md").read_text()


WINDOW = "telang_window_autofuse_source_call"


@pytest.mark.timeout(300)
def test_a_window_with_unnamed_axes_a_guarded_read_and_an_attr_reduces_to_its_bug(tmp_path: Path) -> None:
    """Written as people write TeLang: two reduce axes without name= (both `rv`), a read guarded by a condition
    of two axes, an op attr. Each original is a valid kernel (the probe tells the axes apart, checks the
    guarded read point by point, hands the function its attr) and the minimal one fails the same way."""
    run = subprocess.run(
        [sys.executable, "-m", "reducer", str(CORPUS / WINDOW / "crash.yaml"), "-o", str(tmp_path), "--no-diagnosis"],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    bundle = tmp_path / WINDOW
    original, reduced = load_case(CORPUS / WINDOW / "crash.yaml"), load_case(bundle / "crash.yaml")
    assert original.op_attrs == {"scale": 0.5} and reduced.op_attrs == {}
    assert size_of(reduced).tokens <= 0.5 * size_of(original).tokens
    assert reduced.expect is not None and reduced.expect.message == "Check failed: source_call->func.defined()"
    repro = subprocess.run([sys.executable, "repro.py"], cwd=bundle, capture_output=True, text=True, timeout=120)
    assert repro.returncode == 1 and "The bug reproduces." in repro.stdout, repro.stdout + repro.stderr
