"""Run a Hybrid DSL kernel compiled by AKG on CPU (with spec "device": "GPU", on the GPU) through MindSpore
(`ops.Custom(..., func_type="hybrid")`) and compare its outputs with a reference: the same kernel run as
plain Python on the same inputs, or compiled by AKG with another attrs set. Prints the maximum error per
output and one verdict line.

Needs only MindSpore (and numpy). Run by akg-reduce as `python mismatch_run.py spec.json`; a bundle's
repro.py is this file with the spec embedded. Exit codes: 1 wrong result, 0 within tolerance, 2 the
check itself failed (a compile error shows as a traceback)."""

import importlib.util
import json
import os
import sys
import tempfile

import numpy as np

VERDICT = "AKG-REDUCE-CHECK"


def make_inputs(inputs, seed):
    """The same random inputs every run: floats in [-1, 1), integers in [-8, 8], booleans."""
    rng = np.random.RandomState(seed)
    arrays = []
    for spec in inputs:
        shape, dtype = tuple(spec["shape"]), spec["dtype"]
        if dtype == "bool":
            arrays.append(rng.randint(0, 2, shape).astype(bool))
        elif dtype.startswith(("int", "uint")):
            low = 0 if dtype.startswith("uint") else -8
            arrays.append(rng.randint(low, 9, shape).astype(dtype))
        else:
            arrays.append(rng.uniform(-1, 1, shape).astype(dtype))
    return arrays


def load_function(source, name, folder):
    """The kernel as a function of a real module file (MindSpore reads the source back from it)."""
    path = os.path.join(folder, "akg_reduce_kernel.py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location("akg_reduce_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def as_list(result):
    return [np.asarray(r) for r in (result if isinstance(result, (tuple, list)) else (result,))]


def output_types(outputs):
    """Custom's out_shape and out_dtype: one shape and dtype for a single output, tuples of them for several
    (left to MindSpore's own inference, it fails on a kernel that returns a tuple)."""
    import mindspore as ms

    shapes = [tuple(o["shape"]) for o in outputs]
    dtypes = [ms.dtype.pytype_to_dtype(np.dtype(o["dtype"])) for o in outputs]
    if len(outputs) == 1:
        return shapes[0], dtypes[0]
    return tuple(shapes), tuple(dtypes)


def poison_value(dtype):
    """What an output element AKG never wrote reads as: NaN, or the integer type's minimum."""
    if dtype == "bool":
        return True
    if dtype.startswith(("int", "uint")):
        return int(np.iinfo(dtype).min)
    return float("nan")


def poison(outputs):
    """Leave poison where MindSpore will put the kernel's outputs: tensors of their shapes and dtypes,
    computed by MindSpore and freed, so its memory pool hands their blocks to the outputs. Without this an
    element the kernel never writes reads as whatever the pool held: zero in a new process (where a
    reference of zeros then matches), a value of an earlier kernel in a process that ran one."""
    import mindspore as ms
    from mindspore import ops

    held = [
        ops.full(tuple(o["shape"]), poison_value(o["dtype"]), dtype=ms.dtype.pytype_to_dtype(np.dtype(o["dtype"])))
        for o in outputs
    ]
    for tensor in held:
        tensor.asnumpy()  # computed now, not when the kernel runs


def run(spec, folder):
    import mindspore as ms
    from mindspore import Tensor, ops
    from mindspore.ops import kernel

    ms.set_context(mode=ms.PYNATIVE_MODE, device_target=spec.get("device", "CPU"))
    function = load_function(spec["source"], spec["function"], folder)
    arrays = make_inputs(spec["inputs"], spec.get("seed", 0))
    out_shape, out_dtype = output_types(spec["outputs"])

    def on_akg(attrs):
        custom = ops.Custom(kernel(function, compile_attrs=attrs), out_shape, out_dtype, func_type="hybrid")
        poison(spec["outputs"])
        result = custom(*[Tensor(a) for a in arrays])
        return [r.asnumpy() for r in (result if isinstance(result, (tuple, list)) else [result])]

    got = on_akg(spec.get("attrs", {}))
    against = spec.get("against")
    want = on_akg(against) if against is not None else as_list(kernel(function)(*[a.copy() for a in arrays]))
    return got, want


def compare(got, want, tolerance):
    """(index of the worst output, its max abs error, whether every output is within tolerance)."""
    worst, worst_error, within = 0, 0.0, True
    if len(got) != len(want):  # zip(strict=True) needs Python 3.10; this file runs on the case's 3.9+
        print(f"{len(got)} outputs from AKG, {len(want)} from the reference")
        return min(len(got), len(want)), float("inf"), False
    for index in range(len(got)):
        g, w = got[index].astype(np.float64), want[index].astype(np.float64)
        if g.shape != w.shape:
            return index, float("inf"), False
        error = np.abs(g - w)
        error[np.isnan(g) != np.isnan(w)] = np.inf
        error[np.isnan(g) & np.isnan(w)] = 0.0
        bad = error > tolerance * (1 + np.abs(np.nan_to_num(w)))
        largest = float(error.max()) if error.size else 0.0
        print(f"output {index}: max abs error {largest:.6g} ({int(bad.sum())} of {error.size} elements off)")
        if bad.any():
            within = False
        if largest > worst_error:
            worst, worst_error = index, largest
    return worst, worst_error, within


def check(spec, folder):
    """Run the check with its files in `folder`; the exit code (see the top of this file)."""
    try:  # exit 1 says "the bug reproduces": nothing but a real comparison may end with it
        got, want = run(spec, folder)
        worst, error, within = compare(got, want, spec["tolerance"])
    except Exception:
        import traceback

        traceback.print_exc()
        print("The check could not run (a compile or run error above).")
        return 2
    reference = "AKG with attrs " + json.dumps(spec["against"]) if spec.get("against") is not None else "Python"
    if within:
        print(f"{VERDICT} match: every output within tolerance {spec['tolerance']:g} of the {reference} reference")
        return 0
    print(
        f"{VERDICT} mismatch: output {worst} max error {error:.6g} above tolerance {spec['tolerance']:g}"
        f" against the {reference} reference"
    )
    print("The bug reproduces: AKG computes a wrong result.")
    return 1


def main(spec):
    with tempfile.TemporaryDirectory(prefix="akg-reduce-check-") as folder:
        return check(spec, folder)


if __name__ == "__main__":
    with open(sys.argv[1]) as fh:
        sys.exit(main(json.load(fh)))
