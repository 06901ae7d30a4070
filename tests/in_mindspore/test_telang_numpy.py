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
