"""Workarounds verified against a stand-in compiler (no AKG): a change under which the original's compile stopped
before the stage that decides its bug (nvcc, for an invalid-cuda bug on a machine without it) is not a way out;
under an AKG error, which AKG's passes decide, reaching nvcc is."""

from __future__ import annotations

import pytest

from reducer.compile.sandbox import Outcome
from reducer.core.case import Case, Expectation, TensorSpec
from reducer.diagnosis.workarounds import find_workarounds
from reducer.search.oracle import Oracle
from reducer.toolchain.nvcc import STOPPED

pytestmark = pytest.mark.timeout(60)
SOURCE = "def f(a):\n    b = output_tensor(a.shape, a.dtype)\n    for i in range(4):\n        b[i] = a[i]\n    return b"
ORIGINAL = Case("k", SOURCE, "f", (TensorSpec((4,), "float16"),), attrs={"bad": True}, target="cuda")
INVALID_CUDA = Expectation("invalid-cuda", 'identifier "ccN" is undefined', "my_kernel.cu", exact=True)
AKG_ERROR = Expectation("error", "Check failed: boom", "t.cc:1", exact=True)


def _fails_until_bad_is_left_out(case: Case, outputs: object, **_: object) -> Outcome:
    """With the attr `bad` the bug; without it the compile stops where nvcc would start."""
    if case.attrs.get("bad"):
        return Outcome(1, None, False, False, 0.0, "[ERROR] AKG:x [t.cc:1] [t] Check failed: boom")
    return Outcome(1, None, False, False, 0.0, f"RuntimeError: Compilation error:\n{STOPPED}")


@pytest.mark.parametrize(("expect", "verified"), [(INVALID_CUDA, []), (AKG_ERROR, ["without `bad`"])])
def test_a_way_out_is_verified_only_by_a_compile_that_got_past_the_failing_stage(
    expect: Expectation, verified: list[str]
) -> None:
    with Oracle(expect, compiler=_fails_until_bad_is_left_out) as oracle:
        found, tries = find_workarounds(ORIGINAL, ORIGINAL, oracle, budget=30)
    assert [w.name for w in found] == verified
    if not verified:
        assert tries[0]["minimal"].startswith("incomplete: reaches nvcc"), tries[0]
