"""The rules the references of the wrong-result check follow where MindSpore's meaning is at its edges, each
judged without AKG: the op matrix counts a NaN where the other side has a number as a difference and skips
only what the reference calls undefined; a remainder at a float64 quotient tie and a max over a slice holding
a NaN are undefined; a TeLang output whose float16 run alone overflowed is not compared there."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

from reducer.in_mindspore import graph_numpy, mismatch_run, script

pytestmark = pytest.mark.timeout(30)
sys.path.append(str(Path(script("op_matrix")).parent))  # as MindSpore's interpreter runs it: graph_numpy beside it
op_matrix = importlib.import_module("op_matrix")


def _float64(*values: float) -> np.ndarray:
    return np.array(values, np.float64)


def test_the_matrix_counts_a_nan_against_a_number_and_skips_only_the_undefined() -> None:
    free = np.zeros(3, bool)
    assert op_matrix.ulps(_float64(1.0, np.nan, 2.0), _float64(1.0, np.nan, 2.0), free) == 0.0
    assert op_matrix.ulps(_float64(1.0, np.nan, 2.0), _float64(1.0, 5.0, 2.0), free) == float("inf")
    assert op_matrix.ulps(_float64(1.0, 5.0, 2.0), _float64(1.0, np.nan, 2.0), free) == float("inf")
    assert op_matrix.ulps(_float64(1.0, 7.0, 2.0), _float64(1.0, np.nan, 2.0), np.array([False, True, False])) == 0


def _op(name: str, dtype: str, axis: list[int] | None = None) -> tuple[dict, list[dict]]:
    tensors = [{"tensor_name": "input_0", "data_type": dtype, "shape": [4]}]
    if axis is not None:
        tensors.append({"tensor_name": "axis", "data_type": "int64", "shape": [1], "value": axis})
    else:
        tensors.append({"tensor_name": "input_1", "data_type": dtype, "shape": [4]})
    return {"name": name, "attr": [{"name": "keep_dims", "value": False}]}, tensors


def test_a_remainder_at_a_float64_quotient_tie_is_undefined_and_a_float32_one_is_compared() -> None:
    """MindSpore's float64 FloorMod floors the quotient it rounded: for a = nextafter(n * b, 0) the remainder
    is b or about 0, either way; a float32 quotient is never within float64's rounding of an integer."""
    b = _float64(0.3, 0.3, 0.3, 0.25)
    a = np.array([np.nextafter(7 * 0.3, 0), 2.0, np.nan, 1.0])
    op, tensors = _op("FloorMod", "float64")
    assert list(graph_numpy.undefined(op, [a, b], tensors, (4,))) == [True, False, True, False]
    op32, tensors32 = _op("FloorMod", "float32")
    b32 = b.astype(np.float32)
    a32 = np.nextafter((7 * b32.astype(np.float64)).astype(np.float32), np.float32(0))
    assert not graph_numpy.undefined(op32, [a32.astype(np.float64), b32.astype(np.float64)], tensors32, (4,)).any()


def test_a_max_over_a_slice_with_a_nan_is_undefined() -> None:
    """MindSpore's ReduceMax skips a NaN (the maximum of the others), numpy's keeps it: neither is settled."""
    op, tensors = _op("ReduceMax", "float32", axis=[1])
    x = np.array([[1.0, np.nan], [2.0, 3.0]])
    assert list(graph_numpy.undefined(op, [x], tensors, (2,))) == [True, False]


def test_a_telang_element_only_the_float16_run_made_nan_or_inf_is_not_compared() -> None:
    """The float16 run overflowed (inf, or inf - inf = NaN) where the float32 run did not: any result is right
    there, a NaN from AKG's own float16 overflow included; elsewhere twice the runs' gap is the slack."""
    declared, widened = _float64(1.0, np.nan, np.inf, 2.0), _float64(1.001, 3.0, 4.0, 2.0)
    slack = mismatch_run.run_apart(np.abs(declared - widened))
    assert list(np.isinf(slack)) == [False, True, True, False] and slack[0] == pytest.approx(0.002)
    reference = mismatch_run.Reference([widened], slack=[slack])
    allowed = mismatch_run.allowances({"outputs": [{"dtype": "float16"}]}, reference)
    within, worst = mismatch_run.compare([_float64(1.0, np.nan, np.inf, 2.0)], [widened], allowed)
    assert within and worst["compared"] == 2
    assert not mismatch_run.compare([_float64(1.0, np.nan, np.inf, 2.5)], [widened], allowed)[0]
