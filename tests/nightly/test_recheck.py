"""A night's recheck whose compile stopped where nvcc would start (a worker without nvcc, or one told to stop
there; the fake compiler says the shim's STOPPED): a stored invalid-cuda bug, which only nvcc decides, is
"incomplete" that night, never FIXED; a stored AKG error, which AKG's passes decide, is fixed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_case

from reducer.compile.identity import SIGNATURE_FORMAT
from reducer.nightly.discover import CorpusCase
from reducer.nightly.job import ERROR, FIXED, INCOMPLETE, NEW, RECHECK, REDUCE, REPRODUCES, run_case
from reducer.nightly.run import Night, NightOptions
from reducer.nightly.state import CorpusState
from reducer.toolchain.nvcc import STOPPED

pytestmark = pytest.mark.timeout(120)
INVALID_CUDA = {"kind": "invalid-cuda", "message": 'identifier "ccN" is undefined', "location": "my_kernel.cu"}
AKG_ERROR = {"kind": "error", "message": "Check failed: boom", "location": "fake_tiling.cc:193"}


def _recheck(tmp_path: Path, previous: dict[str, str]) -> dict[str, object]:
    crash = write_case(tmp_path / "case")
    stored = {**previous, "frames": [], "component": "", "raw": "", "target": "cpu", "format": SIGNATURE_FORMAT}
    spec = {"path": str(crash), "action": RECHECK, "previous": stored, "previous_status": NEW, "out": str(tmp_path)}
    return run_case(spec)


@pytest.mark.parametrize(("previous", "status"), [(INVALID_CUDA, INCOMPLETE), (AKG_ERROR, FIXED)])
def test_a_recheck_that_stopped_before_nvcc_fixes_only_what_akgs_passes_decide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, previous: dict[str, str], status: str
) -> None:
    monkeypatch.setenv("FAKE_COMPILER_STOPS", STOPPED)
    result = _recheck(tmp_path, previous)
    assert result["status"] == status, result
    if status == INCOMPLETE:
        assert "incomplete" in str(result["error"]) and "nvcc" in str(result["error"])


@pytest.mark.slow
@pytest.mark.parametrize("undecided", [ERROR, INCOMPLETE])
def test_a_night_that_could_not_tell_is_not_what_the_next_night_compares_with(tmp_path: Path, undecided: str) -> None:
    """A bug found, then a night that could not tell (a lost job, a worker without nvcc), then the bug again:
    it reproduces; before, the third night compared with the undecided one and called the bug new (exit 4)."""
    case = CorpusCase("case", write_case(tmp_path / "cases" / "case"), content_hash="same", toolchain=(None, None))
    state = CorpusState(tmp_path / "state.sqlite")
    try:
        nights = [Night(tmp_path / "out", NightOptions(cache=None), state, lambda slug: None) for _ in range(3)]
        found = run_case({**nights[0]._spec(case, REDUCE, None), "out": str(tmp_path / "first")})
        assert found["status"] == NEW, found
        nights[0].record(case, "compiler", found, "reduced")
        nights[1].record(case, "compiler", {"status": undecided, "signature": found["signature"]}, "rechecked")
        spec = nights[2]._spec(case, REDUCE, state.case("case"))
    finally:
        state.close()
    assert spec["previous_status"] == NEW
    assert run_case({**spec, "out": str(tmp_path / "third")})["status"] == REPRODUCES
