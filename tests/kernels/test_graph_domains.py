"""The domains of a fused graph's inputs (reducer/kernels/graph_domains.py) and the check's inputs drawn in them
(mismatch_run.make_inputs): a graph whose ops are undefined on part of [-1, 1) gets inputs where every op is
defined, so its reference is a number everywhere and the check compares every element."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from graph_builder import Builder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reducer.in_mindspore import graph_numpy
from reducer.in_mindspore.mismatch_run import make_inputs
from reducer.kernels.graph_domains import NEEDS, POSITIVE, Domain, input_domains

pytestmark = pytest.mark.timeout(30)


def _drawn(graph: dict) -> list[np.ndarray]:
    specs = [{"shape": d[0]["shape"], "dtype": d[0]["data_type"]} for d in graph["input_desc"]]
    return make_inputs([{**s, **d.to_dict()} for s, d in zip(specs, input_domains(graph), strict=True)], 0)


def _unary(name: str, dtype: str = "float32") -> dict:
    b = Builder()
    x = b.input([256], dtype)
    return b.graph([b.op(name, [x], [256])])


@pytest.mark.parametrize("name", ["Log", "Sqrt", "Rsqrt", "Reciprocal", "Log1p", "Acosh", "Asin", "ACos"])
def test_an_op_undefined_on_part_of_the_default_range_gets_inputs_where_it_is_defined(name: str) -> None:
    graph = _unary(name)
    (x,) = _drawn(graph)
    (reference,) = graph_numpy.evaluate(graph, [x])
    assert np.isfinite(reference).all() and len(np.unique(x)) > 200


def test_needs_travel_back_through_constants_and_moves() -> None:
    """sqrt(x - 2) needs x >= 2; a cast of x * 255 to uint8 needs x in [0, 1]; log(exp(x)) needs nothing."""
    b = Builder()
    x, y, z = b.input([4, 8]), b.input([8, 4]), b.input([32])
    root = b.op("Sqrt", [b.op("Sub", [x, b.const(2.0, "float32")], [4, 8])], [4, 8])
    moved = b.op("Transpose", [y, b.const([1, 0])], [4, 8])
    byte = b.op("Cast", [b.op("Mul", [moved, b.const(255.0, "float32")], [4, 8])], [4, 8], "uint8")
    log = b.op("Log", [b.op("Exp", [z], [32])], [32])
    domains = input_domains(b.graph([root, byte, log]))
    assert domains == [Domain(2.0), Domain(0.0, 1.0), Domain()]
    xs, ys, zs = _drawn(b.graph([root, byte, log]))
    assert xs.min() >= 2 and ys.min() >= 0 and ys.max() <= 1 and zs.min() < 0


def test_a_divisor_is_drawn_non_zero_and_a_sum_under_a_log_positive() -> None:
    b = Builder()
    a, d, p, q = b.input([512], "int32"), b.input([512], "int32"), b.input([64]), b.input([64])
    quotient = b.op("FloorDiv", [a, d], [512], "int32")
    log = b.op("Log", [b.op("Add", [p, q], [64])], [64])
    graph = b.graph([quotient, log])
    assert input_domains(graph) == [Domain(), Domain(nonzero=True), POSITIVE, POSITIVE]
    av, dv, pv, qv = _drawn(graph)
    assert (dv != 0).all() and dv.min() < 0 < dv.max() and av.min() == -8
    assert pv.min() > 0 and qv.min() > 0


def test_inputs_without_a_domain_are_drawn_as_before() -> None:
    """A graph whose ops are defined everywhere draws exactly what earlier checks drew: a corpus case's
    wrong result stays the same wrong result."""
    specs = [{"shape": [3, 5], "dtype": "float16"}, {"shape": [7], "dtype": "int32"}, {"shape": [4], "dtype": "uint8"}]
    rng = np.random.RandomState(0)
    before = [rng.uniform(-1, 1, (3, 5)).astype("float16"), rng.randint(-8, 9, 7), rng.randint(0, 9, 4)]
    for got, want in zip(make_inputs(specs, 0), before, strict=True):
        assert np.array_equal(got, want)


# Property: over random chains of the ops the rules carry a lower bound through (products and sums of tensors,
# shifts by constants and scales by positive ones, casts both ways, Exp, Abs, Square), every input the check
# draws in its domain keeps every op that needs something of its operand (a positive Log, a non-zero divisor)
# defined. What the rules leave to chance: a quotient of tensors carries positivity and non-zero only, and a
# product or sum of tensors no upper bound (after a negation or `c - x`).
CARRIED_BINARY = ["Mul", "Add"]
PASSED_UNARY = ["Exp", "Abs", "Square"]
NEEDING = {"Log": "float32", "Sqrt": "float32", "Reciprocal": "float32", "FloorDiv": "int32", "RealDiv": "float32"}


@st.composite
def chains(draw: st.DrawFn) -> dict:
    b = Builder()
    dtype = draw(st.sampled_from(["float32", "int32"]))
    tensors = [b.input([64], dtype), b.input([64], dtype)]
    for _ in range(draw(st.integers(1, 4))):
        x = draw(st.sampled_from(tensors))
        step = draw(st.sampled_from(["binary", "constant", "unary", "cast"]))
        if step == "binary":
            name = draw(st.sampled_from(CARRIED_BINARY))
            same = [t for t in tensors if t["data_type"] == x["data_type"]]
            tensors.append(b.op(name, [x, draw(st.sampled_from(same))], [64], x["data_type"]))
        elif step == "constant":
            name = draw(st.sampled_from(["Add", "Sub", "Mul"]))
            value = draw(st.integers(1, 3) if name == "Mul" else st.integers(-3, 3))
            const = b.const(float(value) if x["data_type"] == "float32" else value, x["data_type"])
            ordered = [const, x] if name != "Sub" and draw(st.booleans()) else [x, const]
            tensors.append(b.op(name, ordered, [64], x["data_type"]))
        elif step == "unary" and x["data_type"] == "float32":
            tensors.append(b.op(draw(st.sampled_from(PASSED_UNARY)), [x], [64], "float32"))
        else:
            other = "int32" if x["data_type"] == "float32" else "float32"
            tensors.append(b.op("Cast", [x], [64], other, dst_type=other))
    x = tensors[-1]
    need = draw(st.sampled_from(sorted(n for n, d in NEEDING.items() if d == x["data_type"])))
    if need in ("FloorDiv", "RealDiv"):
        dividend = draw(st.sampled_from([t for t in tensors if t["data_type"] == x["data_type"]]))
        out = b.op(need, [dividend, x], [64], x["data_type"])
    else:
        out = b.op(need, [x], [64], "float32")
    return b.graph([out])


def _operands_meet_their_needs(graph: dict, inputs: list[np.ndarray]) -> list[str]:
    broken: list[str] = []

    def watch(op: dict, data: list[np.ndarray], result: np.ndarray) -> None:
        for index, need in NEEDS.get(op["name"], {}).items():
            value = np.asarray(data[index], np.float64)
            outside = (value < need.low) | (value > need.high) | ((value == 0) if need.nonzero else False)
            if outside.any():
                broken.append(f"{op['name']} operand {index}: {value[outside][:3]} outside {need}")

    graph_numpy.evaluate(graph, inputs, watch)
    return broken


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains())
def test_a_drawn_input_never_leaves_an_ops_domain(graph: dict) -> None:
    assert _operands_meet_their_needs(graph, _drawn(graph)) == []


def _divisor_domain(divisor: Callable[[Builder, dict], dict], dtype: str) -> Domain:
    b = Builder()
    x, y = b.input([64], dtype), b.input([64], dtype)
    graph = b.graph([b.op("FloorDiv", [x, divisor(b, y)], [64], dtype)])
    return input_domains(graph)[1]


def test_an_integer_quotient_carries_no_non_zero_need_and_a_narrow_product_keeps_from_wrapping() -> None:
    """y / 2 of integers is 0 for |y| < 2, so a non-zero need asks |y| >= 2; y / z of tensors truncates to 0
    for any |y| < |z|, so nothing is carried (left to chance, and a division that then traps is the check's
    failure); an int8 product of non-zeros keeps its factors within the root of 127."""
    by_two = _divisor_domain(lambda b, y: b.op("RealDiv", [y, b.const(2, "int32")], [64], "int32"), "int32")
    assert by_two.low >= 2
    dividend = _divisor_domain(lambda b, y: b.op("RealDiv", [y, b.input([64], "int32")], [64], "int32"), "int32")
    assert dividend.free
    square = _divisor_domain(lambda b, y: b.op("Mul", [y, y], [64], "int8"), "int8")
    assert square.nonzero and square.high <= 11 and square.low >= -11


def test_a_drawn_input_stays_inside_a_domain_away_from_the_default_range() -> None:
    """Asin(4 * (x - 2)) needs x in [1.75, 2.25]: the draw stays inside it, not a unit past its edge."""
    b = Builder()
    x = b.input([4096])
    shifted = b.op("Sub", [x, b.const(2.0, "float32")], [4096])
    graph = b.graph([b.op("Asin", [b.op("Mul", [shifted, b.const(4.0, "float32")], [4096])], [4096])])
    (drawn,) = _drawn(graph)
    assert drawn.min() >= 1.75 and drawn.max() <= 2.25
    assert np.isfinite(graph_numpy.evaluate(graph, [drawn])[0]).all()
