"""The op-semantics matrix: every op the numpy reference of fused graphs knows (graph_numpy.py), on every dtype
MindSpore's kernels accept for it, fed edge inputs (negative, zero, tiny, huge, NaN, infinities, halves at
rounding boundaries, integer extremes) and random ones; MindSpore's own single-op kernel (PyNative, no
graph-kernel fusion) against graph_numpy's evaluation of a one-op graph with the dtypes MindSpore's kernel gave.
This is where "what does MindSpore mean by Div on int32" is answered: a rule of graph_numpy agrees with
MindSpore here, or its op and dtype are in graph_numpy.UNSUPPORTED with the reason.

Prints one JSON line per op and dtype (Cast: per source and target dtype): {"op", "dtype", "out", "verdict",
"ulps": the largest error in units of the output dtype's last place, "detail"}; the verdict is "agrees",
"differs", "refused" (by MindSpore) or "unsupported" (by the reference: graph_numpy.UNSUPPORTED_ON). Run as
`python op_matrix.py [device]` under MindSpore's interpreter; needs MindSpore and numpy."""

from __future__ import annotations

import json
import sys

import graph_numpy
import numpy as np

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64"]
# Agreement: within graph_numpy's ulps of the op (units in the last place of the output dtype, at the
# reference's size), or exactly for integers, booleans and specials (infinities). Libraries differ by a few ulps
# on transcendental functions; a rule that misreads an op differs by far more.
SHAPE = (5, 7)  # reductions: over axis 1 and over all axes


def edge_values(dtype: str, rng: np.random.RandomState) -> np.ndarray:
    """The edge inputs of a dtype, then random ones. int64's extremes are +-2**40: MindSpore's int64 FloorDiv,
    FloorMod and ReduceSum go through float64 and are inexact near 2**53."""
    if dtype == "bool":
        return np.array([False, True, True, False])
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        low, high = (-(2**40), 2**40) if dtype == "int64" else (int(info.min), int(info.max))
        edges = [low, low + 1, -7, -3, -2, -1, 0, 1, 2, 3, 7, high - 1, high]
        picked = [v for v in edges if info.min <= v <= info.max]
        return np.array(picked + list(rng.randint(max(info.min, -100), min(info.max, 100), 8)), dtype)
    info = np.finfo(dtype)
    huge, tiny = float(info.max) / 4, float(info.tiny)
    edges = [np.nan, -np.inf, -huge, -2.5, -1.5, -1.0, -0.5, -tiny, -0.0, 0.0, tiny, 0.5, 1.0, 1.5, 2.5, 3.0,
             7.0, huge, np.inf]  # fmt: skip
    # just off an integer and a half, where a floor, a rounding or a cast decides by the last bit
    ties = [np.nextafter(np.array(v, dtype), np.array(t, dtype)) for v, t in ((1, 0), (3, 4), (0.5, 0), (2.5, 3))]
    return np.concatenate([np.array(edges), np.array(ties, np.float64), rng.uniform(-4, 4, 12)]).astype(dtype)


def quotient_ties(dtype: str, rng: np.random.RandomState, count: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Float pairs (a, b) whose exact quotient lies one step of a's dtype under or over an integer: where a
    kernel that rounds the quotient to the dtype before flooring it moves it across (float16: about 1 % of
    random quotients)."""
    b = rng.uniform(0.05, 0.5, count).astype(dtype)
    n = rng.randint(1, 200, count)
    products = (n * b.astype(np.float64)).astype(dtype)
    toward = np.where(np.arange(count) % 2 == 0, 0.0, np.inf).astype(dtype)
    return np.nextafter(products, toward), b


def _desc(name: str, array: np.ndarray) -> dict:
    return {"tensor_name": name, "data_type": str(array.dtype), "shape": list(array.shape), "format": "DefaultFormat"}


def reference(
    name: str, inputs: list[np.ndarray], out: np.ndarray, attrs: dict, operands: list
) -> tuple[np.ndarray, np.ndarray]:
    """graph_numpy's result of the one-op graph `name(inputs)` whose output desc is MindSpore's output, and where
    it is undefined (graph_numpy.undefined: MindSpore's kernel gives what it likes there); a NaN elsewhere is the
    op's result, which MindSpore's must be too."""
    descs = [[_desc(f"input_{i}", a)] for i, a in enumerate(inputs)]
    op_inputs = [*descs, *([{"tensor_name": f"operand_{i}", "data_type": "int64", "shape": [], "value": v}]
                           for i, v in enumerate(operands))]  # fmt: skip
    output = _desc("output_0", out)
    op = {"name": name, "input_desc": op_inputs, "output_desc": [output],
          "attr": [{"name": k, "value": v} for k, v in attrs.items()]}  # fmt: skip
    graph = {"input_desc": descs, "op_desc": [op], "output_desc": [output]}
    (result,) = graph_numpy.evaluate(graph, inputs)
    if out.dtype.kind != "f":
        return result, np.zeros(result.shape, bool)
    with np.errstate(all="ignore"):
        return result, graph_numpy.undefined(op, inputs, [t[0] for t in op_inputs], result.shape)


def _same(g: np.ndarray, w: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Elements that agree exactly (NaN with NaN), or where the reference is undefined (`free`)."""
    return (g == w) | (np.isnan(g) & np.isnan(w)) | free


def ulps(got: np.ndarray, want: np.ndarray, free: np.ndarray, scale: np.ndarray | None = None) -> float:
    """The largest difference outside `free` in units of the last place of the output dtype at the reference's
    size, or at `scale` where larger (a sum of terms that cancel is as exact as its terms' sizes allow), never
    finer than the dtype's smallest normal number (a kernel may flush subnormal results to zero); inf for a
    special value (a NaN where the other is a number included) or an integer or boolean that differs."""
    g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    same = _same(g, w, np.ravel(free))
    if same.all():
        return 0.0
    if got.dtype.kind != "f" or not (np.isfinite(g[~same]).all() and np.isfinite(w[~same]).all()):
        return float("inf")
    size = np.abs(w[~same]) if scale is None else np.maximum(np.abs(w[~same]), np.ravel(scale)[~same])
    spacing = np.spacing(size.astype(got.dtype)).astype(np.float64)
    spacing = np.maximum(spacing, float(np.finfo(got.dtype).tiny))
    return float((np.abs(g[~same] - w[~same]) / spacing).max())


def _first_difference(inputs: list[np.ndarray], got: np.ndarray, want: np.ndarray, free: np.ndarray) -> str:
    g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    index = int(np.argmax(~_same(g, w, np.ravel(free))))
    if got.shape == inputs[0].shape:
        operands = ", ".join(repr(a.ravel()[index].item()) for a in inputs)
        return f"at ({operands}): MindSpore {got.ravel()[index].item()!r}, reference {want.ravel()[index].item()!r}"
    return f"at element {index}: MindSpore {got.ravel()[index].item()!r}, reference {want.ravel()[index].item()!r}"


def judge(name: str, dtype: str, run, inputs: list[np.ndarray], attrs=None, operands=(), scale=None) -> dict:
    """One line of the matrix: MindSpore's kernel `run(*tensors)` against the reference of op `name` (for a
    sum, with the size of its terms: `scale`)."""
    from mindspore import Tensor

    row = {"op": name, "dtype": dtype}
    kinds, reason = graph_numpy.UNSUPPORTED_ON.get(name, ("", ""))
    if inputs[0].dtype.kind in kinds:
        return {**row, "verdict": "unsupported", "detail": reason}
    try:
        with np.errstate(all="ignore"):
            got = run(*[Tensor(a) for a in inputs]).asnumpy()
    except Exception as exc:  # MindSpore refuses a dtype with TypeError, ValueError or RuntimeError
        return {**row, "verdict": "refused", "detail": str(exc).strip().splitlines()[0][:200]}
    row["out"] = str(got.dtype)
    try:
        want, free = reference(name, inputs, got, attrs or {}, list(operands))
    except Exception as exc:
        return {**row, "verdict": "differs", "ulps": None, "detail": f"the reference failed: {exc!r}"[:200]}
    if want.shape != got.shape:
        return {**row, "verdict": "differs", "ulps": None, "detail": f"shape {got.shape} vs {want.shape}"}
    error = ulps(got, want, free, scale)
    row.update(ulps=None if error == float("inf") else round(error, 2))
    if error <= graph_numpy.mindspore_ulps(name, got.dtype):
        return {**row, "verdict": "agrees"}
    return {**row, "verdict": "differs", "detail": _first_difference(inputs, got, want, free)}


def rows():
    import mindspore as ms
    from mindspore import ops

    rng = np.random.RandomState(0)
    values = {dtype: edge_values(dtype, rng) for dtype in DTYPES}
    for name in graph_numpy.UNARY:
        if name == "Cast":
            for source in DTYPES:
                for target in DTYPES:
                    cast = ops.Cast()
                    to = ms.dtype.pytype_to_dtype(np.dtype(target))
                    run = lambda x, to=to, cast=cast: cast(x, to)  # noqa: E731
                    yield judge("Cast", f"{source}->{target}", run, [values[source]])
            continue
        for dtype in DTYPES:  # a primitive that refused a dtype refuses every later one: one each
            yield judge(name, dtype, getattr(ops, name)(), [values[dtype]])
    for name in graph_numpy.BINARY:
        for dtype in DTYPES:
            pairs = [(x, y) for x in values[dtype] for y in values[dtype]]
            if name in graph_numpy.DIVIDING and np.dtype(dtype).kind in "iub":
                pairs = [(x, y) for x, y in pairs if not graph_numpy.traps(x, y, dtype)]
            a, b = (np.array(column, dtype) for column in zip(*pairs, strict=True))
            if np.dtype(dtype).kind == "f":
                near_a, near_b = quotient_ties(dtype, rng)
                a, b = np.concatenate([a, near_a]), np.concatenate([b, near_b])
            scale = (
                graph_numpy.error_scale(name, np.zeros(a.shape), [a, b]) if name in graph_numpy.AT_DIVIDEND else None
            )
            yield judge(name, dtype, getattr(ops, name)(), [a, b], scale=scale)
    yield from shaping_rows(values, rng)

    for name in graph_numpy.REDUCE:
        for dtype in DTYPES:
            pool = values[dtype]
            if pool.dtype.kind in "iu":  # an integer sum past its dtype is undefined: MindSpore's goes through float
                pool = pool[np.abs(pool.astype(np.float64)) <= 100]
            x = np.resize(rng.permutation(pool), SHAPE)
            for axis in ([1], [0, 1]):
                reduce = getattr(ops, name)(keep_dims=False)
                terms = np.abs(x.astype(np.float64)).sum(axis=tuple(axis)) if name == "ReduceSum" else None
                yield judge(name, dtype, lambda t, axis=axis, reduce=reduce: reduce(t, tuple(axis)), [x],
                            {"keep_dims": False}, [axis], terms)  # fmt: skip


def shaping_rows(values: dict[str, np.ndarray], rng: np.random.RandomState):
    """The ops that move, pick or combine elements (graph_numpy.SHAPING), each on every dtype; MatMul and
    BatchMatMul on small integers, whose products and sums every float dtype holds exactly (how close a long
    float sum must be is the error model's question, not the semantics')."""
    from mindspore import ops

    for dtype in DTYPES:
        x = np.resize(rng.permutation(values[dtype]), (2, 3, 4))
        y = np.resize(rng.permutation(values[dtype]), (2, 3, 4))
        flag = np.resize(rng.permutation(values["bool"]), (2, 3, 4))
        yield judge("Transpose", dtype, lambda t: ops.Transpose()(t, (2, 0, 1)), [x], operands=[[2, 0, 1]])
        yield judge("Reshape", dtype, lambda t: ops.Reshape()(t, (4, 6)), [x], operands=[[4, 6]])
        yield judge("BroadcastTo", dtype, lambda t: ops.BroadcastTo((3, 2, 3, 4))(t), [x], operands=[[3, 2, 3, 4]])
        yield judge("ExpandDims", dtype, lambda t: ops.ExpandDims()(t, 1), [x], operands=[1])
        yield judge("Tile", dtype, lambda t: ops.Tile()(t, (1, 2, 1)), [x], operands=[[1, 2, 1]])
        yield judge("Concat", dtype, lambda a, b: ops.Concat(1)((a, b)), [x, y], {"axis": 1})
        yield judge("AddN", dtype, lambda a, b: ops.AddN()((a, b)), [x, y])
        yield judge("Select", dtype, lambda c, a, b: ops.Select()(c, a, b), [flag, x, y])
        small = rng.randint(-4, 5, (2, 3, 4)).astype(dtype)
        other = rng.randint(-4, 5, (2, 3, 4)).astype(dtype)
        for transpose_a, transpose_b in ((False, True), (True, False)):
            flags = {"transpose_a": transpose_a, "transpose_b": transpose_b}
            yield judge("MatMul", dtype, ops.MatMul(transpose_a, transpose_b), [small[0], other[0]], flags)
            yield judge("BatchMatMul", dtype, ops.BatchMatMul(transpose_a, transpose_b), [small, other], flags)


def main(device: str) -> int:
    import mindspore as ms

    ms.set_context(mode=ms.PYNATIVE_MODE, device_target=device, pynative_synchronize=True)
    for row in rows():
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "CPU"))
