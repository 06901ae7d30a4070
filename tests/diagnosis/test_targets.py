"""Which targets fail, in the words ISSUE.md gives them, and the Ascend-only changes the diagnosis tries."""

from __future__ import annotations

import pytest

from reducer.core.case import Case, TensorSpec
from reducer.core.targets import AICORE, CPU, TARGETS
from reducer.diagnosis.targets import NOT_TRIED, TargetRun, summary
from reducer.diagnosis.workarounds import CATALOGUE, perturbations_for
from reducer.search.oracle import PASSES, SAME_FAILURE

OTHER = "other failure: error: Check failed: x at y.cc:1"


@pytest.mark.parametrize(
    ("outcomes", "said"),
    [
        ({"aicore": SAME_FAILURE, "cpu": PASSES, "cuda": OTHER}, "fails on aicore only"),
        ({"cpu": SAME_FAILURE, "cuda": SAME_FAILURE}, "fails the same way on every target tried"),
        ({"cpu": SAME_FAILURE, "cuda": SAME_FAILURE, "aicore": PASSES},
         "fails the same way on cpu and cuda; passes on aicore"),
        ({"cpu": SAME_FAILURE, "cuda": NOT_TRIED}, ""),  # one target tried says nothing of the others
        ({"cpu": SAME_FAILURE}, ""),
    ],
)  # fmt: skip
def test_the_summary_names_where_the_minimal_case_fails(outcomes: dict[str, str], said: str) -> None:
    runs = [TargetRun(target, outcome, PASSES) for target, outcome in outcomes.items()]
    assert summary(runs) == said


def test_ascend_tries_its_own_passes_and_float16_and_cpu_keeps_its_own() -> None:
    ascend = [p.name for p in perturbations_for(AICORE)]
    cpu = [p.name for p in perturbations_for(CPU)]
    assert {"rescheduling off", "manual tiling, small tiles", "float16 instead of float32"} <= set(ascend)
    assert "vectorisation off" in cpu and "vectorisation off" not in ascend
    assert ascend[:4] == cpu[:4]  # the common ones first, in the same order
    case = Case(name="k", source="def k(a):\n    return a\n", function="k", inputs=(TensorSpec((40,), "float32"),))
    small = next(p for p in perturbations_for(AICORE) if p.name == "manual tiling, small tiles")
    halves = next(p for p in perturbations_for(AICORE) if p.name == "float16 instead of float32")
    assert halves.apply(case).inputs == (TensorSpec((40,), "float16"),)
    assert small.apply(case) is None  # no loop nest to tile


def test_every_workaround_a_target_lists_is_one_the_diagnosis_knows() -> None:
    """A new target's table entry names its workarounds; a name nothing implements is caught here."""
    for target in TARGETS.values():
        assert target.workarounds and set(target.workarounds) <= set(CATALOGUE), target.name
