"""Where a fused graph's inputs must lie for every op of it to be defined: a Log's input positive, a divisor
non-zero, an Acosh's input at least 1, a float cast to uint8 not negative. Each op says what it needs of its
operands; the needs travel back through the ops between them and the graph's inputs (a reshape passes them on,
`x * 255` scales them, `exp` meets a positive need by itself), and each graph input gets the meet of what its
readers need. What no rule carries back is left to chance: the wrong-result check then finds the reference
undefined there and says how much it could compare.

The wrong-result check draws each input inside its domain (mismatch_run.make_inputs); the domains are part of
its spec, so a bundle's repro.py draws the same inputs."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from reducer.in_mindspore import graph_numpy

INF = math.inf


@dataclass(frozen=True)
class Domain:
    """Values in [low, high], and not 0 when `nonzero`."""

    low: float = -INF
    high: float = INF
    nonzero: bool = False

    @property
    def free(self) -> bool:
        return self == FREE

    @property
    def positive(self) -> bool:
        """Asks no more than x > 0 (or x >= 0)."""
        return self.low <= 0 and self.high == INF

    def meet(self, other: Domain) -> Domain:
        return Domain(max(self.low, other.low), min(self.high, other.high), self.nonzero or other.nonzero)

    def to_dict(self) -> dict[str, Any]:
        """The spec's form: only what restricts (JSON has no infinities)."""
        found: dict[str, Any] = {}
        if self.low != -INF:
            found["low"] = self.low
        if self.high != INF:
            found["high"] = self.high
        if self.nonzero:
            found["nonzero"] = True
        return found


FREE = Domain()
POSITIVE = Domain(0.0, INF, True)
NONZERO = Domain(nonzero=True)
# What an op needs of its data operands (by position) for its result to be defined.
NEEDS: dict[str, dict[int, Domain]] = {
    "Log": {0: POSITIVE}, "Sqrt": {0: Domain(0.0)}, "Rsqrt": {0: POSITIVE}, "Reciprocal": {0: NONZERO},
    "Log1p": {0: Domain(-0.5)}, "Acosh": {0: Domain(1.0)}, "Asin": {0: Domain(-1.0, 1.0)},
    "ACos": {0: Domain(-1.0, 1.0)}, "Pow": {0: POSITIVE},
    **{name: {1: NONZERO} for name in graph_numpy.DIVIDING},
}  # fmt: skip
# Ops whose result lies in the domain whenever each data operand does (they move, pick or bound values).
PASSING = graph_numpy.SHAPING - {"AddN", "MatMul", "BatchMatMul"} | {
    "StopGradient", "ReduceMax", "ReduceMin", "Maximum", "Minimum",
}  # fmt: skip


def _cast_need(op: dict[str, Any], data: list[dict[str, Any]]) -> Domain:
    """A float cast to an integer type is defined only inside that type's range (C leaves the rest undefined:
    MindSpore wraps, AKG saturates)."""
    source, target = np.dtype(data[0]["data_type"]), np.dtype(op["output_desc"][0]["data_type"])
    if source.kind != "f" or target.kind not in "iu":
        return FREE
    info = np.iinfo(target)
    return Domain(float(info.min), float(info.max))


def _constant(tensor: dict[str, Any]) -> float | None:
    value = tensor.get("value")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _scaled(need: Domain, factor: float) -> Domain:
    """The domain of x when x * factor must lie in `need`."""
    if factor == 0:
        return FREE
    ends = sorted((need.low / factor, need.high / factor))
    return Domain(ends[0], ends[1], need.nonzero)


def _shifted(need: Domain, offset: float, sign: float = 1.0) -> Domain:
    """The domain of x when sign * x + offset must lie in `need`. A non-zero need moves with the shift: x must
    miss the point that lands on 0, so the domain keeps the wider side of it, a step past it: 1, or an eighth
    of that side when it is narrower (an integer drawn there is rounded up past the point all the same)."""
    low, high = sorted(((need.low - offset) * sign, (need.high - offset) * sign))
    zero_at = -offset * sign
    if not need.nonzero or zero_at == 0 or not low <= zero_at <= high:
        return Domain(low, high, need.nonzero and zero_at == 0)
    above, below = high - zero_at, zero_at - low
    if above >= below:
        return Domain(zero_at + min(1.0, above / 8), high)
    return Domain(low, zero_at - min(1.0, below / 8))


def _by_constant(name: str, index: int, constant: float, need: Domain, integer: bool) -> Domain:
    """The need on operand `index` (of an integer dtype or not) of a binary op whose other operand is
    `constant`. An integer quotient truncates toward 0: it is non-zero only for a dividend at least |c| from
    0 (the positive side is kept)."""
    if name == "Mul":
        return _scaled(need, constant)
    if name in ("RealDiv", "Div") and index == 0 and integer:
        scaled = _scaled(Domain(need.low, need.high), 1 / constant) if constant else FREE
        return scaled.meet(Domain(abs(constant), INF)) if need.nonzero else scaled
    if name in ("RealDiv", "Div") and index == 0:
        return _scaled(need, 1 / constant) if constant else FREE
    if name == "Add":
        return _shifted(need, constant)
    if name == "Sub":
        return _shifted(need, -constant) if index == 0 else _shifted(need, constant, -1.0)
    return FREE


PRODUCTS = frozenset({"Mul", "RealDiv", "Div", "ReduceProd"})
SUMS = frozenset({"Add", "AddN", "ReduceSum"})


def _both_operands(name: str, need: Domain, integer: bool) -> Domain:
    """The need on each operand of an op of tensors, where one choice of operands meets it: a product or
    quotient of non-zeros is non-zero (of two within the root of a bound, within it); a sum, product or quotient
    of non-negatives is non-negative (positive of positives), which meets any need a positive value meets; two
    terms at least c > 0 (a product's also at least 1) stay at least c, each under half (a product's under the
    root) of an upper bound under it, and any number of terms when there is no upper bound. Nothing else is
    carried (left to chance)."""
    low, high, nonzero = need.low, need.high, need.nonzero
    if integer and name in PRODUCTS - {"Mul"}:  # an integer quotient truncates to 0: no need carried
        return FREE
    if name == "Mul" and nonzero and low < 0 < high:
        root = math.sqrt(min(-low, high))
        return Domain(-root, root, True)
    if name in PRODUCTS and need == NONZERO:
        return NONZERO
    if name == "Add" and low <= high / 2:
        return Domain(max(low, 0.0), high / 2, nonzero and low <= 0)
    if name == "Mul" and (low <= 0 or max(1.0, low) <= math.sqrt(high)):
        return Domain(0.0, math.sqrt(high), nonzero) if low <= 0 else Domain(max(1.0, low), math.sqrt(high))
    if high < INF:
        return FREE
    if low <= 0 and name in PRODUCTS | SUMS:
        return Domain(0.0, INF, nonzero)
    if name in SUMS:
        return Domain(low, INF)
    return Domain(max(1.0, low), INF) if name == "ReduceProd" else FREE


def _cast_back(op: dict[str, Any], data: list[dict[str, Any]], need: Domain) -> Domain:
    """A cast passes a need back, but a float cast to an integer truncates: the float must lie among the whole
    numbers the need admits (from ceil(low) to floor(high)), and for a non-zero need at least 1 away from 0
    (the positive side kept where there is one)."""
    source, target = np.dtype(data[0]["data_type"]), np.dtype(op["output_desc"][0]["data_type"])
    if source.kind != "f" or target.kind not in "iu":
        return need
    low, high = math.ceil(need.low) if need.low > -INF else -INF, math.floor(need.high) if need.high < INF else INF
    if need.nonzero and low <= 0 <= high:
        return Domain(1.0, high) if high >= 1 else Domain(low, -1.0)
    return Domain(low, high)


def _log(x: float) -> float:
    return math.log(x) if x > 0 else -INF


UNARY_BACK: dict[str, Callable[[Domain], Domain]] = {
    "Neg": lambda d: Domain(-d.high, -d.low, d.nonzero),
    # exp(x) > 0 meets a positive need by itself
    "Exp": lambda d: FREE if d.positive else Domain(_log(d.low), _log(d.high) if d.high != INF else INF),
    # |x| and x * x meet a positive need by any non-zero x, a bound above 0 on the positive side
    "Abs": lambda d: Domain(nonzero=d.nonzero) if d.positive else Domain(d.low, d.high) if d.low > 0 else FREE,
    "Square": lambda d: (
        Domain(nonzero=d.nonzero) if d.positive else Domain(math.sqrt(d.low), math.sqrt(d.high)) if d.low > 0 else FREE
    ),
    "Sqrt": lambda d: Domain(0.0, INF, d.nonzero) if d.positive else Domain(max(d.low, 0.0) ** 2, d.high**2),
    "Sigmoid": lambda d: FREE,  # in (0, 1): meets a positive need; a narrower one it cannot carry back
}


def _carried(op: dict[str, Any], index: int, data: list[dict[str, Any]], need: Domain) -> Domain:
    """What the op's result needing `need` asks of its data operand `index`."""
    name = op["name"]
    if need.free:
        return FREE
    if name == "Select":
        return need if index > 0 else FREE
    if name in PASSING:
        return need
    if name == "Cast":
        return _cast_back(op, data, need)
    if name in UNARY_BACK:
        return UNARY_BACK[name](need)
    integer = np.dtype(data[index]["data_type"]).kind in "iu"
    if len(data) == 2 and name in graph_numpy.BINARY:
        constant = _constant(data[1 - index])
        if constant is not None:
            return _by_constant(name, index, constant, need, integer)
    if integer and name == "Mul" and need.nonzero:  # factors small enough that their product cannot wrap to 0
        root = math.isqrt(int(np.iinfo(np.dtype(data[index]["data_type"])).max))
        return _both_operands(name, need, integer).meet(Domain(-root, root, True))
    return _both_operands(name, need, integer)


def input_domains(graph: dict[str, Any]) -> list[Domain]:
    """Each graph input's domain, in input_desc order."""
    needs: dict[str, Domain] = {}
    for op in reversed(graph["op_desc"]):
        data, _ = graph_numpy.data_tensors(op)
        result = needs.get(op["output_desc"][0]["tensor_name"], FREE)
        own = {**NEEDS.get(op["name"], {}), **({0: _cast_need(op, data)} if op["name"] == "Cast" else {})}
        for index, tensor in enumerate(data):
            if "value" in tensor:
                continue
            need = own.get(index, FREE).meet(_carried(op, index, data, result))
            name = tensor["tensor_name"]
            needs[name] = needs.get(name, FREE).meet(need)
    return [needs.get(desc[0]["tensor_name"], FREE) for desc in graph["input_desc"] or []]
