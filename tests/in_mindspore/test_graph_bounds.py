"""The error model of the wrong-result check of fused graphs (reducer/in_mindspore/graph_bounds.py): how far a
right kernel's result may lie from the reference, element by element. A float32 result is held to float32's
precision and to a few times MindSpore's own accuracy; a comparison or cast of operands equal within their
errors may go either way and is not compared."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from graph_builder import Builder

from reducer.in_mindspore import mismatch_run, script

pytestmark = pytest.mark.timeout(30)
# As the check loads it: beside mismatch_run.py, importing graph_numpy.py beside it.
sys.path.append(str(Path(script("graph_bounds")).parent))
graph_bounds = importlib.import_module("graph_bounds")
RNG = np.random.default_rng(0)


def _verdict(graph: dict, inputs: list[np.ndarray], got: list[np.ndarray]) -> tuple[bool, dict]:
    want, bounds = graph_bounds.evaluate(graph, inputs)
    outputs = [{"shape": list(w.shape), "dtype": str(w.dtype)} for w in want]
    allowed = mismatch_run.allowances({"outputs": outputs}, mismatch_run.Reference(want, bounds))
    return mismatch_run.compare(got, want, allowed)


def _exp_graph(dtype: str = "float32") -> dict:
    b = Builder()
    x = b.input([1024], dtype)
    return b.graph([b.op("Exp", [x], [1024], dtype)])


def test_float32_is_held_to_float32_not_to_float16() -> None:
    """Exp computed in float16 and stored as float32 is wrong; MindSpore's own error (21 ulps) is right."""
    x = RNG.uniform(-1, 1, 1024).astype(np.float32)
    exact = np.exp(x.astype(np.float64))
    in_half = [np.exp(x.astype(np.float16)).astype(np.float32)]
    assert not _verdict(_exp_graph(), [x], in_half)[0]
    like_mindspore = [(exact * (1 + 21 * 2.0**-24)).astype(np.float32)]
    assert _verdict(_exp_graph(), [x], like_mindspore)[0]


def test_many_times_less_accurate_than_mindspore_is_wrong_as_precision() -> None:
    x = RNG.uniform(-1, 1, 1024).astype(np.float32)
    fast = [(np.exp(x.astype(np.float64)) * (1 + 6e-5)).astype(np.float32)]  # AKG 2.10's CPU exp: about 5e-5
    within, worst = _verdict(_exp_graph(), [x], fast)
    assert not within and mismatch_run.wrong_kind(worst, []) == "precision"


def test_a_comparison_of_operands_equal_within_their_errors_is_not_compared() -> None:
    """(a * b) > c in float16: where a * b and c agree within float16's rounding, a right kernel may answer
    either way; where they differ by more, a flipped answer is wrong."""
    b = Builder()
    a, m, c = b.input([512], "float16"), b.input([512], "float16"), b.input([512], "float16")
    above = b.op("Greater", [b.op("Mul", [a, m], [512], "float16"), c], [512], "bool")
    graph = b.graph([above])
    av, mv = RNG.uniform(-1, 1, 512).astype(np.float16), RNG.uniform(-1, 1, 512).astype(np.float16)
    cv = (av.astype(np.float64) * mv).astype(np.float16)  # ties: the product rounded
    cv[256:] = RNG.uniform(-1, 1, 256).astype(np.float16)
    (want,), (bound,) = graph_bounds.evaluate(graph, [av, mv, cv])
    undecided = bound >= 1
    assert undecided[:256].all() and undecided[256:].mean() < 0.05
    flipped_ties = want.copy()
    flipped_ties[:256] = ~flipped_ties[:256]
    assert _verdict(graph, [av, mv, cv], [flipped_ties])[0]
    flipped_clear = want.copy()
    flipped_clear[~undecided] = ~flipped_clear[~undecided]
    assert not _verdict(graph, [av, mv, cv], [flipped_clear])[0]


def _sum_graph(terms: int) -> dict:
    b = Builder()
    x = b.input([8, terms], "float16")
    return b.graph([b.op("ReduceSum", [x, b.const([1])], [8], "float16", keep_dims=False)])


def _float16_sums(xv: np.ndarray) -> np.ndarray:
    """Added one term after the other in float16, as AKG's float16 kernels add."""
    total = np.zeros(xv.shape[0], np.float16)
    for column in xv.T:
        total = (total + column).astype(np.float16)
    return total


def test_a_float16_sum_may_be_added_in_float16_and_a_long_one_is_not_checked() -> None:
    """A sum computes in its dtype: 64 float16 terms added in float16 are right, half of them are wrong. Over
    4096 positive terms float16 additions may stall at 2048, so a right sum may lie anywhere within twice
    the exact one: the check says it compared nothing there, not that the kernel is right."""
    xv = RNG.uniform(-1, 1, (8, 64)).astype(np.float16)
    assert _verdict(_sum_graph(64), [xv], [_float16_sums(xv)])[0]
    assert not _verdict(_sum_graph(64), [xv], [_float16_sums(xv[:, :32])])[0]
    long = RNG.uniform(0, 1, (8, 4096)).astype(np.float16)
    within, worst = _verdict(_sum_graph(4096), [long], [_float16_sums(long)])
    assert within and worst["unchecked"] == ["0 (0 of 8)"]


def test_a_cast_to_int_may_round_a_value_at_an_integer_either_way() -> None:
    """int(x * 3) where x * 3 lands within float32 rounding of an integer: 2 and 3 are both right there."""
    b = Builder()
    x = b.input([4])
    cast = b.op("Cast", [b.op("Mul", [x, b.const(3.0, "float32")], [4])], [4], "int32")
    graph = b.graph([cast])
    xv = np.array([1 / 3, 0.5, 0.1, 2 / 3], np.float32)
    _, (bound,) = graph_bounds.evaluate(graph, [xv])
    assert list(bound >= 1) == [True, False, False, True]
    assert _verdict(graph, [xv], [np.array([0, 1, 0, 1], np.int32)])[0]
    assert not _verdict(graph, [xv], [np.array([1, 2, 0, 2], np.int32)])[0]


def _floor_div_graph(dtype: str) -> dict:
    b = Builder()
    heights, sizes = b.input([64], dtype), b.input([64], dtype)
    return b.graph([b.op("Cast", [b.op("FloorDiv", [heights, sizes], [64], dtype)], [64], "int32")])


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_a_floored_quotient_of_exact_operands_is_compared_exactly(dtype: str) -> None:
    """MindSpore floors the exact quotient (the op matrix: 0 ulps at quotients one step off an integer): a
    kernel that rounds the quotient to the dtype first puts such an element one bin too high, which is wrong
    however large the quotient; before, FloorDiv's own slack let any bin be one off."""
    sizes = RNG.uniform(0.1, 0.5, 64).astype(dtype)
    heights = np.nextafter((RNG.integers(1, 100, 64) * sizes.astype(np.float64)).astype(dtype), np.array(0, dtype))
    graph = _floor_div_graph(dtype)
    (right,), (bound,) = graph_bounds.evaluate(graph, [heights, sizes])
    assert not bound.any()
    rounded_first = np.floor((heights / sizes).astype(dtype)).astype(np.int32)
    assert (rounded_first != right).any()
    assert _verdict(graph, [heights, sizes], [right])[0]
    assert not _verdict(graph, [heights, sizes], [rounded_first])[0]


def test_a_floor_of_an_inexact_operand_may_still_go_either_way() -> None:
    """The exact rule is about the op, not its operands: floor(x * 3) where x * 3 lands within float32
    rounding of an integer keeps its slack (the error comes from the Mul upstream)."""
    b = Builder()
    x = b.input([2])
    graph = b.graph([b.op("Floor", [b.op("Mul", [x, b.const(3.0, "float32")], [2])], [2])])
    _, (bound,) = graph_bounds.evaluate(graph, [np.array([1 / 3, 0.1], np.float32)])
    assert bound[0] >= 1 and bound[1] == 0
