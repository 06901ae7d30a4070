"""The nvcc stand-in of a GPU-less machine: the shim hands nvcc an architecture it supports, and a kernel JSON
that names none is given one AKG does not tune for."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from reducer.toolchain import nvcc

RECORDER = '#!/bin/sh\necho "$@" > "$NVCC_ARGS"\n'


@pytest.mark.parametrize(
    ("asked", "given"), [("sm_70", "sm_75"), ("sm_80", "sm_80"), ("sm_76", "sm_80"), ("sm_200", "sm_90")]
)
def test_the_shim_gives_nvcc_the_nearest_architecture_it_supports(tmp_path: Path, asked: str, given: str) -> None:
    real = tmp_path / "nvcc"
    real.write_text(RECORDER)
    real.chmod(0o755)
    env = {**os.environ, "AKG_REDUCE_NVCC": str(real), "AKG_REDUCE_NVCC_ARCHS": "75,80,90",
           "NVCC_ARGS": str(tmp_path / "args")}  # fmt: skip
    command = [str(nvcc.SHIM_DIR / "nvcc"), "--ptx", "-O3", "-arch", asked, "-o", "k.ptx", "my_kernel.cu"]
    subprocess.run(command, env=env, check=True, timeout=30)
    assert (tmp_path / "args").read_text().split() == ["--ptx", "-O3", "-arch", given, "-o", "k.ptx", "my_kernel.cu"]


@pytest.mark.parametrize(
    ("archs", "info", "capability"),
    [
        ((75, 80), {"op": "k"}, "7.5"),  # none named: the lowest nvcc supports
        ((70, 75), {"op": "k"}, "7.5"),  # ... but not 7.0, which makes AKG tune for a V100
        ((75,), {"op": "k", "target_info": {"compute_capability": "7.0"}}, "7.0"),  # named: kept, the shim maps it
    ],
)
def test_a_kernel_naming_no_architecture_gets_one_akg_does_not_tune_for(
    monkeypatch: pytest.MonkeyPatch, archs: tuple[int, ...], info: dict, capability: str
) -> None:
    monkeypatch.setattr(nvcc, "nvcc_archs", lambda: archs)
    monkeypatch.setattr(nvcc, "stands_in", lambda: True)
    given = json.loads(nvcc.with_architecture(json.dumps(info)))
    assert given["target_info"]["compute_capability"] == capability and given["op"] == "k"


def test_for_a_search_candidate_the_shim_stops_before_nvcc(tmp_path: Path) -> None:
    real = tmp_path / "nvcc"
    real.write_text(RECORDER)
    real.chmod(0o755)
    env = {**os.environ, "AKG_REDUCE_NVCC": str(real), "AKG_REDUCE_NVCC_ARCHS": "75",
           "NVCC_ARGS": str(tmp_path / "args"), "AKG_REDUCE_NVCC_STOP": nvcc.STOPPED}  # fmt: skip
    command = [str(nvcc.SHIM_DIR / "nvcc"), "--ptx", "-arch", "sm_75", "k.cu"]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30)
    assert run.returncode == 1 and nvcc.STOPPED in run.stdout and not (tmp_path / "args").exists()
