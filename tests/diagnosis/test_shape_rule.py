"""The rule a shape map is summarised by: thresholds, periods (any set of failing residues), ranges, and
other failures kept apart; the padded value it proposes is one the map saw pass or the period implies."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reducer.diagnosis.shape_rule import rule_of
from reducer.search.oracle import PASSES, SAME_FAILURE

OTHER = "other failure: error: Not all Vars are passed in api_args at x.cc:1"


def test_fails_unless_a_multiple_of_eight_with_another_bug_below() -> None:
    tried = {v: PASSES for v in range(1, 15)} | {15: OTHER}
    tried |= {v: PASSES if v % 8 == 0 else SAME_FAILURE for v in [*range(16, 129), 255, 256, 257, 511, 512, 513]}
    rule = rule_of(tried)
    assert rule.kind == "periodic" and (rule.k, rule.start) == (8, 16)
    assert rule.text.startswith("fails unless a multiple of 8 from 16 on") and "another failure at 15" in rule.text
    assert [rule.padded(v) for v in (17, 33, 500)] == [24, 40, 504]
    assert rule.padded(64) is None  # passes already
    assert rule.to_dict()["other_failures"] == {"15": OTHER}


def test_thresholds_and_ranges() -> None:
    assert rule_of({v: SAME_FAILURE if v >= 3 else PASSES for v in range(1, 129)}).text.startswith(
        "fails for 3 and above"
    )
    low = rule_of({v: SAME_FAILURE if v <= 5 else PASSES for v in range(1, 129)})
    assert low.kind == "up_to" and low.padded(2) == 6
    spans = rule_of({v: SAME_FAILURE if 3 <= v <= 9 or 20 <= v <= 30 else PASSES for v in range(1, 129)})
    assert spans.kind == "ranges" and spans.text.startswith("fails for 3..9, 20..30") and spans.padded(21) == 31
    assert rule_of({v: SAME_FAILURE for v in range(1, 129)}).kind == "always"


@given(
    period=st.integers(2, 12),
    residues=st.sets(st.integers(0, 11), min_size=1),
    data=st.data(),
)
def test_any_period_is_found_and_predicts_every_value(period: int, residues: set[int], data: st.DataObject) -> None:
    failing = {r % period for r in residues}
    if len(failing) == period:
        failing.discard(data.draw(st.integers(0, period - 1)))
    if not failing:
        failing = {1}
    tried = {v: SAME_FAILURE if v % period in failing else PASSES for v in range(1, 129)}
    rule = rule_of(tried)
    for value, outcome in tried.items():
        assert rule.predicts_failure(value) is (outcome == SAME_FAILURE), (rule.text, value)
    failing_value = next(v for v in tried if tried[v] == SAME_FAILURE)
    padded = rule.padded(failing_value)
    assert padded is not None and padded > failing_value and padded % period not in failing
