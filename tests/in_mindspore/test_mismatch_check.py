"""The wrong-result check's verdicts (mismatch_run.py, also the body of a wrong-result bundle's repro.py):
exit 1 means "the bug reproduces" and nothing but a real comparison may end with it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from reducer.in_mindspore import mismatch_run, script

sys.path.append(str(Path(script("wire")).parent))  # the check imports wire.py beside it, as a repro.py's copy
pytestmark = pytest.mark.timeout(30)
SPEC = {"tolerance": 1e-3, "against": None, "kernel": "graph", "outputs": [{"shape": [4], "dtype": "float32"}]}


def test_a_check_that_cannot_compare_is_a_failed_check_not_the_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        mismatch_run,
        "run",
        lambda spec, folder, progress: ([np.zeros(4)], mismatch_run.Reference([np.zeros(4, dtype=object)]), []),
    )
    monkeypatch.setattr(mismatch_run, "compare", lambda *args: 1 / 0)
    assert mismatch_run.check(SPEC, ".") == 2


def _record(out: str) -> dict:
    """The check's last record line."""
    line = [x for x in out.splitlines() if x.startswith("AKG-REDUCE-RECORD ")][-1]
    return json.loads(line.split(" ", 1)[1])


# Where the exceptions are raised: MindSpore's package, AKG's Python code included (whose code raised is told
# by the innermost frame of the check's own files or MindSpore's).
RAISE_IN_MINDSPORE = compile("raise exc", "/venv/site-packages/mindspore/_akg/akg/build_module.py", "exec")


def _raising_in(stage: str, exc: Exception):
    def run(spec: dict, folder: str, progress: mismatch_run.Progress) -> None:
        progress.begin(stage)
        exec(RAISE_IN_MINDSPORE, {"exc": exc})

    return run


@pytest.mark.parametrize(
    ("stage", "exc", "code", "who"),
    [
        ("reference", IndexError("index 4 is out of bounds"), 2, "reference"),
        ("setup", ImportError("no AKG build"), 2, "environment"),
        ("akg", RuntimeError("Compile error"), 4, "akg"),
    ],
)
def test_the_record_names_whose_code_raised_and_only_akgs_is_akgs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], stage: str, exc: Exception, code: int, who: str
) -> None:
    monkeypatch.setattr(mismatch_run, "run", _raising_in(stage, exc))
    assert mismatch_run.check(SPEC, ".") == code
    record = _record(capsys.readouterr().out)
    assert (record["stage"], record["raised_by"], record["done"]) == (stage, who, False)
    assert record["trace"] == f"{type(exc).__name__}: {exc}" and record["against"] == "Python"


def test_outputs_of_another_count_are_a_wrong_result(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        mismatch_run,
        "run",
        lambda spec, folder, progress: ([np.zeros(4)], mismatch_run.Reference([np.zeros(4), np.ones(2)]), []),
    )
    assert mismatch_run.check(SPEC, ".") == 1
    monkeypatch.setattr(
        mismatch_run, "run", lambda spec, folder, progress: ([np.ones(4)], mismatch_run.Reference([np.ones(4)]), [])
    )
    assert mismatch_run.check(SPEC, ".") == 0


def test_a_write_past_an_output_is_a_wrong_result_even_when_the_values_are_right(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    problem = "output 0: 3 elements written past its end"
    monkeypatch.setattr(
        mismatch_run,
        "run",
        lambda spec, folder, progress: ([np.ones(4)], mismatch_run.Reference([np.ones(4)]), [problem]),
    )
    assert mismatch_run.check(SPEC, ".") == 1
    assert f"mismatch: {problem}" in capsys.readouterr().out


def test_the_detail_line_names_the_wrong_elements_and_those_never_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    got = np.array([[1.0, np.nan], [3.0, 7.0]], np.float32)
    want = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    monkeypatch.setattr(mismatch_run, "run", lambda spec, folder, progress: ([got], mismatch_run.Reference([want]), []))
    spec = {**SPEC, "outputs": [{"shape": [2, 2], "dtype": "float32"}]}
    assert mismatch_run.check(spec, ".") == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith(mismatch_run.DETAIL))
    detail = json.loads(line[len(mismatch_run.DETAIL) :])
    assert (detail["wrong"], detail["unwritten"], detail["size"]) == (2, 1, 4)
    assert [e["index"] for e in detail["elements"]] == [[0, 1], [1, 1]]
    assert detail["elements"][1] == {"index": [1, 1], "expected": 4.0, "actual": 7.0}


def test_tolerance_follows_each_outputs_dtype_unless_the_case_sets_one() -> None:
    outputs = [{"shape": [1], "dtype": d} for d in ("float16", "float32", "int32", "bool")]
    assert mismatch_run.tolerances({"outputs": outputs, "tolerance": None}) == [5e-3, 1e-3, 0.0, 0.0]
    assert mismatch_run.tolerances({"outputs": outputs, "tolerance": 0.1}) == [0.1] * 4


def test_a_float16_result_rounded_once_passes_and_one_off_by_a_few_ulps_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    want = np.linspace(-1, 1, 64).astype(np.float16)
    ulp = np.spacing(np.abs(want).astype(np.float16)).astype(np.float16)
    spec = {**SPEC, "tolerance": None, "outputs": [{"shape": [64], "dtype": "float16"}]}
    for got, verdict in ((want + ulp, 0), (want + 16 * ulp + np.float16(0.01), 1)):
        monkeypatch.setattr(
            mismatch_run, "run", lambda spec, folder, progress, got=got: ([got], mismatch_run.Reference([want]), [])
        )
        assert mismatch_run.check(spec, ".") == verdict


def test_where_the_reference_is_undefined_nothing_is_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference is NaN where an op's input is outside its domain (the rsqrt of a random negative
    variance); AKG's maximum then drops the NaN where numpy's keeps it. Neither is wrong. Infinities that
    agree are right, opposite ones wrong."""
    want = np.array([np.nan, 1.0, np.inf, np.inf], np.float32)
    spec = {**SPEC, "outputs": [{"shape": [4], "dtype": "float32"}]}
    for got, verdict in (([-1.5, 1.0, np.inf, np.inf], 0), ([-1.5, 1.0, np.inf, -np.inf], 1)):
        got = np.array(got, np.float32)
        monkeypatch.setattr(
            mismatch_run, "run", lambda spec, folder, progress, got=got: ([got], mismatch_run.Reference([want]), [])
        )
        assert mismatch_run.check(spec, ".") == verdict


def test_a_reference_computed_wider_allows_what_the_kernels_own_precision_rounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A TeLang kernel's reference is computed wider, with the distance of the run at the kernel's own dtype as
    slack: a float16 sum of 256 values in order is off by ~0.04, above float16's tolerance of its ~10, and is
    right; a result off by as much again beyond that is wrong."""
    exact = np.linspace(5, 15, 16)
    in_order = exact + 0.04
    spec = {**SPEC, "tolerance": None, "outputs": [{"shape": [16], "dtype": "float16"}]}
    wide = mismatch_run.Reference([exact], slack=[2 * np.abs(in_order - exact)])
    for got, reference, verdict in ((in_order, wide, 0), (in_order, mismatch_run.Reference([exact]), 1)):
        monkeypatch.setattr(mismatch_run, "run", lambda spec, folder, progress, g=got, r=reference: ([g], r, []))
        assert mismatch_run.check(spec, ".") == verdict
    monkeypatch.setattr(mismatch_run, "run", lambda spec, folder, progress: ([exact + 0.2], wide, []))
    assert mismatch_run.check(spec, ".") == 1
