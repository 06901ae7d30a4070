"""A TeLang kernel's results computed in numpy from its compute definition: the tensors its function returns,
each stage's body (a `tvm.compute` expression, a reduction) evaluated over its whole index space, with none of
AKG's or TVM's lowering, simplification or code generation. Only the expression tree is AKG's `tvm`'s: the
function builds it as AKG calls it (telang_plain.called). The reference of the wrong-result check
(mismatch_run.py) for TeLang kernels, shared by nothing it judges.

Two ways, as the check asks: `wide`, every float computed in float64 but where the kernel casts (a cast rounds
to its dtype, as the kernel asks); or each op rounded to the dtype it declares, as a kernel that stores every
intermediate would. Integers are computed in their own dtype either way (a truncating division, a wrapping
overflow, as TVM means them). A read outside a tensor is clipped: the probe refuses kernels that read outside
their inputs, so such a read is in a branch not taken. Unsupported: a kernel that is not made of compute stages
(an ir_builder or extern kernel), or uses an intrinsic this module has no rule for; the check then uses plain
TVM and says so. Needs only numpy, graph_numpy.py beside it and the `tvm` it is handed."""

import math

import graph_numpy
import numpy as np


class Unsupported(Exception):
    """The kernel uses what this evaluator has no rule for."""


CHUNK = 1 << 22  # elements of a stage's index space (its reduce axes included) evaluated at once
HALIDE = 3  # tvm.expr.Call.Halide: a read of a tensor

# Intrinsics as numpy computes them in float64; round as TVM's (LLVM's): half away from zero.
_INTRINSICS = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "fabs": np.abs, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "round": lambda x: np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)),
    "nearbyint": np.rint, "sin": np.sin, "cos": np.cos, "atan": np.arctan, "log1p": np.log1p,
    "expm1": np.expm1, "erf": np.vectorize(math.erf, otypes=[np.float64]),
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "pow": np.power, "fmod": np.fmod,
    "likely": lambda x: x,
}  # fmt: skip


def _np_dtype(dtype):
    return np.dtype("bool" if str(dtype) in ("bool", "uint1") else str(dtype))


class _Evaluator:
    def __init__(self, tvm, values, wide):
        self.tvm, self.e, self.wide = tvm, tvm.expr, wide
        self.tensors = {}  # (op's hash, value_index) -> array
        self.placeholders = values  # op's hash -> array

    def compute_dtype(self, dtype):
        """The dtype an expression of `dtype` is computed in."""
        dtype = _np_dtype(dtype)
        return np.dtype("float64") if self.wide and dtype.kind == "f" else dtype

    def as_dtype(self, value, dtype):
        """`value` as its dtype holds it (a float16 constant rounded to float16), then in the compute dtype."""
        return np.asarray(value).astype(_np_dtype(dtype)).astype(self.compute_dtype(dtype))

    def tensor(self, op, index):
        key = (hash(op), index)
        if key not in self.tensors:
            if isinstance(op, self.tvm.tensor.PlaceholderOp):  # widened like every value, as the kernel reads it
                self.tensors[key] = self.as_dtype(self.placeholders[hash(op)], op.dtype)
            elif isinstance(op, self.tvm.tensor.ComputeOp):
                for i in range(len(op.body)):
                    self.tensors[(hash(op), i)] = self.stage(op, i)
            else:
                raise Unsupported(f"a stage of kind {type(op).__name__} (an ir_builder or extern kernel)")
        return self.tensors[key]

    def stage(self, op, index):
        """Output `index` of a compute stage over its whole index space, in chunks of its first axis."""
        axes = list(op.axis)
        shape = [int(a.dom.extent.value) for a in axes]
        body = op.body[index]
        reduced = [int(a.dom.extent.value) for a in body.axis] if isinstance(body, self.e.Reduce) else []
        per_row = max(1, int(np.prod(shape[1:] + reduced, dtype=np.int64)))
        rows = max(1, CHUNK // per_row)
        parts = []
        if not shape:
            return np.asarray(self.value(body, {}, 0)).astype(self.compute_dtype(body.dtype))
        for start in range(0, shape[0], rows):
            stop = min(start + rows, shape[0])
            env = {}
            for n, axis in enumerate(axes):
                lo = int(axis.dom.min.value) + (start if n == 0 else 0)
                size = (stop - start) if n == 0 else shape[n]
                grid = np.arange(lo, lo + size, dtype=np.int64).reshape([-1 if m == n else 1 for m in range(len(axes))])
                env[hash(axis.var)] = grid
            parts.append(np.broadcast_to(self.value(body, env, len(axes)), [stop - start, *shape[1:]]))
        return np.concatenate(parts).astype(self.compute_dtype(body.dtype))

    def reduce(self, node, env, rank):
        """A reduction: its axes as more dims after the stage's, its source masked by its condition and folded."""
        axes = list(node.axis)
        widened = {k: np.asarray(v).reshape(np.shape(v) + (1,) * len(axes)) for k, v in env.items()}
        for n, axis in enumerate(axes):
            lo, extent = int(axis.dom.min.value), int(axis.dom.extent.value)
            shape = [1] * rank + [-1 if m == n else 1 for m in range(len(axes))]
            widened[hash(axis.var)] = np.arange(lo, lo + extent, dtype=np.int64).reshape(shape)
        source = self.value(node.source[node.value_index], widened, rank + len(axes))
        condition = self.value(node.condition, widened, rank + len(axes))
        full = np.broadcast_shapes(np.shape(source), np.shape(condition), *(np.shape(v) for v in widened.values()))
        source, condition = np.broadcast_to(source, full), np.broadcast_to(condition, full)
        combiner = node.combiner
        if len(combiner.result) != 1:
            raise Unsupported("a reduction of several values at once")
        result, lhs, rhs = combiner.result[0], combiner.lhs[0], combiner.rhs[0]
        kind = type(result).__name__
        folds = {"Add": np.add, "Mul": np.multiply, "Max": np.maximum, "Min": np.minimum}
        a, b = getattr(result, "a", None), getattr(result, "b", None)  # a reducer that is Op(x, y) itself
        plain = a is not None and ((a.same_as(lhs) and b.same_as(rhs)) or (a.same_as(rhs) and b.same_as(lhs)))
        if kind not in folds or not plain:
            raise Unsupported(f"a reduction combining by {result}")
        identity = self.value(combiner.identity_element[0], {}, 0)
        folded = np.where(condition, source, identity).astype(self.compute_dtype(node.dtype))
        terms = folded.reshape((*folded.shape[:rank], -1))  # the reduce axes as one, in TVM's loop order
        if self.wide:
            return folds[kind].reduce(terms, axis=rank)
        return folds[kind].accumulate(terms, axis=rank)[..., -1]  # one term after the other, each step rounded

    def value(self, node, env, rank):
        e = self.e
        dtype = node.dtype
        if isinstance(node, (e.IntImm, e.UIntImm, e.FloatImm)):
            return self.as_dtype(node.value, dtype)
        if isinstance(node, e.Var):
            if hash(node) not in env:
                raise Unsupported(f"the variable {node.name} is bound by nothing this evaluator knows")
            return env[hash(node)]
        if isinstance(node, e.Cast):
            inner = self.value(node.value, env, rank)
            target = _np_dtype(dtype)
            with np.errstate(all="ignore"):
                if target.kind == "b":  # TVM's cast to bool is x != 0
                    inner = np.asarray(inner) != 0
                elif target.kind in "iu" and np.asarray(inner).dtype.kind == "f":
                    inner = np.trunc(inner)
                return np.asarray(inner).astype(target).astype(self.compute_dtype(dtype))
        if isinstance(node, e.Reduce):
            return self.reduce(node, env, rank)
        if isinstance(node, e.Select):
            branches = (self.value(x, env, rank) for x in (node.condition, node.true_value, node.false_value))
            return np.where(*branches)
        if isinstance(node, e.Not):
            return np.logical_not(self.value(node.a, env, rank))
        if isinstance(node, e.Let):
            return self.value(node.body, {**env, hash(node.var): self.value(node.value, env, rank)}, rank)
        if isinstance(node, e.Call):
            return self.call(node, env, rank)
        if isinstance(node, (e.BinaryOpExpr, e.CmpExpr, e.LogicalExpr)):
            return self.binary(node, env, rank)
        raise Unsupported(f"an expression of kind {type(node).__name__}")

    def binary(self, node, env, rank):
        e = self.e
        a, b = self.value(node.a, env, rank), self.value(node.b, env, rank)
        integer = _np_dtype(node.a.dtype).kind in "iu"
        divisor = np.where(b == 0, 1, b) if integer else b  # an integer division by 0 traps: the probe refuses it
        with np.errstate(all="ignore"):
            if isinstance(node, e.Add):
                result = a + b
            elif isinstance(node, e.Sub):
                result = a - b
            elif isinstance(node, e.Mul):
                result = a * b
            elif isinstance(node, e.Div):  # integers toward zero (truncdiv), floats exactly
                result = graph_numpy.truncating_divide(a, divisor) if integer else a / b
            elif isinstance(node, e.Mod):
                result = np.fmod(a, divisor)
            elif isinstance(node, e.FloorDiv):
                result = np.floor_divide(a, divisor) if integer else np.floor(a / b)
            elif isinstance(node, e.FloorMod):
                result = np.mod(a, divisor) if integer else a - np.floor(a / b) * b
            elif isinstance(node, e.Min):
                result = np.minimum(a, b)
            elif isinstance(node, e.Max):
                result = np.maximum(a, b)
            elif isinstance(node, e.And):
                return np.logical_and(a, b)
            elif isinstance(node, e.Or):
                return np.logical_or(a, b)
            elif isinstance(node, (e.EQ, e.NE, e.LT, e.LE, e.GT, e.GE)):
                compare = {e.EQ: np.equal, e.NE: np.not_equal, e.LT: np.less, e.LE: np.less_equal,
                           e.GT: np.greater, e.GE: np.greater_equal}[type(node)]  # fmt: skip
                return compare(a, b)
            else:
                raise Unsupported(f"an operator of kind {type(node).__name__}")
            return np.asarray(result).astype(self.compute_dtype(node.dtype))

    def reads_data(self, expr):
        """Whether `expr` reads a tensor (an index the data decides, not the axes)."""
        found = []
        self.tvm.ir_pass.PostOrderVisit(
            expr, lambda n: found.append(n) if isinstance(n, self.e.Call) and n.call_type == HALIDE else None
        )
        return bool(found)

    def call(self, node, env, rank):
        if node.call_type == HALIDE:
            source = self.tensor(node.func, node.value_index)
            index = []
            for axis, arg in enumerate(node.args):
                where = np.asarray(self.value(arg, env, rank)).astype(np.int64)
                clipped = np.clip(where, 0, source.shape[axis] - 1)  # out of range: a branch not taken
                if (clipped != where).any() and self.reads_data(arg):  # the probe bounds only reads of axes
                    raise Unsupported("a read at an index the data decides falls outside its tensor")
                index.append(clipped)
            return source[tuple(np.broadcast_arrays(*index))] if index else source
        name = node.name
        if name == "tvm_if_then_else":
            condition, then, otherwise = (self.value(a, env, rank) for a in node.args)
            return np.where(condition, then, otherwise).astype(self.compute_dtype(node.dtype))
        rule = _INTRINSICS.get(name)
        if rule is None:
            raise Unsupported(f"the intrinsic {name}")
        args = [np.asarray(self.value(a, env, rank)) for a in node.args]
        with np.errstate(all="ignore"):
            result = rule(*[a.astype(np.float64) if a.dtype.kind == "f" else a for a in args])
        return np.asarray(result).astype(self.compute_dtype(node.dtype))


def evaluate(tvm, placeholders, results, values, wide):
    """The kernel's outputs (`results`, tensors of its function called on `placeholders`) for the arrays `values`,
    each in its output dtype; `wide`: floats computed in float64 (see the top of this file)."""
    evaluator = _Evaluator(tvm, {hash(placeholders[i].op): np.asarray(v) for i, v in enumerate(values)}, wide)
    outputs = []
    for tensor in results:
        try:
            out = evaluator.tensor(tensor.op, tensor.value_index)
        except RecursionError:
            raise Unsupported("an expression nested deeper than Python's recursion limit") from None
        with np.errstate(all="ignore"):
            outputs.append(np.asarray(out).astype(_np_dtype(tensor.dtype)))
    return outputs
