"""A wrong-result check that fails itself (its reference raises) is never an AKG bug wherever a verdict is
made: capture lists the kernel as not checked, naming the reference; the night's recheck calls it an error,
neither fixed nor a new bug; a workaround under which the check fails is no way out, and one under which the
original's results cannot be checked is offered as "not checked", not as computing right. (`reduce check`,
the original of `reduce run`, the cache and the shapes grid: test_check_record.py.)"""

from __future__ import annotations

import functools
import json
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import CORPUS, write_case
from test_check_record import REFERENCE_RAISED, outcome

from reducer import session
from reducer.capture import pipeline
from reducer.capture.found import FoundKernel
from reducer.compile.identity import SIGNATURE_FORMAT
from reducer.compile.sandbox import Outcome
from reducer.core.case import Case, Expectation, Mismatch, TensorSpec
from reducer.diagnosis.workarounds import find_workarounds
from reducer.nightly import job
from reducer.nightly.job import ERROR, NEW, RECHECK, run_case
from reducer.search.oracle import Oracle

pytestmark = pytest.mark.timeout(60)
GRAPH = CORPUS / "castup_transpose_fp16_mismatch" / "Fused_Transpose_split.info"
WRONG = {"kind": "mismatch", "message": "wrong result: wrong values", "location": "Transpose:float16"}


def _reference_raises(*args: object, **kw: object) -> Outcome:
    return outcome(REFERENCE_RAISED, check=True)


def test_capture_lists_a_kernel_whose_check_failed_as_not_checked_naming_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked_by_fake = functools.partial(session.original_signature, compiler=_reference_raises)
    monkeypatch.setattr(pipeline, "original_signature", checked_by_fake)
    info = GRAPH.read_text()
    kernel = FoundKernel("Fused_Transpose_split", json.loads(info), info, {}, "akg_kernel_meta/x.info", False)
    facts = pipeline.RunFacts("`python net.py` (exit status 1)", {}, "AssertionError")
    listed, entry = pipeline._check_result(kernel, {}, tmp_path, facts)
    assert listed == pipeline.NOT_CHECKED
    assert "the wrong-result check failed, not AKG: the Python reference raised" in entry["why"]


def test_a_nights_recheck_whose_check_failed_is_an_error_not_fixed_nor_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(job, "compile_case", _reference_raises)
    crash = write_case(tmp_path / "case", expect={"kind": "mismatch"})
    stored = {**WRONG, "frames": [], "component": "", "raw": "", "target": "cpu", "format": SIGNATURE_FORMAT}
    spec = {"path": str(crash), "action": RECHECK, "previous": stored, "previous_status": NEW, "out": str(tmp_path)}
    result = run_case(spec)
    assert result["status"] == ERROR and "the Python reference raised" in str(result["error"]), result
    assert result["signature"] == stored  # the bug stays what it was


SOURCE = "def f(a):\n    b = output_tensor(a.shape, a.dtype)\n    for i in range(4):\n        b[i] = a[i]\n    return b"
CRASHES = Case("k", SOURCE, "f", (TensorSpec((4,), "float32"),), attrs={"bad": True})
AKG_ERROR = Expectation("error", "Check failed: boom", "t.cc:1", exact=True)


def _crashes_until_bad_is_left_out_then_the_reference_raises(case: Case, outputs: object, **_: object) -> Outcome:
    if case.mismatch is not None:
        return _reference_raises()
    if case.attrs.get("bad"):
        return Outcome(1, None, False, False, 0.0, "[ERROR] AKG:x [t.cc:1] [t] Check failed: boom")
    return Outcome(0, None, False, False, 0.0, "")


def test_a_way_out_whose_results_check_failed_is_offered_as_not_checked_never_as_right() -> None:
    with Oracle(AKG_ERROR, compiler=_crashes_until_bad_is_left_out_then_the_reference_raises) as oracle:
        found, _ = find_workarounds(CRASHES, CRASHES, oracle, budget=30)
    [way_out] = [w for w in found if w.name == "without `bad`"]
    assert way_out.results.startswith("not checked:") and "the Python reference raised" in way_out.results


def test_a_way_out_of_a_wrong_result_under_which_the_check_fails_is_no_way_out() -> None:
    wrong = replace(CRASHES, mismatch=Mismatch())

    def compiler(case: Case, outputs: object, **_: object) -> Outcome:
        if case.attrs.get("bad"):
            return outcome("AKG-REDUCE-CHECK mismatch: output 0 max error 1 above tolerance 0.001\n", 1, check=True)
        return _reference_raises()

    expect = Expectation("mismatch", "wrong result: wrong values", "", exact=True)
    with Oracle(expect, compiler=compiler) as oracle:
        found, tries = find_workarounds(wrong, wrong, oracle, budget=30)
    assert found == []
    [tried] = [t for t in tries if t["name"] == "without `bad`"]
    assert tried["minimal"].startswith("no verdict: the Python reference raised"), tried


def test_a_nights_recheck_whose_crash_no_tool_could_place_decides_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker without gdb (or a crash gdb could not read) dies with no frame: any crash would pass for it,
    so it is neither the stored bug, nor another one, nor a changed one: an error naming why."""
    monkeypatch.setattr(job, "compile_case", lambda *args, **kw: Outcome(-11, 11, False, False, 1.0, ""))
    crash = write_case(tmp_path / "case")
    segv = {"kind": "signal", "message": "SIGSEGV", "location": "", "frames": ["akg::ir::Pass::Run()"]}
    stored = {**segv, "component": "", "raw": "", "target": "cpu", "format": SIGNATURE_FORMAT}
    spec = {"path": str(crash), "action": RECHECK, "previous": stored, "previous_status": NEW, "out": str(tmp_path)}
    result = run_case(spec)
    assert result["status"] == ERROR and "where it died cannot be told" in str(result["error"]), result
    assert result["signature"] == stored
