"""The TeLang reference computed in numpy from the compute definition (reducer/in_mindspore/telang_numpy.py),
against what each definition means, built with AKG's tvm: a float16 sum exact in float64 (and as declared, the
rounding of each op), a padded read clipped where its branch is not taken, TVM's integer division toward zero
beside floordiv, a masked max, and what it refuses (an ir_builder kernel) named."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_akg

from reducer.in_mindspore import script

pytestmark = [pytest.mark.akg, needs_akg, pytest.mark.timeout(120)]
sys.path.append(str(Path(script("telang_numpy")).parent))  # as the check loads them: beside mismatch_run.py
telang_numpy = importlib.import_module("telang_numpy")
telang_plain = importlib.import_module("telang_plain")
wire = importlib.import_module("wire")


@pytest.fixture(scope="module")
def tvm():
    wire.import_akg("cpu")
    from akg import tvm

    return tvm


def _run(tvm, source: str, function: str, values: list[np.ndarray], wide: bool = True) -> list[np.ndarray]:
    shapes = [(v.shape, str(v.dtype)) for v in values]
    placeholders, results = telang_plain.called(tvm, source, function, "tvm_compute", shapes, {})
    return telang_numpy.evaluate(tvm, placeholders, results, values, wide)


SUM = """def row_sum(x):
    k = tvm.reduce_axis((0, x.shape[1]), name="k")
    return tvm.compute((x.shape[0],), lambda i: tvm.sum(x[i, k], axis=k), name="s")
"""


def test_a_float16_sum_is_exact_wide_and_rounded_each_step_as_declared(tvm) -> None:
    x = np.full((2, 4096), 1.0, np.float16)
    (wide,) = _run(tvm, SUM, "row_sum", [x])
    (declared,) = _run(tvm, SUM, "row_sum", [x], wide=False)
    assert wide.dtype == np.float16 and list(wide) == [4096.0, 4096.0]
    assert declared[0] < 4096.0  # float16 additions stall at 2048


PADDED = """def shift(x):
    return tvm.compute(x.shape, lambda i: tvm.if_then_else(i > 0, x[i - 1], tvm.const(0, x.dtype)), name="y")
"""
INTEGERS = """def divide(a, b):
    return tvm.compute(a.shape, lambda i: tvm.truncdiv(a[i], b[i]) * 100 + tvm.floordiv(a[i], b[i]), name="q")
"""
MASKED_MAX = """def masked_max(x):
    k = tvm.reduce_axis((0, x.shape[1]), name="k")
    return tvm.compute((x.shape[0],), lambda i: tvm.max(x[i, k], axis=k, where=k > 0), name="m")
"""


def test_reads_divisions_and_masked_reductions_mean_what_tvm_means(tvm) -> None:
    x = np.arange(1, 6, dtype=np.float32)
    assert list(_run(tvm, PADDED, "shift", [x])[0]) == [0, 1, 2, 3, 4]
    a, b = np.array([-7, 7, -6], np.int32), np.array([2, -2, 3], np.int32)
    assert list(_run(tvm, INTEGERS, "divide", [a, b])[0]) == [-300 - 4, -300 - 4, -200 - 2]
    m = np.array([[9.0, 1.0, 2.0], [5.0, -1.0, -3.0]], np.float32)
    assert list(_run(tvm, MASKED_MAX, "masked_max", [m])[0]) == [2.0, -1.0]


IR_BUILDER = """def copy(inputs, attrs):
    def build(ins, outs):
        ib = tvm.ir_builder.create()
        a, b = ib.buffer_ptr(ins[0]), ib.buffer_ptr(outs[0])
        with ib.for_range(0, 4, name="i") as i:
            b[i] = a[i]
        return ib.get()
    return tvm.extern(inputs[0].shape, inputs, build, dtype=inputs[0].dtype, name="y")
"""


def test_a_kernel_of_statements_is_refused_by_name(tvm) -> None:
    x = np.arange(4, dtype=np.float32)
    placeholders, results = telang_plain.called(tvm, IR_BUILDER, "copy", "ir_builder", [(x.shape, "float32")], {})
    with pytest.raises(telang_numpy.Unsupported, match="ir_builder or extern"):
        telang_numpy.evaluate(tvm, placeholders, results, [x], True)


QUOTIENT = """def floored(a, b):
    return tvm.compute(a.shape, lambda i: tvm.floor(a[i] / b[i]), name="q")
"""
AS_BOOL = """def nonzero(a):
    return tvm.compute(a.shape, lambda i: a[i].astype("bool").astype("float32"), name="n")
"""
TYPED_CONSTANT = """def scaled_floor(x):
    return tvm.compute(x.shape, lambda i: tvm.floor(x[i] * tvm.const(7.7, "float16")), name="f")
"""
CUSTOM_REDUCER = """def weighted(x):
    k = tvm.reduce_axis((0, x.shape[1]), name="k")
    r = tvm.comm_reducer(lambda a, b: a + b * tvm.const(2, x.dtype), lambda t: tvm.const(0, t), name="r")
    return tvm.compute((x.shape[0],), lambda i: r(x[i, k], axis=k), name="w")
"""
GATHER = """def gather(x, idx):
    return tvm.compute(idx.shape, lambda i: x[idx[i]], name="g")
"""


def test_the_wide_run_widens_inputs_and_keeps_what_the_kernel_declares(tvm) -> None:
    """A float16 quotient of two inputs is exact in the wide run (rounding it first puts -9.0032 at -9); a
    cast to bool is `!= 0`; a float16 constant is the float16 value (7.7 is 7.69921875)."""
    a, b = np.array([-0.51709], np.float16), np.array([0.057434], np.float16)
    assert _run(tvm, QUOTIENT, "floored", [a, b])[0][0] == np.floor(a[0].astype(np.float64) / b[0])
    assert list(_run(tvm, AS_BOOL, "nonzero", [np.array([0.5, 0, -0.3, 2], np.float32)])[0]) == [1, 0, 1, 1]
    x = np.array([0.1299], np.float16)
    exact = float(x[0]) * float(np.float16(7.7))
    assert _run(tvm, TYPED_CONSTANT, "scaled_floor", [x])[0][0] == np.floor(exact) == 0


def test_what_it_cannot_mean_as_tvm_means_it_is_refused_not_guessed(tvm) -> None:
    """A reducer that is not one plain op of its two arguments, and a read at an index the data decides that
    falls outside the tensor (the probe bounds only reads of axes), are Unsupported: plain TVM decides."""
    with pytest.raises(telang_numpy.Unsupported, match="reduction combining"):
        _run(tvm, CUSTOM_REDUCER, "weighted", [np.ones((2, 3), np.float32)])
    x, inside = np.arange(10, 50, 10, dtype=np.float32), np.array([0, 2, 3], np.int32)
    assert list(_run(tvm, GATHER, "gather", [x, inside])[0]) == [10, 30, 40]
    with pytest.raises(telang_numpy.Unsupported, match="index the data decides"):
        _run(tvm, GATHER, "gather", [x, np.array([-3, 0, 9], np.int32)])
