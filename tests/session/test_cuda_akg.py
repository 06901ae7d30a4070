"""Target cuda against the real GPU build of AKG the wheel ships (lib/plugin/gpu11.6; no GPU needed): the
GPU corpus cases reduce to their signatures with bundles naming that build, the same kernel gives other
bugs with other builds on cpu and cuda, a bare `.info` of "process": "cuda" is compiled by the GPU build,
a kernel that reaches CUDA code generation is told apart, and aicore on this wheel is a clear error."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS, SharedReductions, needs_akg

pytestmark = [pytest.mark.akg, needs_akg]

GPU_CASES = {
    "gpu_softmax_shared_buffer": "Cannot find allocated buffer for placeholder",
    "gpu_pairwise_dim_map_size": "Check failed: map_size != 0",
    "gpu_matmul_fp16_sigfpe": "SIGFPE",
    "gpu_telang_pairwise_autofuse_segv": "SIGSEGV",
}


def reduce_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reducer", *args], capture_output=True, text=True, timeout=280, cwd=cwd
    )


RECORDING_NVCC = """#!/bin/sh
case "$*" in *--list-gpu-arch*) echo compute_75; exit 0;; *--version*) echo "release 13.0"; exit 0;; esac
echo "$*" >> "$NVCC_CALLS"
exit 1
"""


@pytest.mark.parametrize("name", sorted(GPU_CASES))
def test_gpu_corpus_case_reduces_with_the_gpu_build(tmp_path: Path, name: str) -> None:
    """... and no search candidate runs nvcc (past AKG's passes it tells the search nothing, and costs)."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "nvcc").write_text(RECORDING_NVCC)
    (tmp_path / "bin" / "nvcc").chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "NVCC_CALLS": str(tmp_path / "calls")}
    command = [str(CORPUS / name / "crash.yaml"), "-o", str(tmp_path / "out"), "-j", "2", "--no-diagnosis"]
    run = subprocess.run(
        [sys.executable, "-m", "reducer", *command], capture_output=True, text=True, timeout=280, env=env
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert not (tmp_path / "calls").exists()
    bundle = tmp_path / "out" / f"{name}-cuda"
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert GPU_CASES[name] in reduction["signature"]["raw"] + reduction["signature"]["message"]
    assert reduction["target"] == "cuda" and reduction["akg_build"]["name"].startswith("gpu")
    build = reduction["akg_build"]["name"]
    assert json.loads((bundle / "env.json").read_text())["akg_build"]["plugin_dir"].endswith(f"lib/plugin/{build}")
    issue = (bundle / "ISSUE.md").read_text()
    assert "/device gpu" in issue and f"lib/plugin/{build}/libakg.so" in issue and issue.startswith("# [AKG][GPU] ")
    assert "CPU wheel" not in issue and "compiled here: AKG's GPU passes" in issue  # and how far they go here
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copy(bundle / "repro.py", fresh)
    assert f'"plugin", "{build}"' in (fresh / "repro.py").read_text()
    repro = subprocess.run([sys.executable, "repro.py"], cwd=fresh, capture_output=True, text=True, timeout=200)
    assert repro.returncode == 1 and "The bug reproduces." in repro.stdout, repro.stdout + repro.stderr


@pytest.mark.xdist_group("pairwise_dim_realize")
def test_one_kernel_for_cpu_and_for_cuda_gives_two_bundles_of_two_builds(
    shared_reduction: SharedReductions, tmp_path: Path
) -> None:
    shutil.copytree(CORPUS / "pairwise_dim_realize", tmp_path / "case")
    cuda = tmp_path / "case" / "cuda.yaml"
    data = yaml.safe_load((tmp_path / "case" / "crash.yaml").read_text())
    data.pop("expect", None)
    cuda.write_text(yaml.safe_dump({**data, "target": "cuda"}))
    run = reduce_cli(str(cuda), "-o", str(tmp_path / "out"), "-j", "2", "--no-diagnosis")
    assert run.returncode == 0, run.stderr[-2000:]
    facts = {
        folder.name: (json.loads((folder / "env.json").read_text())["akg_build"]["name"], folder / "reduction.json")
        for folder in (
            shared_reduction.bundle("pairwise_dim_realize", "--no-diagnosis"),
            tmp_path / "out" / f"{data['name']}-cuda",
        )
    }
    assert list(facts) == ["pairwise_dim_realize", "pairwise_dim_realize-cuda"]
    assert [build for build, _ in facts.values()] == ["cpu", "gpu11.6"]
    signatures = [json.loads(path.read_text())["signature"]["location"] for _, path in facts.values()]
    assert signatures[0].startswith("realize_compress.cc") and signatures[1].startswith("schedule_tree_util.cc")
    # A cuda case is never compiled by the CPU build: asked for, it is refused, naming the builds.
    forced = reduce_cli("check", str(cuda), "--akg-build", "cpu")
    assert forced.returncode == 2 and "cpu does not compile target cuda" in forced.stderr


def test_a_bare_cuda_info_is_compiled_by_the_gpu_build(tmp_path: Path) -> None:
    info = next((CORPUS / "gpu_matmul_fp16_sigfpe").glob("*.info"))
    run = reduce_cli("check", str(info))
    expected = "signal: SIGFPE in akg::ir::poly::TileOuterBand::ResetWarpMappingConfig()"  # read by gdb
    assert run.returncode == 0 and run.stdout.strip() == expected, run.stdout + run.stderr


FAKE_NVCC = """#!/bin/sh
case "$*" in *--list-gpu-arch*) echo compute_75; echo compute_80; exit 0;; esac
echo "$*" > "$NVCC_ARGS"
echo "nvcc fatal   : Unsupported gpu architecture 'sm_75'"
exit 1
"""


@pytest.fixture(scope="module")
def transpose_for_cuda(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A float32 kernel that passes AKG's GPU pipeline: transpose_provide_call for cuda, without its expect."""
    folder = tmp_path_factory.mktemp("cuda") / "case"
    shutil.copytree(CORPUS / "transpose_provide_call", folder)
    data = yaml.safe_load((folder / "crash.yaml").read_text())
    data.pop("expect", None)
    (folder / "crash.yaml").write_text(yaml.safe_dump({**data, "target": "cuda"}))
    return folder / "crash.yaml"


def _check_with_path(crash: Path, path: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reducer", "check", str(crash)],
        capture_output=True, text=True, timeout=280, env={**os.environ, "PATH": path, **env},
    )  # fmt: skip


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs the machine's nvcc")
def test_a_cuda_kernel_goes_through_nvcc_without_a_gpu(transpose_for_cuda: Path) -> None:
    """nvcc is handed an architecture it supports, so a kernel AKG's GPU pipeline passes compiles to the end."""
    run = _check_with_path(transpose_for_cuda, os.environ["PATH"])
    assert run.returncode == 3 and "compiles without error" in run.stderr, run.stderr


def test_without_nvcc_a_cuda_kernel_stops_at_code_generation(transpose_for_cuda: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "gcc").symlink_to(shutil.which("gcc") or "/usr/bin/gcc")
    run = _check_with_path(transpose_for_cuda, f"{bare}:/usr/bin:/bin")
    assert run.returncode == 3 and "reaches CUDA code generation, which needs nvcc" in run.stderr, run.stderr


def _with_nvcc(script: str, tmp_path: Path) -> str:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvcc").write_text(script)
    (fake / "nvcc").chmod(0o755)
    return f"{fake}:{os.environ['PATH']}"


def test_an_nvcc_that_cannot_run_here_is_the_environment(transpose_for_cuda: Path, tmp_path: Path) -> None:
    """nvcc refusing the architecture (CUDA 13 without sm_70) is this machine's CUDA, not the kernel: exit 2
    with one line naming nvcc and what it said, never a bug to reduce. The kernel names no architecture: nvcc
    is given the lowest this nvcc lists."""
    args = tmp_path / "nvcc-args"
    run = _check_with_path(transpose_for_cuda, _with_nvcc(FAKE_NVCC, tmp_path), NVCC_ARGS=str(args))
    assert run.returncode == 2, run.stderr
    assert "this machine cannot compile the case for cuda: this machine's nvcc refuses" in run.stderr
    assert "Unsupported gpu architecture 'sm_75'" in run.stderr and "Traceback" not in run.stderr
    assert "-arch sm_75" in args.read_text()


INVALID_CUDA_NVCC = """#!/bin/sh
case "$*" in *--list-gpu-arch*) echo compute_75; exit 0;; esac
for source; do :; done
echo "$source(12): error: identifier \\"cc3\\" is undefined"
echo "1 error detected in the compilation of \\"$source\\"."
exit 1
"""


def test_an_nvcc_error_in_the_cuda_akg_generated_is_a_codegen_bug(transpose_for_cuda: Path, tmp_path: Path) -> None:
    """An error nvcc reports in AKG's own `my_kernel.cu` is AKG's code generation going wrong: a failure
    with nvcc's message masked, which `reduce check` prints (exit 0) and a reduction would keep."""
    run = _check_with_path(transpose_for_cuda, _with_nvcc(INVALID_CUDA_NVCC, tmp_path))
    assert run.returncode == 0, run.stderr
    expected = 'invalid-cuda: my_kernel.cu: error: identifier "cc3" is undefined at my_kernel.cu'
    assert run.stdout.strip() == expected, run.stdout


def test_aicore_with_a_python_whose_wheel_lacks_the_ascend_build(tmp_path: Path) -> None:
    """A `python:` is used as given: its MindSpore 2.10 has no Ascend build, which is said, not installed."""
    shutil.copytree(CORPUS / "conv3d_gemm_tiling", tmp_path / "case")
    crash = tmp_path / "case" / "crash.yaml"
    data = yaml.safe_load(crash.read_text())
    crash.write_text(yaml.safe_dump({**data, "target": "aicore", "python": sys.executable}))
    for args in (["check", str(crash)], [str(crash), "-o", str(tmp_path / "out")]):
        run = reduce_cli(*args)
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 2 and len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
        assert lines[0].startswith(f"error: {crash}: field 'target': aicore needs AKG's ascend build")
        assert "set python:" in lines[0]
