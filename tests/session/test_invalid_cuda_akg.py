"""An invalid-cuda original reduces on a machine with nvcc (real AKG's GPU pipeline; no GPU): its candidates
run nvcc, which decides the bug, instead of stopping where nvcc would start (then every candidate was "nvcc
not run" and nothing was reduced). The nvcc here stands in for an nvcc that rejects the CUDA AKG generates
when it stages a buffer in shared memory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS, needs_akg

pytestmark = [pytest.mark.akg, needs_akg, pytest.mark.timeout(400)]

REJECTS_SHARED_MEMORY = """#!/bin/sh
case "$*" in *--list-gpu-arch*) echo compute_75; exit 0;; *--version*) echo "release 13.0"; exit 0;; esac
for source; do :; done
echo "$source" >> "$NVCC_CALLS"
if grep -q __shared__ "$source"; then
  echo "$source(31): error: identifier \\"input_1_shared\\" is undefined"
  exit 1
fi
echo ptx > "${source%.cu}.ptx"
"""


def test_an_invalid_cuda_original_reduces_with_nvcc(tmp_path: Path) -> None:
    shutil.copytree(CORPUS / "transpose_provide_call", tmp_path / "case")
    crash = tmp_path / "case" / "crash.yaml"
    data = yaml.safe_load(crash.read_text())
    data.pop("expect", None)
    crash.write_text(yaml.safe_dump({**data, "target": "cuda"}))
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "nvcc").write_text(REJECTS_SHARED_MEMORY)
    (tmp_path / "bin" / "nvcc").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
        "NVCC_CALLS": str(tmp_path / "calls"),
        "AKG_REDUCE_CACHE": str(tmp_path / "cache.sqlite"),
    }
    command = [sys.executable, "-m", "reducer", str(crash), "-o", str(tmp_path / "out"), "-j", "2", "--no-diagnosis"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=380, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    reduction = json.loads((tmp_path / "out" / "transpose_provide_call-cuda" / "reduction.json").read_text())
    assert reduction["signature"]["kind"] == "invalid-cuda"
    assert reduction["signature"]["message"] == 'identifier "input_1_shared" is undefined'
    assert reduction["reduced"]["tokens"] < reduction["original"]["tokens"] // 2
    assert reduction["reduced"]["volume"] < reduction["original"]["volume"] // 1000
    assert len((tmp_path / "calls").read_text().splitlines()) > 10  # the candidates ran nvcc
