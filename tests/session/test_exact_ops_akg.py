"""An op MindSpore computes exactly is held to it on the real AKG: the float16 FloorDiv MindSpore 2.10 fused
from examples/height_bins_floordiv.py (corpus/floordiv_fp16_rounds_quotient), whose kernel rounds the quotient
before flooring it, computes wrong (it was "right" while FloorDiv had slack of its own) and reduces to the one
FloorDiv that does it, still wrong values, not merely imprecise ones."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, needs_akg

pytestmark = [pytest.mark.akg, needs_akg]
CASE = CORPUS / "floordiv_fp16_rounds_quotient" / "crash.yaml"


@pytest.mark.timeout(400)
def test_a_float16_floordiv_that_rounds_before_flooring_reduces_to_that_floordiv(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "reducer", str(CASE), "-o", str(tmp_path / "out"), "-j", "2", "--no-diagnosis"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=380)
    assert run.returncode == 0, run.stderr[-3000:]
    bundle = tmp_path / "out" / "floordiv_fp16_rounds_quotient"
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert reduction["signature"]["message"] == "wrong result: wrong values"
    graph = json.loads((bundle / "kernel.info").read_text())
    assert [op["name"] for op in graph["op_desc"]] == ["FloorDiv"]
    assert {t[0]["data_type"] for t in graph["input_desc"]} == {"float16"}
    # an exact op: no slack of its own, only float16's smallest normal number (a kernel may flush subnormals)
    allowed = re.search(r"max error 1 above tolerance (\S+) ", reduction["signature"]["raw"])
    assert allowed is not None and float(allowed[1]) < 1e-4, reduction["signature"]["raw"]
