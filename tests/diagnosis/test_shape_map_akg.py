"""The crashing-shape map on a real periodic AKG failure (corpus/nearest_distance_odd_points: the SSA check
of the host/device split fails for odd extents that are not 1 mod 8): the rule is found on the minimal
case's loop constant, re-checked here at three values, and turned into a padded shape under which the
ORIGINAL compiles and computes right."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, needs_akg

from reducer.core.case import TensorSpec
from reducer.diagnosis.boundary import valid
from reducer.diagnosis.knobs import knobs
from reducer.inputs.crash_yaml import load_case
from reducer.search.oracle import PASSES, SAME_FAILURE, Oracle
from reducer.session import Settings, compiler_for

pytestmark = [pytest.mark.akg, needs_akg]
CASE = CORPUS / "nearest_distance_odd_points"


@pytest.mark.timeout(900)
def test_periodic_rule_and_padded_shape_of_a_real_failure(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "reducer", str(CASE / "crash.yaml"), "-o", str(tmp_path), "-j", "2"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    bundle = tmp_path / CASE.name
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert reduction["triage"]["verdict"] == "compiler-bug"
    diagnosis = reduction["diagnosis"]
    [periodic] = [m for m in diagnosis["shape_boundary"] if m["rule"]["kind"] == "periodic"]
    assert periodic["rule"]["k"] == 8 and periodic["rule"]["failing_residues"] == [3, 5, 7]
    assert "fails when the value mod 8 is 3, 5, 7" in periodic["rule"]["text"]
    padding = [w for w in diagnosis["workarounds"] if w["name"] == "pad query.shape[1] from 27 to 28"]
    assert padding and [t["shape"] for t in padding[0]["inputs"]] == [[2, 28, 3], [2, 64, 3]]
    assert padding[0]["results"] == "right"  # the padded original is checked for what it computes
    issue = (bundle / "ISSUE.md").read_text()
    assert "fails when the value mod 8 is 3, 5, 7" in issue and "**pad query.shape[1] from 27 to 28**" in issue

    minimal = load_case(bundle / "crash.yaml")
    [knob] = [k for k in knobs(minimal, valid) if k.label(minimal) == periodic["dims"]]
    original = load_case(CASE / "crash.yaml")
    with compiler_for(Settings(jobs=2)) as (compiler, _), Oracle(minimal.expect, 2, compiler) as oracle:
        assert [oracle.outcome(knob.apply(minimal, v)) for v in (19, 20, 41)] == [SAME_FAILURE, PASSES, PASSES]
        padded = original.with_(inputs=tuple(TensorSpec(tuple(t["shape"]), t["dtype"])
                                             for t in padding[0]["inputs"]))  # fmt: skip
        assert oracle.outcome(padded) == PASSES and oracle.outcome(original) == SAME_FAILURE
