"""The wrong-result check's verdicts (mismatch_run.py, also the body of a wrong-result bundle's repro.py):
exit 1 means "the bug reproduces" and nothing but a real comparison may end with it."""

from __future__ import annotations

import numpy as np
import pytest

from reducer.compile import mismatch_run

pytestmark = pytest.mark.timeout(30)
SPEC = {"tolerance": 1e-3, "against": None}


def test_a_check_that_cannot_compare_is_a_failed_check_not_the_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mismatch_run, "run", lambda spec, folder: ([np.zeros(4)], [np.zeros(4, dtype=object)]))
    monkeypatch.setattr(mismatch_run, "compare", lambda *args: 1 / 0)
    assert mismatch_run.check(SPEC, ".") == 2


def test_outputs_of_another_count_are_a_wrong_result(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mismatch_run, "run", lambda spec, folder: ([np.zeros(4)], [np.zeros(4), np.ones(2)]))
    assert mismatch_run.check(SPEC, ".") == 1
    monkeypatch.setattr(mismatch_run, "run", lambda spec, folder: ([np.ones(4)], [np.ones(4)]))
    assert mismatch_run.check(SPEC, ".") == 0
