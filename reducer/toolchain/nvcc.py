"""nvcc for AKG's GPU pipeline on a machine without a GPU, so a cuda compile runs to its end (CUDA code
generation and nvcc) instead of stopping where AKG looks for a GPU to learn the architecture.

AKG takes the architecture from the kernel JSON's `target_info.compute_capability` (composite/build_module.py),
else from the GPU; with neither it stops (`arch(sm_xy) is not passed`). So a kernel without one is given the
lowest architecture this nvcc supports, never 7.0 or 8.0 (those also make AKG tune for a V100 or an A100).
A kernel that names an architecture this nvcc no longer supports (sm_70 on CUDA 13) keeps it for AKG's
passes, and the nvcc shim (nvcc_shim/nvcc, first on the compile's PATH) hands nvcc the nearest one it does."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from reducer.toolchain.builds import cuda_host

SHIM_DIR = Path(__file__).with_name("nvcc_shim")
# What the shim says in place of nvcc when a compile is told to stop there (akg.compile_case's stop_at_codegen).
STOPPED = "akg-reduce: nvcc not run: this compile stops where nvcc would start"
TUNED_CAPABILITIES = {"7.0", "8.0"}  # AKG sets its device_type (v100, a100) from these


@functools.cache
def nvcc_archs() -> tuple[int, ...]:
    """The architectures (75, 80, ...) this machine's nvcc compiles for; () without nvcc."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return ()
    try:
        text = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(sorted({int(n) for n in re.findall(r"compute_(\d+)", text)}))


def stands_in() -> bool:
    """Does the reducer stand in for the GPU here: nvcc is present and no GPU is?"""
    return bool(nvcc_archs()) and not cuda_host().has_gpu


def nvcc_env(path: str, run: bool = True) -> dict[str, str]:
    """The variables of a cuda compile that put the nvcc shim before nvcc on `path` (nothing with a GPU);
    without `run`, the shim stops the compile there, saying STOPPED."""
    nvcc = shutil.which("nvcc")
    if not stands_in() or nvcc is None:
        return {}
    return {
        "PATH": os.pathsep.join([str(SHIM_DIR), path]),
        "AKG_REDUCE_NVCC": nvcc,
        "AKG_REDUCE_NVCC_ARCHS": ",".join(map(str, nvcc_archs())),
        **({} if run else {"AKG_REDUCE_NVCC_STOP": STOPPED}),
    }


def stand_in_capability() -> str:
    """The compute capability given to a kernel that names none: the lowest this nvcc supports, not a tuned one."""
    capabilities = [f"{a // 10}.{a % 10}" for a in nvcc_archs()]
    return next((c for c in capabilities if c not in TUNED_CAPABILITIES), capabilities[-1])


def with_architecture(info_text: str) -> str:
    """The kernel JSON of a cuda compile, given an architecture when it names none and no GPU is here to say."""
    if not stands_in():
        return info_text
    info = json.loads(info_text)
    target = info.get("target_info") if isinstance(info.get("target_info"), dict) else {}
    if target.get("compute_capability") or info.get("compute_capability"):
        return info_text
    info["target_info"] = {**target, "compute_capability": stand_in_capability()}
    return json.dumps(info, separators=(",", ":"))


def gpu_pipeline_reach() -> str:
    """How far a cuda compile gets on this machine, for the bundle."""
    if cuda_host().has_gpu:
        return "the whole GPU pipeline, on this machine's GPU"
    if not stands_in():
        return "AKG's GPU passes up to CUDA code generation (no GPU, no nvcc to go on)"
    return (
        "AKG's GPU passes, CUDA code generation and nvcc (no GPU: kernels are compiled, not run; nvcc gets "
        f"sm_{stand_in_capability().replace('.', '')} for a kernel that names no architecture, and the nearest "
        "architecture it supports for one it no longer does)"
    )
