"""The TeLang probe, a separate program run under the case's interpreter with its build (stdlib, wire.py and
MindSpore's AKG): it imports AKG's `tvm` once, then evaluates TeLang functions on placeholders
as AKG's composite/topi.py `custom()` does (the source made a module, `tvm` put in the function's globals,
the function called on the input placeholders; an ir_builder function gets the list of inputs and the attrs)
and checks what AKG's lowering would refuse anyway, without compiling anything.

Protocol, one JSON object per line. Probe -> reducer: {"ready": seconds} after the import, or
{"unavailable": why} before ending. Reducer -> probe: {"source", "function", "func_type", "inputs":
[[shape, dtype], ...]}; the answer: {"outputs": [[shape, dtype], ...], "stages": {name: [shape, dtype]} (the
function's local tensors when it returned)} or {"invalid": why}. End of input ends the probe."""

import json
import os
import sys
import time

from wire import import_akg, replier

DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")


def import_tvm():
    """AKG's tvm, AKG's passes and ops registered with it."""
    import_akg()
    from akg import tvm

    return tvm


class Invalid(Exception):
    """The function is not a TeLang kernel AKG can lower."""


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
    that is not the whole body, a reduce axis read outside its reduction."""
    axes = {v.var.name for v in op.axis}
    reduce_axes = {v.var.name for v in op.reduce_axis}
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
            if var.name not in allowed:
                raise Invalid(f"stage {op.name}: reads {var.name}, which is neither its axis nor reduced over")


_FLIPPED = {"GE": "LT", "GT": "LE", "LT": "GE", "LE": "GT"}
_MIRRORED = {"GE": "LE", "GT": "LT", "LT": "GT", "LE": "GE"}


def _limits(tvm, analyzer, cond, negate):
    """What `cond` (or its negation) says of the axes, {axis name: (lowest, highest)}, when it is a conjunction
    of comparisons of an axis with a constant (padding's `i >= 1 and i < h + 1`); None when it says something
    else, so that the reads it guards are not checked."""
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
        low, high = limits.get(a.name, (-(2**62), 2**62))
        value = b.value
        if kind in ("GE", "GT"):
            low = max(low, value + (kind == "GT"))
        else:
            high = min(high, value - (kind == "LT"))
        limits[a.name] = (low, high)
    return limits


def _guards(tvm, analyzer, expr):
    """The branches of `expr` under a condition (of if_then_else, select, or a reduction's `where`) with what
    the condition says of the axes there (_limits)."""
    guards = []

    def visit(node):
        if isinstance(node, tvm.expr.Call) and node.name == "tvm_if_then_else":
            cond, then, other = node.args
            guards.extend([(then, _limits(tvm, analyzer, cond, False)), (other, _limits(tvm, analyzer, cond, True))])
        elif isinstance(node, tvm.expr.Select):
            guards.append((node.true_value, _limits(tvm, analyzer, node.condition, False)))
            guards.append((node.false_value, _limits(tvm, analyzer, node.condition, True)))
        elif isinstance(node, tvm.expr.Reduce) and not (
            isinstance(node.condition, tvm.expr.UIntImm) and node.condition.value == 1
        ):
            guards.extend((source, _limits(tvm, analyzer, node.condition, False)) for source in node.source)

    tvm.ir_pass.PostOrderVisit(expr, visit)
    return guards


def _tensor_reads(tvm, expr):
    reads = []
    tvm.ir_pass.PostOrderVisit(
        expr, lambda n: reads.append(n) if isinstance(n, tvm.expr.Call) and n.call_type == n.Halide else None
    )
    return reads


def _check_bounds(tvm, op):
    """Invalid at the first read of a stage outside its tensor's shape: what AKG would read there is no
    element of the tensor. Index ranges come from tvm's bound analysis over the stage's axes and reduce axes,
    narrowed by the conditions a read is under (padding reads past the edge only where its condition does
    not hold); a read under a condition that is not a simple comparison of axes is left to AKG."""
    axes = {axis.var.name: axis for axis in list(op.axis) + list(op.reduce_axis)}
    base = tvm.arith.Analyzer()
    for body in op.body:
        guards = [(_tensor_reads(tvm, branch), limits) for branch, limits in _guards(tvm, base, body)]
        for read in _tensor_reads(tvm, body):
            around = [limits for reads, limits in guards if any(read.same_as(r) for r in reads)]
            if any(limits is None for limits in around):
                continue
            analyzer = tvm.arith.Analyzer()
            for name, axis in axes.items():
                low, high = axis.dom.min.value, axis.dom.min.value + axis.dom.extent.value - 1
                for limits in around:
                    lowest, highest = limits.get(name, (low, high))
                    low, high = max(low, lowest), min(high, highest)
                if low > high:  # this read never happens
                    break
                analyzer.bind(axis.var, tvm.Range(low, high + 1))
            else:
                _check_read(tvm, analyzer, op, read)


def _check_read(tvm, analyzer, op, read):
    shape = [d.value for d in read.func.output(read.value_index).shape]
    for axis, extent in enumerate(shape):
        index = read.args[axis]
        bound = analyzer.const_int_bound(index)
        if (
            abs(bound.min_value) < 2**62
            and abs(bound.max_value) < 2**62
            and (bound.min_value < 0 or bound.max_value >= extent)
        ):
            raise Invalid(
                f"stage {op.name} reads {read.name} at {index} in [{bound.min_value}, {bound.max_value}], "
                f"outside its shape {shape}"
            )


def _walk(tvm, outputs, placeholders):
    """Check every stage the outputs depend on."""
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
            _check_bounds(tvm, op)
        todo.extend(t.op for t in op.input_tensors)


def evaluate(tvm, request):
    source, function, func_type = request["source"], request["function"], request["func_type"]
    module = {"__name__": function}
    exec(compile(source, f"<kernel {function}>", "exec"), module)
    func = module.get(function)
    if not callable(func):
        raise Invalid(f"the source defines no function {function}")
    func.__globals__["tvm"] = tvm
    placeholders = [
        tvm.placeholder(tuple(shape), dtype, name=f"input_{i}") for i, (shape, dtype) in enumerate(request["inputs"])
    ]
    stages = {}

    def keep_locals(frame, event, arg):
        if event == "return" and frame.f_code is func.__code__:
            for name, value in frame.f_locals.items():
                if isinstance(value, tvm.tensor.Tensor) and name not in stages:
                    stages[name] = value

    sys.setprofile(keep_locals)
    try:
        result = func(placeholders, {}) if func_type == "ir_builder" else func(*placeholders)
    finally:
        sys.setprofile(None)
    results = list(result) if isinstance(result, (list, tuple)) else [result]
    if not results or not all(isinstance(r, tvm.tensor.Tensor) for r in results):
        raise Invalid("the function must return its output tensors")
    if any(any(r.op.same_as(p.op) for p in placeholders) for r in results):
        raise Invalid("an output is an input (AKG builds nothing for it)")
    _walk(tvm, results, placeholders)
    described = {}
    for name, tensor in stages.items():
        try:
            described[name] = [_shape(tensor, name), _dtype(tensor, name)]
        except Invalid:
            continue
    return {
        "outputs": [[_shape(r, "an output"), _dtype(r, "an output")] for r in results],
        "stages": described,
    }


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
            answer = evaluate(tvm, request)
        except Invalid as exc:
            answer = {"invalid": str(exc)}
        except Exception as exc:
            line = _last_line(str(exc))
            answer = {"invalid": line if line.startswith(type(exc).__name__) else f"{type(exc).__name__}: {line}"}
        reply(answer)


if __name__ == "__main__":
    main()
