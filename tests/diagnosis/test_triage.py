"""Triage decided from evidence, without AKG: a number in a check message is no proof that an attr was turned
down, a missing data file is not a missing program, and nothing is called a usage error untried."""

from __future__ import annotations

import pytest
from conftest import ADD_KERNEL

from reducer.compile.sandbox import Outcome
from reducer.compile.signature import signature_of
from reducer.core.case import Case, TensorSpec
from reducer.diagnosis.stage import failing_stage
from reducer.diagnosis.triage import COMPILER_BUG, USAGE_ERROR, Triage, triage
from reducer.search.oracle import PASSES, SAME_FAILURE

pytestmark = pytest.mark.timeout(30)

INPUTS = (TensorSpec((16,), "float32"), TensorSpec((16,), "float32"))


class NeedsAttr:
    """An oracle whose case fails the same way only with the attr `name`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def outcome(self, case: Case) -> str:
        return SAME_FAILURE if self.name in case.attrs else PASSES


def decide(attrs: dict, output: str, oracle: NeedsAttr | None) -> Triage:
    return triaged(attrs, Outcome(1, None, False, False, 1.0, output), oracle)


def triaged(attrs: dict, outcome: Outcome, oracle: NeedsAttr | CompilesNothing | None) -> Triage:
    case = Case("add", ADD_KERNEL, "add", INPUTS, attrs=attrs)
    signature = signature_of(outcome, case.time_limit)
    return triage(case, case, signature, failing_stage(outcome.output, signature, None), outcome.output, oracle)


AKG_CHECK = "[ERROR] AKG:2026-12-05-10:00:00.000.000 [tiling.cc:12] [tiling] Check failed: {}\n"


def test_a_number_in_the_message_that_equals_an_attr_is_no_usage_error() -> None:
    """A tile size of 16 that triggers a tiling bug whose check prints the extent 16: a compiler bug."""
    found = decide({"tile_size": 16}, AKG_CHECK.format("extent 16 should be divisible by 3"), NeedsAttr("tile_size"))
    assert found.verdict == COMPILER_BUG, found


def test_an_attr_named_by_its_word_value_is_still_suspected() -> None:
    output = AKG_CHECK.format("invalid value enable_xyz of pragma")
    assert decide({"mode": "enable_xyz"}, output, NeedsAttr("mode")).verdict == USAGE_ERROR


def test_without_compiles_a_named_attr_is_only_a_suspect() -> None:
    output = AKG_CHECK.format("Bool attribute pragma_rmselfdep must be 0 or 1, but found 7")
    found = decide({"pragma_rmselfdep": 7}, output, None)
    assert found.verdict == COMPILER_BUG, found


PY_ERROR = """Traceback (most recent call last):
  File "<site-packages>/mindspore/_akg/akg/ms/message.py", line 40, in compilewithjson
    {line}
FileNotFoundError: [Errno 2] No such file or directory: '{name}'
"""


def test_a_missing_data_file_is_not_a_missing_program() -> None:
    found = decide({}, PY_ERROR.format(line="open(path)", name="tiling.json"), None)
    assert found.verdict == COMPILER_BUG and "apt install" not in found.advice, found
    program = (
        PY_ERROR.format(line="self._execute_child(args)", name="g++")
        .replace("message.py", "subprocess.py")
        .replace("compilewithjson", "_execute_child")
    )
    assert "apt install g++" in decide({}, program, None).advice


class CompilesNothing:
    """An oracle that fails the test if the triage asks it to compile anything."""

    def outcome(self, case: Case) -> str:
        raise AssertionError(f"compiled {case.attrs}")


FRAME = "akg::ir::poly::TileOuterBand::ReverseTraverseChild"


@pytest.mark.parametrize(
    ("outcome", "reason"),
    [
        (
            Outcome(-6, 6, False, False, 1.0, "what():  isl_val.c:16: out of bounds\n", stack=(FRAME,)),
            "died of SIGABRT",
        ),
        (Outcome(None, None, True, False, 15.0, "", stack=(FRAME,)), "a hang"),
        (Outcome(1, None, False, False, 1.0, "AKG-REDUCE-CHECK mismatch max abs error 3\n"), "wrong results"),
        (Outcome(None, None, False, True, 1.0, ""), "memory use"),
    ],
    ids=["crash", "hang", "wrong result", "memory"],
)
def test_a_crash_hang_wrong_result_or_memory_blowup_is_a_compiler_bug_by_its_kind_alone(
    outcome: Outcome, reason: str
) -> None:
    """What follows from the kind of failure is decided without a compile, even with attrs the case gives
    (the corpus originals' verdicts on the real AKG: tests/diagnosis/test_triage_akg.py)."""
    found = triaged({"dim": "0 0 4 4"}, outcome, CompilesNothing())
    assert found.verdict == COMPILER_BUG and reason in found.reason and not found.unsure, found
