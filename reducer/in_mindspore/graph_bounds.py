"""How far a right kernel's result may lie from the reference (graph_numpy.py), element by element: a running
error analysis of the fused graph, evaluated beside the reference.

Each tensor carries a bound on its absolute error. A graph input has none. Each op passes on the error of its
operands (their bounds pushed through the op: for elementwise ops the op evaluated at the corners of its
operands' error intervals, so conditioning counts, cancellation in `a - b` included; for a sum the sum of the
bounds; for a matrix product the products of values and bounds) and adds its own: LESS_ACCURATE times what
MindSpore's own kernel of the op may be off (graph_numpy.mindspore_ulps), in units in the last place of the dtype
the op computes in (none for an op whose result needs no rounding: a floor, a floored quotient, a comparison, a
maximum, a cast to an integer), and for a reduction or matrix product over n elements the rounding of n
additions (n * u * sum |x|: the classic bound of recursive summation in the op's dtype, whatever order the
kernel adds in; a float16 sum may be added in float16, which MindSpore's kernels do not but AKG's do). So an op
of exact operands whose result needs no rounding is compared exactly: its error comes from the ops upstream,
never from inside it.

So a float32 result is held to float32's precision: an error of float16's size is far outside it, and so is
one many times MindSpore's own. A boolean or integer result fed by float arithmetic (a comparison, a floor, a
cast) may differ wherever the bounds of what decided it overlap the decision (a == b within their errors); there
its bound is the largest change the decision can make, and such an element is not compared. Needs only numpy and
graph_numpy.py; a bundle's repro.py carries both."""

from __future__ import annotations

import itertools
from typing import Any

import graph_numpy
import numpy as np

# A right kernel's op may be this many times less accurate than MindSpore's own kernel of it: a division as a
# multiplication by the reciprocal rounds twice where MindSpore rounds once. A kernel that computes a float32
# op in float16 is about 8000 times less accurate; AKG's fast float32 exp of MindSpore 2.10 about 45.
LESS_ACCURATE = 4


def unit(dtype: Any) -> float:
    """The unit roundoff of a float dtype (half its epsilon); 0 for integers and booleans, which are exact."""
    dtype = np.dtype(dtype)
    return float(np.finfo(dtype).eps) / 2 if dtype.kind == "f" else 0.0


def _stored(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A result as the op's output dtype holds it, in float64: an integer or boolean result is converted (the
    truncation a cast makes), a float one left exact."""
    return np.asarray(value).astype(dtype).astype(np.float64) if dtype.kind in "iub" else np.asarray(value, float)


def _corners(
    op: dict[str, Any], data: list[np.ndarray], errors: list[np.ndarray], tensors: list, exact: np.ndarray
) -> np.ndarray:
    """The largest change of an elementwise op's result over the corners of its operands' error intervals
    (NaN, an operand leaving the op's domain, counts as unbounded)."""
    dtype = np.dtype(op["output_desc"][0]["data_type"])
    moved = [i for i, e in enumerate(errors) if np.any(e)]
    center = _stored(exact, dtype)
    change = np.zeros(np.shape(exact))
    for signs in itertools.product((-1.0, 1.0), repeat=len(moved)):
        corner = list(data)
        for place, i in enumerate(moved):  # no zip(strict=): this file runs on the case's Python 3.9+
            shifted = data[i] + signs[place] * errors[i]
            corner[i] = shifted.astype(data[i].dtype) if data[i].dtype.kind in "iub" else shifted
        step = np.abs(_stored(graph_numpy.apply(op, corner, tensors), dtype) - center)
        change = np.maximum(change, np.where(np.isnan(step), np.inf, step))
    return change


def _reduced_count(data: np.ndarray, exact: np.ndarray) -> int:
    return max(1, data.size // max(1, np.size(exact)))


def op_error(
    op: dict[str, Any], data: list[np.ndarray], errors: list[np.ndarray], tensors: list, exact: np.ndarray
) -> np.ndarray:
    """The bound on the error of the op's result (its input tensors `tensors`): its operands' errors carried
    through it, plus its own."""
    name = op["name"]
    dtype = op["output_desc"][0]["data_type"]
    u = unit(dtype)
    own = LESS_ACCURATE * graph_numpy.mindspore_ulps(name, dtype) * u * graph_numpy.error_scale(name, exact, data)
    if name in graph_numpy.ELEMENTWISE:
        return _corners(op, data, errors, tensors, exact) + own
    if name in ("ReduceSum", "AddN", "MatMul", "BatchMatMul", "ReduceProd"):
        return _accumulated(op, data, errors, tensors, exact, u) + own
    if name in graph_numpy.REDUCE:  # max, min, all, any: an input's error moves the result at most as much
        return np.asarray(graph_numpy.apply(graph_numpy.renamed(op, "ReduceMax"), errors, tensors), np.float64)
    if name == "Select":
        undecided = errors[0] >= 1
        picked = np.where(data[0].astype(bool), errors[1], errors[2])
        apart = np.abs(data[1].astype(np.float64) - data[2].astype(np.float64))
        return np.where(undecided, apart + np.maximum(errors[1], errors[2]), picked)
    return np.asarray(graph_numpy.apply(op, errors, tensors), np.float64)  # moves: the errors move with the values


def _accumulated(
    op: dict[str, Any], data: list[np.ndarray], errors: list[np.ndarray], tensors: list, exact: np.ndarray, u: float
) -> np.ndarray:
    """Sums and products of many terms: each term's error, and n roundings (of unit `u`) of the running
    result."""
    name = op["name"]
    if name == "AddN":
        return sum(errors[1:], errors[0]) + (len(data) - 1) * u * sum(np.abs(d) for d in data)
    if name == "ReduceSum":
        n = _reduced_count(data[0], exact)
        carried = graph_numpy.apply(op, errors, tensors)
        return carried + n * u * graph_numpy.apply(op, [np.abs(data[0])], tensors)
    if name == "ReduceProd":  # relative errors add up
        n = _reduced_count(data[0], exact)
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = np.where(errors[0] > 0, errors[0] / np.abs(data[0]), 0.0)
        return np.abs(exact) * (graph_numpy.apply(graph_numpy.renamed(op, "ReduceSum"), [relative], tensors) + n * u)
    a, b = np.abs(data[0]), np.abs(data[1])  # MatMul, BatchMatMul: |A| E_B + E_A |B| + k u |A| |B|
    inner = graph_numpy.apply(op, [np.ones(a.shape), np.ones(b.shape)], tensors)
    carried = graph_numpy.apply(op, [a, errors[1]], tensors) + graph_numpy.apply(op, [errors[0], b], tensors)
    return carried + inner * u * graph_numpy.apply(op, [a, b], tensors)


class _Tracker:
    """The error bound of every tensor so far, updated after each op of graph_numpy.evaluate."""

    def __init__(self) -> None:
        self.errors: dict[str, np.ndarray] = {}

    def error_of(self, tensor: dict[str, Any], value: np.ndarray) -> np.ndarray:
        if "value" in tensor:
            return np.zeros(np.shape(value))
        return self.errors.get(tensor["tensor_name"], np.zeros(np.shape(value)))

    def __call__(self, op: dict[str, Any], data: list[np.ndarray], exact: np.ndarray) -> None:
        operands, tensors = graph_numpy.data_tensors(op)
        errors = [self.error_of(operands[i], data[i]) for i in range(len(data))]
        (out,) = op["output_desc"]
        bound = np.asarray(op_error(op, data, errors, tensors, exact), np.float64)
        self.errors[out["tensor_name"]] = np.broadcast_to(bound, np.shape(exact)).reshape(out["shape"])


def evaluate(graph: dict[str, Any], inputs: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """graph_numpy.evaluate's outputs, and for each a bound on how far a right kernel's may lie from it."""
    tracker = _Tracker()
    outputs = graph_numpy.evaluate(graph, inputs, tracker)
    return outputs, [tracker.errors[t["tensor_name"]] for t in graph["output_desc"]]
