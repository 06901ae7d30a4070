"""The TeLang probe, a separate program run under the case's interpreter with its build (stdlib, numpy, wire.py and
MindSpore's AKG): it imports AKG's `tvm` once, then evaluates TeLang functions on placeholders
as AKG calls them (telang_plain.py) and checks what AKG's lowering would refuse anyway, without compiling
anything.

Protocol, one JSON object per line. Probe -> reducer: {"ready": seconds} after the import, or
{"unavailable": why} before ending. Reducer -> probe: {"source", "function", "func_type", "inputs":
[[shape, dtype], ...], "attrs": {the Custom op's attrs}}; the answer: {"outputs": [[shape, dtype], ...],
"stages": {name: [shape, dtype]} (the function's local tensors when it returned), "unchecked": [the reads
whose bounds no check could decide]} or {"invalid": why}. A request with "run": [[shape, dtype, base64 of
the bytes], ...] and "run_target" (tvm's name of the CPU) asks instead for the kernel run on those values as
plain TVM builds it for the CPU (no AKG pass): {"results": [the same triples]}. End of input ends the probe."""

import json
import os
import sys
import time

from telang_plain import Invalid, called
from telang_plain import run_plain as run_plain_tvm
from wire import import_akg, replier

DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")


def import_tvm():
    """AKG's tvm, AKG's passes and ops registered with it."""
    import_akg()
    from akg import tvm

    return tvm


def _shape(tensor, what):
    dims = []
    for d in tensor.shape:
        value = getattr(d, "value", None)
        if not isinstance(value, int):
            raise Invalid(f"{what} has a shape that is not constant: {list(tensor.shape)}")
        if value < 1:
            raise Invalid(f"{what} has a non-positive shape {[getattr(x, 'value', x) for x in tensor.shape]}")
        dims.append(value)
    return dims


def _dtype(tensor, what):
    if tensor.dtype not in DTYPES:
        raise Invalid(f"{what} has dtype {tensor.dtype}")
    return tensor.dtype


def _free_vars(tvm, expr):
    found = []

    def visit(node):
        if isinstance(node, tvm.expr.Var):
            found.append(node)

    tvm.ir_pass.PostOrderVisit(expr, visit)
    return found


def _reduces_inside(tvm, expr):
    found = []
    tvm.ir_pass.PostOrderVisit(expr, lambda n: found.append(n) if isinstance(n, tvm.expr.Reduce) else None)
    return found


def _check_compute(tvm, op):
    """What lowering refuses: a variable that is neither an axis of the stage nor reduced over, a reduction
    that is not the whole body, a reduce axis read outside its reduction. Variables are told apart by
    identity (tvm's hash of a node), not by name: every reduce axis made without name= is called `rv`."""
    axes = {hash(v.var) for v in op.axis}
    reduce_axes = {hash(v.var) for v in op.reduce_axis}
    for body in op.body:
        top = body if isinstance(body, tvm.expr.Reduce) else None
        nested = [r for r in _reduces_inside(tvm, body) if not r.same_as(top)] if top is None else []
        if top is not None:
            inner = [*top.source, top.condition]
            nested = [r for e in inner for r in _reduces_inside(tvm, e)]
        if nested:
            raise Invalid(f"stage {op.name}: a reduction inside an expression (it must be the whole body)")
        allowed = axes | (reduce_axes if top is not None else set())
        for var in _free_vars(tvm, body):
            if hash(var) not in allowed:
                raise Invalid(f"stage {op.name}: reads {var.name}, which is neither its axis nor reduced over")


_FLIPPED = {"GE": "LT", "GT": "LE", "LT": "GE", "LE": "GT"}
_MIRRORED = {"GE": "LE", "GT": "LT", "LT": "GT", "LE": "GE"}


def _limits(tvm, analyzer, cond, negate):
    """What `cond` (or its negation) says of the axes, {axis key: (lowest, highest)}, when it is a conjunction
    of comparisons of an axis with a constant (padding's `i >= 1 and i < h + 1`); None when it says something
    else (the reads it guards are then checked point by point)."""
    conjuncts, todo = [], [cond]
    while todo:
        node = todo.pop()
        if isinstance(node, tvm.expr.And) and not negate:
            todo += [node.a, node.b]
        else:
            conjuncts.append(node)  # negated, a conjunction stays whole and says nothing (not a comparison)
    limits = {}
    for node in conjuncts:
        kind = type(node).__name__
        if kind not in _FLIPPED:
            return None
        kind = _FLIPPED[kind] if negate else kind
        a, b = analyzer.canonical_simplify(node.a), analyzer.canonical_simplify(node.b)
        if isinstance(a, tvm.expr.IntImm) and isinstance(b, tvm.expr.Var):
            a, b, kind = b, a, _MIRRORED[kind]
        if not (isinstance(a, tvm.expr.Var) and isinstance(b, tvm.expr.IntImm)):
            return None
        low, high = limits.get(hash(a), (-(2**62), 2**62))
        value = b.value
        if kind in ("GE", "GT"):
            low = max(low, value + (kind == "GT"))
        else:
            high = min(high, value - (kind == "LT"))
        limits[hash(a)] = (low, high)
    return limits


def _guards(tvm, expr):
    """The branches of `expr` under a condition (of if_then_else, select, or a reduction's `where`), each with
    the condition and whether it holds there (False: the else branch)."""
    guards = []

    def visit(node):
        if isinstance(node, tvm.expr.Call) and node.name == "tvm_if_then_else":
            cond, then, other = node.args
            guards.extend([(then, cond, True), (other, cond, False)])
        elif isinstance(node, tvm.expr.Select):
            guards.extend([(node.true_value, node.condition, True), (node.false_value, node.condition, False)])
        elif isinstance(node, tvm.expr.Reduce) and not (
            isinstance(node.condition, tvm.expr.UIntImm) and node.condition.value == 1
        ):
            guards.extend((source, node.condition, True) for source in node.source)

    tvm.ir_pass.PostOrderVisit(expr, visit)
    return guards


def _tensor_reads(tvm, expr):
    reads = []
    tvm.ir_pass.PostOrderVisit(
        expr, lambda n: reads.append(n) if isinstance(n, tvm.expr.Call) and n.call_type == n.Halide else None
    )
    return reads


def _check_bounds(tvm, op):
    """Invalid at the first read of a stage outside its tensor's shape where the conditions it is under hold:
    what AKG would read there is no element of the tensor (padding reads past the edge only where its
    condition does not hold). A read under comparisons of an axis with a constant, or under none, is bounded
    by tvm's bound analysis over the axes narrowed by those comparisons; any other read is checked at every
    point of the axes it depends on (ENUMERATED_POINTS at most). Returns the reads neither could check."""
    axes = {hash(axis.var): axis for axis in list(op.axis) + list(op.reduce_axis)}
    base = tvm.arith.Analyzer()
    unchecked = []
    for body in op.body:
        guards = [(_tensor_reads(tvm, branch), cond, holds) for branch, cond, holds in _guards(tvm, body)]
        for read in _tensor_reads(tvm, body):
            around = [(cond, holds) for reads, cond, holds in guards if any(read.same_as(r) for r in reads)]
            limits = [_limits(tvm, base, cond, not holds) for cond, holds in around]
            if all(limit is not None for limit in limits) and _bounded(tvm, op, read, axes, limits):
                continue
            if not _enumerated(tvm, op, read, axes, around):
                unchecked.append(f"stage {op.name} reads {read.name} at {list(read.args)} under {_said(around)}")
    return unchecked


def _said(around):
    return " and ".join(f"{'' if holds else 'not '}({cond})" for cond, holds in around) or "no condition"


def _bounded(tvm, op, read, axes, limits):
    """Checks `read` by tvm's bound analysis, each axis within what `limits` say of it; False when an index
    has no finite bound (nothing was checked)."""
    analyzer = tvm.arith.Analyzer()
    for key, axis in axes.items():
        low, high = axis.dom.min.value, axis.dom.min.value + axis.dom.extent.value - 1
        for limit in limits:
            lowest, highest = limit.get(key, (low, high))
            low, high = max(low, lowest), min(high, highest)
        if low > high:  # this read never happens
            return True
        analyzer.bind(axis.var, tvm.Range(low, high + 1))
    bounds = [analyzer.const_int_bound(index) for index in read.args]
    if any(abs(b.min_value) >= 2**62 or abs(b.max_value) >= 2**62 for b in bounds):
        return False
    _refuse_outside(op, read, [(b.min_value, b.max_value) for b in bounds])
    return True


def _refuse_outside(op, read, ranges, where=""):
    shape = [d.value for d in read.func.output(read.value_index).shape]
    for index, extent, (low, high) in zip(read.args, shape, ranges, strict=True):
        if low < 0 or high >= extent:
            raise Invalid(
                f"stage {op.name} reads {read.name} at {index} in [{low}, {high}]{where}, outside its shape {shape}"
            )


ENUMERATED_POINTS = 1 << 22  # numpy evaluates this many index tuples in well under a second


def _enumerated(tvm, op, read, axes, around):
    """Checks `read` at every point of the axes its indices and conditions depend on, with numpy. A part of a
    condition that reads data (`x[i] > 0`) may hold anywhere: the read is checked where the rest holds, and
    a read outside the shape there is left undecided, not refused. False when undecided, when there are too
    many points, or when an index is not integer arithmetic of the axes."""
    import numpy as np

    exprs = list(read.args) + [cond for cond, _ in around]
    used = {hash(v): axes[hash(v)] for e in exprs for v in _free_vars(tvm, e) if hash(v) in axes}
    extents = [axis.dom.extent.value for axis in used.values()]
    if int(np.prod(extents, dtype=np.float64)) > ENUMERATED_POINTS:
        return False
    starts = [axis.dom.min.value for axis in used.values()]
    spans = [np.arange(start, start + n) for start, n in zip(starts, extents, strict=True)]
    grids = np.meshgrid(*spans, indexing="ij", sparse=True)
    values = dict(zip(used, grids, strict=True))
    full = tuple(extents)
    where, weakened = np.ones(full, dtype=bool), False
    for cond, holds in around:
        for part in _conjuncts(tvm, cond) if holds else [cond]:
            try:
                met = np.broadcast_to(_evaluate_int(tvm, np, part, values), full).astype(bool)
            except _NotEvaluable:
                weakened = True
                continue
            where &= met if holds else ~met
    if not where.any():  # the read never happens
        return True
    try:
        indices = [np.broadcast_to(_evaluate_int(tvm, np, index, values), full)[where] for index in read.args]
    except _NotEvaluable:
        return False
    ranges = [(int(i.min()), int(i.max())) for i in indices]
    shape = [d.value for d in read.func.output(read.value_index).shape]
    if weakened and any(low < 0 or high >= extent for (low, high), extent in zip(ranges, shape, strict=True)):
        return False
    _refuse_outside(op, read, ranges, " where its condition holds")
    return True


def _conjuncts(tvm, cond):
    if isinstance(cond, tvm.expr.And):
        return _conjuncts(tvm, cond.a) + _conjuncts(tvm, cond.b)
    return [cond]


class _NotEvaluable(Exception):
    """An index or condition with something other than integer arithmetic of the axes."""


_BINARY = {
    "Add": lambda np, a, b: a + b,
    "Sub": lambda np, a, b: a - b,
    "Mul": lambda np, a, b: a * b,
    "Div": lambda np, a, b: np.sign(a) * np.sign(b) * (np.abs(a) // np.where(b == 0, 1, np.abs(b))),
    "Mod": lambda np, a, b: np.sign(a) * (np.abs(a) % np.where(b == 0, 1, np.abs(b))),
    "FloorDiv": lambda np, a, b: a // np.where(b == 0, 1, b),
    "FloorMod": lambda np, a, b: a % np.where(b == 0, 1, b),
    "Min": lambda np, a, b: np.minimum(a, b),
    "Max": lambda np, a, b: np.maximum(a, b),
    "EQ": lambda np, a, b: a == b,
    "NE": lambda np, a, b: a != b,
    "LT": lambda np, a, b: a < b,
    "LE": lambda np, a, b: a <= b,
    "GT": lambda np, a, b: a > b,
    "GE": lambda np, a, b: a >= b,
    "And": lambda np, a, b: np.logical_and(a, b),
    "Or": lambda np, a, b: np.logical_or(a, b),
}


def _evaluate_int(tvm, np, expr, values):
    """`expr`, integer arithmetic and comparisons of the axes in `values`, as a numpy array over them (C's
    truncating division for Div and Mod, as TVM's)."""
    kind = type(expr).__name__
    if isinstance(expr, (tvm.expr.IntImm, tvm.expr.UIntImm)):
        return np.int64(expr.value)
    if isinstance(expr, tvm.expr.Var) and hash(expr) in values:
        return values[hash(expr)]
    if kind in _BINARY:
        return _BINARY[kind](np, _evaluate_int(tvm, np, expr.a, values), _evaluate_int(tvm, np, expr.b, values))
    if kind == "Not":
        return np.logical_not(_evaluate_int(tvm, np, expr.a, values))
    if kind == "Cast" and not expr.dtype.startswith("float"):
        return _evaluate_int(tvm, np, expr.value, values)
    if kind == "Select" or (kind == "Call" and expr.name == "tvm_if_then_else"):
        cond, then, other = (expr.condition, expr.true_value, expr.false_value) if kind == "Select" else expr.args
        parts = [_evaluate_int(tvm, np, e, values) for e in (cond, then, other)]
        return np.where(*parts)
    raise _NotEvaluable(kind)


def _walk(tvm, outputs, placeholders):
    """Check every stage the outputs depend on; the reads no check could decide."""
    unchecked = []
    seen = []  # by identity: stages made without name= are all called "compute"
    todo = [t.op for t in outputs]
    while todo:
        op = todo.pop()
        if any(op.same_as(other) for other in seen):
            continue
        seen.append(op)
        if isinstance(op, tvm.tensor.PlaceholderOp):
            if not any(op.same_as(p.op) for p in placeholders):
                raise Invalid(f"reads placeholder {op.name}, which is not one of its inputs")
            continue
        for i in range(op.num_outputs):
            tensor = op.output(i)
            _shape(tensor, f"stage {op.name}")
            _dtype(tensor, f"stage {op.name}")
        if isinstance(op, tvm.tensor.ComputeOp):
            _check_compute(tvm, op)
            unchecked += _check_bounds(tvm, op)
        todo.extend(t.op for t in op.input_tensors)
    return unchecked


def _called(tvm, request, shapes, stages=None):
    """The request's function called on placeholders of `shapes` and its inputs' dtypes (telang_plain.called)."""
    inputs = [(shape, dtype) for shape, (_, dtype) in zip(shapes, request["inputs"], strict=True)]
    function = (request["source"], request["function"], request["func_type"])
    return called(tvm, *function, inputs, request.get("attrs", {}), stages)


def evaluate(tvm, request):
    stages = {}
    placeholders, results = _called(tvm, request, [shape for shape, _ in request["inputs"]], stages)
    if any(any(r.op.same_as(p.op) for p in placeholders) for r in results):
        raise Invalid("an output is an input (AKG builds nothing for it)")
    unchecked = _walk(tvm, results, placeholders)
    described = {}
    for name, tensor in stages.items():
        try:
            described[name] = [_shape(tensor, name), _dtype(tensor, name)]
        except Invalid:
            continue
    return {
        "outputs": [[_shape(r, "an output"), _dtype(r, "an output")] for r in results],
        "stages": described,
        "unchecked": unchecked,
    }


def run_plain(tvm, request):
    """{"results": [[shape, dtype, base64 of the bytes], ...]}: the kernel run by plain TVM on request["run"]'s
    values (the same triples)."""
    import base64

    import numpy as np

    values = [np.frombuffer(base64.b64decode(data), dtype).reshape(shape) for shape, dtype, data in request["run"]]
    function = (request["source"], request["function"], request["func_type"])
    results = run_plain_tvm(tvm, *function, request.get("attrs", {}), values, request["run_target"])
    return {"results": [[list(r.shape), str(r.dtype), base64.b64encode(r.tobytes()).decode()] for r in results]}


def _last_line(message):
    """The line of a TVM error that says what failed (its message ends a native backtrace)."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def main():
    replies = os.dup(1)
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 1)  # stray prints of AKG or of a kernel must not reach the protocol pipe

    reply = replier(replies)

    started = time.monotonic()
    try:
        tvm = import_tvm()
    except Exception as exc:
        reply({"unavailable": f"{type(exc).__name__}: {exc}"})
        return
    reply({"ready": round(time.monotonic() - started, 3)})
    for line in sys.stdin:
        request = json.loads(line)
        try:
            answer = run_plain(tvm, request) if "run" in request else evaluate(tvm, request)
        except Invalid as exc:
            answer = {"invalid": str(exc)}
        except Exception as exc:
            line = _last_line(str(exc))
            answer = {"invalid": line if line.startswith(type(exc).__name__) else f"{type(exc).__name__}: {line}"}
        reply(answer)


if __name__ == "__main__":
    main()
