"""Wrong-result cases without MindSpore: crash.yaml's `expect: {kind: mismatch}` and its fields, the
check's verdict line as a signature, and the guard against kernels whose result is undefined (they read
tensor elements before writing them, which AKG does not zero and Python does)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import write_case

from reducer.compile.identity import NO_FAILURE
from reducer.compile.sandbox import Outcome
from reducer.compile.signature import signature_of
from reducer.core.case import Case, Mismatch, TensorSpec
from reducer.inputs.crash_yaml import case_to_yaml, load_case
from reducer.kernels.hybrid import InvalidKernel, infer_outputs

SUM = """def f(x):
    y = output_tensor((1,), x.dtype)
    y[0] = 0.0
    for n in range(2):
        y[0] += x[n]
    return y
"""


def test_mismatch_fields_load_and_round_trip(tmp_path: Path) -> None:
    crash = write_case(
        tmp_path / "m", expect={"kind": "mismatch", "tolerance": 0.01, "against": {"attrs": {"dim": "0 0 1 1"}}}
    )
    case = load_case(crash)
    assert case.mismatch == Mismatch(0.01, '{"dim": "0 0 1 1"}') and case.mismatch.against_attrs == {"dim": "0 0 1 1"}
    assert case.expect is not None and case.expect.kind == "mismatch"
    written = yaml.safe_load(case_to_yaml(case, "kernel.py", case.expect))
    assert written["expect"] == {"kind": "mismatch", "message": "", "where": "", "tolerance": 0.01,
                                 "against": {"attrs": {"dim": "0 0 1 1"}}}  # fmt: skip
    plain = load_case(write_case(tmp_path / "p", expect={"kind": "mismatch"}))
    assert plain.mismatch == Mismatch() and plain.key() != case.key()  # tolerance and reference are content


def _outcome(output: str, returncode: int = 0) -> Outcome:
    return Outcome(returncode, None, False, False, 1.0, output)


def test_verdict_line_is_the_signature() -> None:
    wrong = "output 0: max abs error 0.15\nAKG-REDUCE-CHECK mismatch: output 0 max error 0.15 above tolerance 0.001\n"
    sig = signature_of(_outcome(wrong, 1), 60)
    assert sig.kind == "mismatch" and "0.15" in sig.raw and sig.message == "wrong result: wrong values"
    assert signature_of(_outcome("AKG-REDUCE-CHECK match: every output within tolerance\n"), 60) == NO_FAILURE
    unchecked = signature_of(_outcome("AKG-REDUCE-CHECK unchecked: output 1 (0 of 4) elements compared\n", 3), 60)
    assert unchecked.kind == "unchecked" and not unchecked.failed and not unchecked.kind.is_verdict
    crashed = signature_of(_outcome("Traceback (most recent call last):\nValueError: Compile error\n", 2), 60)
    assert crashed.kind == "error"  # a candidate that stops compiling is another bug, not the mismatch


@pytest.mark.parametrize(
    ("source", "undefined"),
    [
        (SUM, False),
        (SUM.replace("    y[0] = 0.0\n", ""), True),  # accumulates into what output_tensor held
        (SUM.replace("y[0] = 0.0", "t = allocate((1,), x.dtype)\n    y[0] = t[0]"), True),
    ],
)
def test_reading_before_writing_is_rejected_for_mismatch_cases(source: str, undefined: bool) -> None:
    case = Case("m", source, "f", (TensorSpec((2,), "float32"),), mismatch=Mismatch())
    if undefined:
        with pytest.raises(InvalidKernel, match="before writing it"):
            infer_outputs(case)
        # A crash case may, when allowed (--allow-ill-formed, or its original reads it too).
        infer_outputs(case.with_(mismatch=None, allow_ill_formed=True))
    else:
        assert infer_outputs(case) == (TensorSpec((1,), "float32"),)
