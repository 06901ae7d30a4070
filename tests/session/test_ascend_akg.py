"""`target: aicore` against AKG's real Ascend pipeline (MindSpore 2.7.2's Ascend build, which the tool installs
itself): a Hybrid DSL kernel reduces to the same Ascend-only bug with a bundle naming that toolchain, whose
repro.py reproduces with it and says how to get it otherwise; a kernel that gets through to CCE code generation
is not a bug (exit 3); an emitter that takes float16 only is a usage error with float16 as the way out,
verified on the original; `reduce toolchain` names what compiles aicore."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS, SharedReductions, needs_akg, needs_ascend

from reducer.core.targets import AICORE
from reducer.inputs.crash_yaml import load_case
from reducer.inputs.load import load_input
from reducer.kernels.kinds import GRAPH, size_of
from reducer.toolchain import releases

pytestmark = [pytest.mark.akg, needs_akg]

CASE = "ascend_fps_insn_emitter"
OPTIONS = ("--diagnosis-budget", "60")
SOFTMAX = "telang_softmax_reduction_factor"  # a TeLang softmax: its reductions meet Ascend's reduce emitter


def reduce_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reducer", *args], capture_output=True, text=True, timeout=timeout)


def softmax_on_aicore(folder: Path, dtype: str) -> Path:
    shutil.copytree(CORPUS / SOFTMAX, folder)
    crash = folder / "crash.yaml"
    data = yaml.safe_load(crash.read_text())
    data.update(target="aicore", inputs=[{"shape": [1024, 40], "dtype": dtype}])
    data.pop("expect", None)
    crash.write_text(yaml.safe_dump(data))
    return crash


@pytest.fixture(scope="module")
def ascend_python() -> str:
    needs_ascend()
    python = releases.installed(AICORE)
    assert python is not None
    return python


@pytest.mark.timeout(900)
@pytest.mark.xdist_group("ascend_fps")
def test_an_ascend_only_bug_reduces_with_a_bundle_naming_its_toolchain(
    shared_reduction: SharedReductions, ascend_python: str, tmp_path: Path
) -> None:
    bundle = shared_reduction.bundle(CASE, *OPTIONS)
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert reduction["signature"]["location"] == "insn_emitter.cc:81"
    assert reduction["signature"]["message"].startswith("Check failed: call_cnt == N")
    reduced, original = load_case(bundle / "crash.yaml"), load_case(CORPUS / CASE / "crash.yaml")
    assert reduced.target == "aicore" and reduced.python is None
    assert size_of(reduced).tokens < 0.6 * size_of(original).tokens

    issue = (bundle / "ISSUE.md").read_text()
    library = Path(ascend_python).parents[1].glob("lib/python*/site-packages/mindspore/lib/plugin/ascend/libakg.so")
    digest = hashlib.sha256(next(library).read_bytes()).hexdigest()
    assert "**MindSpore version (source or binary)**: 2.7.2" in issue
    build = f"`lib/plugin/ascend/libakg.so, sha256 {digest[:12]}`"  # on its own line, not under "GCC/Compiler"
    assert f"- **AKG version**: the build shipped in the MindSpore wheel, {build}" in issue
    assert issue.startswith("# [AKG][Ascend] Check failed: call_cnt == ") and "\n/device ascend\n" in issue
    assert "MindSpore 2.7's CPU wheels ship AKG's Ascend build" in issue
    assert "AKG's whole Ascend pipeline up to CCE code generation" in issue
    # The same kernel on CPU aborts in isl (farthest_point_sampling_isl_abort): another bug.
    targets = {r["target"]: r for r in reduction["diagnosis"]["targets"]}
    assert targets["aicore"]["minimal"] == "fails the same way" and set(targets) >= {"cpu", "cuda"}
    assert all(targets[t]["minimal"] != "fails the same way" for t in ("cpu", "cuda"))
    assert "<details><summary>Targets: the minimal case fails on aicore only</summary>" in issue
    tried = {t["name"] for t in reduction["diagnosis"]["workaround_tries"]}
    assert {"rescheduling off", "manual tiling, small tiles", "float16 instead of float32"} <= tried

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copy(bundle / "repro.py", fresh / "repro.py")
    run = subprocess.run([ascend_python, "repro.py"], cwd=fresh, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "The bug reproduces." in run.stdout, run.stdout + run.stderr
    # This suite's MindSpore (2.10) has no Ascend build: repro.py says where to get one.
    run = subprocess.run([sys.executable, "repro.py"], cwd=fresh, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "This MindSpore has no AKG build 'ascend'" in run.stderr
    assert "`pip install mindspore==2.7.2 decorator` into a Python 3.11 venv" in run.stderr


@pytest.mark.timeout(300)
def test_a_kernel_that_reaches_cce_code_generation_is_not_a_bug(ascend_python: str, tmp_path: Path) -> None:
    crash = softmax_on_aicore(tmp_path / "case", "float16")
    for args in (["check", str(crash)], [str(crash), "-o", str(tmp_path / "out")]):
        run = reduce_cli(*args)
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 3 and "Traceback" not in run.stderr, run.stderr
        assert lines[-1].startswith("error: the original passes AKG's Ascend pipeline and reaches CCE code generation")
        assert lines[-1].endswith("That is CANN's code generation, not AKG's passes: nothing to reduce here")
    assert not (tmp_path / "out").exists()


@pytest.mark.timeout(600)
def test_a_float32_reduction_on_ascend_is_a_usage_error_with_float16_as_the_way_out(
    ascend_python: str, tmp_path: Path
) -> None:
    crash = softmax_on_aicore(tmp_path / "case", "float32")
    run = reduce_cli(str(crash), "-o", str(tmp_path / "out"), "-j", "2", "--no-diagnosis")
    assert run.returncode == 5, run.stderr[-3000:]  # the triage says it is not AKG's: the exit code says so too
    bundle = tmp_path / "out" / f"{SOFTMAX}-aicore"
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert reduction["signature"]["location"] == "insn_builder_vector.cc:813"
    triage = reduction["triage"]
    assert triage["verdict"] == "usage-error", triage
    assert triage["reason"].startswith("`reduce_last_axis` takes float16 only and the kernel computes in float32")
    assert triage["reason"].endswith("with the inputs in float16 instead of float32 the original compiles")
    assert "the original with the inputs in float16 instead of float32: the kernel compiles" in triage["evidence"]
    assert "**Not an AKG bug: a usage error.**" in (bundle / "README.md").read_text()  # told to the user
    assert "\nTriage: usage error: `reduce_last_axis` takes float16 only" in (bundle / "ISSUE.md").read_text()
    assert run.stdout.strip().splitlines()[-1].startswith("what to do: compute this op in float16")


@pytest.mark.timeout(300)
def test_a_fused_graph_on_ascend_meets_the_same_emitter_and_gets_the_same_way_out(
    ascend_python: str, tmp_path: Path
) -> None:
    """The PointNet classifier's log-softmax graph as MindSpore writes it for Ascend (`"process": "aicore"`,
    no target_info): its float32 ReduceMax meets the float16-only emitter; in float16 the original compiles."""
    graph = load_input(CORPUS / "pointnet_cls_logsoftmax_hang" / "crash.yaml")
    info = tmp_path / "Fused_MatMul_Add_ReduceMax_Sub_Exp_ReduceSum_Log_Sub_fusion_2.info"
    info.write_text(json.dumps(GRAPH.graph(GRAPH.on_target(graph, "aicore"))))
    run = reduce_cli(str(info), "-o", str(tmp_path / "out"), "-j", "2", "--no-diagnosis")
    assert run.returncode == 5, run.stderr[-3000:]  # a usage error: not AKG's
    reduction = json.loads((tmp_path / "out" / f"{info.stem}-aicore" / "reduction.json").read_text())
    assert reduction["signature"]["location"] == "insn_builder_vector.cc:813"
    assert reduction["triage"]["verdict"] == "usage-error"
    assert reduction["triage"]["reason"].endswith("with the inputs in float16 instead of float32 the original compiles")


@pytest.mark.timeout(300)
def test_reduce_toolchain_names_what_compiles_aicore(ascend_python: str) -> None:
    run = reduce_cli("toolchain", "aicore")
    assert run.returncode == 0, run.stderr
    first, second = run.stdout.strip().splitlines()
    assert first == f"aicore: MindSpore 2.7.2 at {ascend_python}"
    library = second.split(": ", 1)[1].split(", sha256 ")[0]
    assert second.startswith("AKG build ascend: ") and library.endswith("lib/plugin/ascend/libakg.so")
    assert second.endswith(hashlib.sha256(Path(library).read_bytes()).hexdigest())
    wrong = reduce_cli("toolchain", "npu")
    assert wrong.returncode == 2 and wrong.stderr.strip() == (
        "error: Invalid value for 'TARGET': Value error, 'npu' is not one of 'cpu', 'cuda', 'aicore'. "
        "(see 'reduce toolchain -h')"
    )
