"""The wrong-result check: a kernel compiled by AKG, run on random inputs (its outputs poisoned first) and
compared with a reference. Prints the maximum error per output, the worst elements and one verdict line.

- A Hybrid DSL kernel runs on the spec's "device" (MindSpore's device_target) through MindSpore
  (`ops.Custom(..., func_type="hybrid")`); its reference is the same kernel run as plain Python.
- A fused graph, and a TeLang or ir_builder kernel (its Custom op's .info), is built by MindSpore's AKG
  (`akg.composite.build`, as its own composite tests do) and run through AKG's tvm CPU runtime (with the spec's
  "build" of AKG). A graph's reference is a numpy evaluation of its ops (graph_numpy.py beside this file,
  independent of AKG's op_dsl); a TeLang kernel's is its compute definition evaluated in numpy (telang_numpy.py
  beside this file), an ir_builder kernel's the same function built by plain TVM for the CPU, none of AKG's
  passes (telang_plain.py beside it).
Either is compared instead with the same kernel compiled by AKG with another attrs set when the spec says
"against".

Needs only MindSpore (and numpy), and wire.py beside it (a bundle's repro.py registers its copy). Run by
akg-reduce as `python mismatch_run.py spec.json`; a bundle's repro.py is this file with the spec embedded. Exit
codes: 1 wrong result, 0 within tolerance, 3 not checked (some output's reference is undefined at more than half
its elements: inputs outside an op's domain), 4 AKG raised (a compile or run error, its traceback above), 2 the
check itself failed (its reference raised, or our harness; no verdict on AKG). Every verdict says how many
elements it compared; a wire.Record line as each stage begins and one at the end say how far it got and whose
code raised."""

import ctypes
import dataclasses
import importlib.util
import json
import os
import sys
import tempfile

import numpy as np

VERDICT = "AKG-REDUCE-CHECK"
DETAIL = "AKG-REDUCE-DETAIL"  # one JSON line: the worst output's elements, for the bundle
# |akg - reference| <= tolerance * (1 + |reference|), by the output's dtype unless the spec gives one
TOLERANCE = {"float16": 5e-3, "bfloat16": 2e-2, "float32": 1e-3, "float64": 1e-3}
SHOWN = 5  # wrong elements shown
# A wrong result whose every wrong element is off by at most this share of (1 + |expected|) is imprecise (an
# approximate exp, a float32 op computed in float16), not wrong in its values.
PRECISION = 1e-2
# An output whose reference is defined at fewer than this share of its elements is not checked: what was
# compared says too little of what the kernel computes.
MIN_COMPARED = 0.5
GUARD = 1024  # poison elements after each tensor of a graph (at least as many as it has)
PASSED, WRONG, FAILED, NOT_CHECKED, AKG_RAISED = 0, 1, 2, 3, 4  # the exit codes


class Progress:
    """The stage a check is in, said (a wire.Record line, flushed) as each begins: a check killed at its limit
    or dead of a signal leaves its last."""

    def __init__(self, against):
        import wire

        self.record = wire.Record(wire.SETUP, against)
        self.say()

    def begin(self, stage):
        self.record = dataclasses.replace(self.record, stage=stage)
        self.say()

    def end(self, **fields):
        self.record = dataclasses.replace(self.record, **fields)
        self.say()

    def say(self):
        print(self.record.line(), flush=True)


def _bounds(spec, low, high):
    """Where to draw an input: the default [low, high] within the input's domain (its spec's "low", "high"),
    or a unit range at the domain's edge when the default misses it."""
    floor, ceiling = spec.get("low", -np.inf), spec.get("high", np.inf)
    lo, hi = max(low, floor), min(high, ceiling)
    if lo < hi:
        return lo, hi
    if floor > low:
        return floor, min(ceiling, floor + (high - low) / 2)
    return max(floor, ceiling - (high - low) / 2), ceiling


def _draw_float(rng, spec, shape):
    lo, hi = _bounds(spec, -1.0, 1.0)
    if not spec.get("nonzero") or not lo <= 0 <= hi:
        return rng.uniform(lo, hi, shape)
    gap = (hi - lo) / 8  # non-zero: away from 0 by an eighth of the range, on either side it allows
    below, above = max(0.0, -gap - lo), max(0.0, hi - gap)
    x = rng.uniform(0, below + above, shape)
    return np.where(x < below, lo + x, gap + (x - below))


def _draw_int(rng, spec, shape, dtype):
    lo, hi = _bounds(spec, 0 if dtype.startswith("uint") else -8, 8)
    lo, hi = int(np.ceil(lo)), int(np.floor(hi))
    x = rng.randint(lo, hi + 1, shape)
    if spec.get("nonzero"):
        x = np.where(x == 0, hi if hi != 0 else lo, x)
    return x


def make_inputs(inputs, seed):
    """The same random inputs every run: floats in [-1, 1), integers in [-8, 8], booleans; each within its
    domain where its spec gives one ("low", "high", "nonzero": where every op reading it is defined)."""
    rng = np.random.RandomState(seed)
    arrays = []
    for spec in inputs:
        shape, dtype = tuple(spec["shape"]), spec["dtype"]
        if dtype == "bool":
            arrays.append(rng.randint(0, 2, shape).astype(bool))
        elif dtype.startswith(("int", "uint")):
            arrays.append(_draw_int(rng, spec, shape, dtype).astype(dtype))
        else:
            arrays.append(_draw_float(rng, spec, shape).astype(dtype))
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


def run_hybrid(spec, folder, progress):
    import mindspore as ms
    from mindspore import Tensor, ops
    from mindspore.ops import kernel

    ms.set_context(mode=ms.PYNATIVE_MODE, device_target=spec["device"])
    function = load_function(spec["source"], spec["function"], folder)
    arrays = make_inputs(spec["inputs"], spec.get("seed", 0))
    out_shape, out_dtype = output_types(spec["outputs"])

    def on_akg(attrs):
        custom = ops.Custom(kernel(function, compile_attrs=attrs), out_shape, out_dtype, func_type="hybrid")
        poison(spec["outputs"])
        result = custom(*[Tensor(a) for a in arrays])
        return [r.asnumpy() for r in (result if isinstance(result, (tuple, list)) else [result])]

    progress.begin("akg")
    got = on_akg(spec.get("attrs", {}))
    against = spec.get("against")
    if against is not None:
        return got, Reference(on_akg(against)), []
    progress.begin("reference")
    return got, Reference(as_list(kernel(function)(*[a.copy() for a in arrays]))), []


class Reference:
    """What AKG's results are compared with: per output, the reference's values (`want`), and how far a right
    result may lie from them beyond the output's tolerance: the error model's `bounds` (which replace the
    tolerance), or a `slack` added to it (how far the reference computed at the kernel's own precision lies
    from the one computed wider). None: the tolerance alone. `name`: what computed it, when not what the spec
    asked for (a fallback)."""

    def __init__(self, want, bounds=None, slack=None, name=""):
        self.want, self.bounds, self.slack, self.name = want, bounds, slack, name


def graph_reference(akg, spec, arrays):
    """The numpy evaluation of a fused graph with its error bounds: graph_bounds.py and the graph_numpy.py it
    reads, beside this file (a repro.py registers its copies)."""
    import graph_bounds

    return Reference(*graph_bounds.evaluate(spec["info"], arrays))


def telang_reference(akg, spec, arrays):
    """The TeLang or ir_builder function built by plain TVM for the CPU (telang_plain.py beside this file), run on
    the inputs widened (float16 to float32, float32 to float64) and as they are. The wide run is the reference;
    twice the distance of the other from it is the slack: the rounding a right result at the kernel's own
    precision may carry (a long float16 sum in order is off by more than float16's tolerance). A function that
    fixes its own dtypes (a cast, a typed constant) may not run widened: then the run as it is, with no slack."""
    import telang_plain

    def plain(values):
        function = (spec["source"], spec["function"], spec["func_type"])
        return telang_plain.run_plain(akg.tvm, *function, spec.get("op_attrs", {}), values, spec["run_target"])

    declared = plain([a.copy() for a in arrays])
    wide = [a.astype(WIDER.get(str(a.dtype), a.dtype)) for a in arrays]
    if [w.dtype for w in wide] == [a.dtype for a in arrays]:
        return Reference(declared, name="plain TVM")
    try:
        widened = plain(wide)
    except Exception:
        return Reference(declared, name="plain TVM")
    if [w.shape for w in widened] != [d.shape for d in declared]:
        return Reference(declared, name="plain TVM")
    return Reference(widened, slack=_slack(declared, widened), name="plain TVM")


def telang_numpy_reference(akg, spec, arrays):
    """A TeLang kernel's results computed in numpy from its compute definition (telang_numpy.py beside this file:
    no lowering, no code generation, nothing AKG's passes share), every float in float64 but where the kernel
    casts; the same evaluation with each op rounded to its declared dtype gives the slack, as for plain TVM. A
    kernel numpy has no rule for (an intrinsic it does not know) is built by plain TVM instead, named so."""
    import telang_numpy
    import telang_plain

    function = (spec["source"], spec["function"], spec["func_type"])
    shapes = [(a.shape, str(a.dtype)) for a in arrays]
    placeholders, results = telang_plain.called(akg.tvm, *function, shapes, spec.get("op_attrs", {}))
    try:
        wide = telang_numpy.evaluate(akg.tvm, placeholders, results, arrays, wide=True)
        declared = telang_numpy.evaluate(akg.tvm, placeholders, results, arrays, wide=False)
    except telang_numpy.Unsupported as exc:
        print(f"numpy cannot evaluate the kernel ({exc}): plain TVM's build is the reference")
        return telang_reference(akg, spec, arrays)
    return Reference(wide, slack=_slack(declared, wide))


def _slack(declared, wide):
    gaps = [np.abs(declared[i].astype(np.float64) - wide[i].astype(np.float64)) for i in range(len(declared))]
    return [run_apart(gap) for gap in gaps]


def run_apart(gap):
    """The slack of a TeLang output whose run at its own dtypes lies `gap` from the widened run: twice the gap;
    where the gap is not a number (NaN in one run only: the kernel's own dtype overflowed into inf - inf) or inf
    (it overflowed where the wide run did not), any result is right there: not compared."""
    return np.where(np.isfinite(gap), 2 * gap, np.inf)


WIDER = {"float16": "float32", "float32": "float64"}
# The spec's "reference", and its name in the verdict line (else Python).
REFERENCES = {"graph_numpy": graph_reference, "telang_numpy": telang_numpy_reference, "telang_plain": telang_reference}
REFERENCE_NAMES = {"graph_numpy": "numpy", "telang_numpy": "numpy", "telang_plain": "plain TVM"}


def composite_akg(build):
    """MindSpore's AKG with its `build` (wire.import_akg: unless TVM_LIBRARY_PATH names another) and what
    builds an .info."""
    import wire

    wire.import_akg(build)
    import akg.composite

    return akg


def read_guard_value(dtype):
    """What an input's guard holds: a read past the input's end shows as this value where it lands, unlike
    the outputs' poison (a kernel copying past an input's end into past an output's end is seen)."""
    if dtype == "bool":
        return False
    if dtype.startswith(("int", "uint")):
        return int(np.iinfo(dtype).max)
    return -4096.0


class GuardedArray:
    """A tensor handed to a graph's kernel with a guard after it, as many elements again (at least GUARD), all
    `fill`: AKG's CPU kernels take raw pointers, and a write past the end corrupts tvm's heap (an abort, or
    nothing) where MindSpore's memory pool would hide it; here it lands in the guard and is seen. The kernel
    is shown the tensor's shape; `read` gives back the tensor and its guard."""

    def __init__(self, akg, array, context, fill):
        self.array = array
        self.fill = fill
        guard = np.full(max(array.size, GUARD), fill, array.dtype)
        self.nd = akg.tvm.nd.array(np.concatenate([array.ravel(), guard]), context)
        fields = self.nd.handle.contents
        self._flat = (fields.ndim, ctypes.cast(fields.shape, ctypes.c_void_p).value)
        self._shape = (ctypes.c_int64 * array.ndim)(*array.shape)  # kept alive: the handle points into it
        fields.ndim, fields.shape = array.ndim, ctypes.cast(self._shape, type(fields.shape))

    def read(self):
        """(the tensor as the kernel left it, its guard)."""
        fields = self.nd.handle.contents
        fields.ndim, fields.shape = self._flat[0], ctypes.cast(self._flat[1], type(fields.shape))
        whole = self.nd.asnumpy()
        return whole[: self.array.size].reshape(self.array.shape), whole[self.array.size :]


def changed(before, after):
    """How many elements differ (NaN equal to NaN)."""
    before, after = np.asarray(before, np.float64), np.asarray(after, np.float64)
    return int(np.count_nonzero((before != after) & ~(np.isnan(before) & np.isnan(after))))


def refuse_trapping_inputs(graph, arrays):
    """Raise (while the check sets up: the check's failure, never AKG's) when the drawn inputs make an integer
    division of the graph trap (by 0, or the minimum by -1): AKG's kernel would die of SIGFPE on inputs outside
    the graph's domain, which graph_domains.py leaves to chance where no rule carries a need."""
    import graph_numpy

    found = []

    def watch(op, data, result):
        if op["name"] in graph_numpy.DIVIDING and len(data) == 2 and data[1].dtype.kind in "iu":
            a, b = np.broadcast_arrays(data[0], data[1])
            traps = b == 0
            if b.dtype.kind == "i":
                traps |= (b == -1) & (a == np.iinfo(b.dtype).min)
            if traps.any():
                found.append(f"{op['name']} at {int(traps.sum())} elements")

    graph_numpy.evaluate(graph, arrays, watch)
    if found:
        raise ValueError(f"the drawn inputs make an integer division trap ({', '.join(found)}): no verdict on them")


def run_built(spec, folder, progress):
    """The spec's .info (a fused graph, or a Custom op's) built by AKG and run through tvm's CPU runtime (its
    arguments: the inputs, then the outputs, in desc order), each tensor guarded; a write past an output's end
    or into an input is a wrong result too."""
    akg = composite_akg(spec["build"])
    info = spec["info"]
    arrays = make_inputs(spec["inputs"], spec.get("seed", 0))
    problems = []

    def on_akg(attrs):
        here = os.getcwd()
        os.chdir(folder)  # AKG writes the kernel's files (akg_kernel_meta/, its logs) where it runs
        try:
            module = akg.composite.build(json.dumps(info), dict(attrs), poly=True)
        finally:
            os.chdir(here)
        context = akg.tvm.cpu(0)
        outputs = [np.full(o["shape"], poison_value(o["dtype"]), o["dtype"]) for o in spec["outputs"]]
        guarded = [GuardedArray(akg, a, context, read_guard_value(str(a.dtype))) for a in arrays]
        guarded += [GuardedArray(akg, a, context, poison_value(str(a.dtype))) for a in outputs]
        module(*[g.nd for g in guarded])
        results = []
        for index, tensor in enumerate(guarded):
            kept, guard = tensor.read()
            output = index - len(arrays)
            past = changed(np.full_like(guard, tensor.fill), guard)
            if output >= 0:
                results.append(kept)
                if past:
                    problems.append(f"output {output}: {past} elements written past its end")
            else:
                inside = changed(tensor.array, kept)
                if inside or past:
                    problems.append(f"input {index}: {inside + past} elements overwritten")
        return results

    if spec["kernel"] == "graph":  # a Custom op's .info has no ops graph_numpy knows
        refuse_trapping_inputs(info, arrays)
    progress.begin("akg")
    got = on_akg(spec.get("attrs", {}))
    against = spec.get("against")
    if against is not None:
        return got, Reference(on_akg(against)), problems
    progress.begin("reference")
    return got, REFERENCES[spec["reference"]](akg, spec, arrays), problems


def run(spec, folder, progress):
    """(what AKG computed, one array per output; the Reference it is compared with; what else the kernel did
    wrong), each stage said to `progress` as it begins."""
    return (run_hybrid if spec["kernel"] == "hybrid" else run_built)(spec, folder, progress)


def against_name(spec):
    """What AKG's result is compared with, as the verdict says it."""
    if spec.get("against") is not None:
        return "AKG with attrs " + json.dumps(spec["against"])
    return REFERENCE_NAMES.get(spec.get("reference"), "Python")


# The check's own files (this one and what it loads beside it): an exception raised in them is our code's.
OWN_FILES = ("mismatch_run.py", "wire.py", "graph_numpy.py", "graph_bounds.py", "telang_plain.py", "repro.py")


def _innermost_owner(exc):
    """Whose code the innermost frame of `exc` that is ours or MindSpore's (AKG ships inside it) belongs to:
    "harness", "akg", or None when no frame is either (numpy's or the standard library's all the way)."""
    frames = []
    trace = exc.__traceback__
    while trace is not None:
        frames.append(trace.tb_frame.f_code.co_filename)
        trace = trace.tb_next
    for filename in reversed(frames):
        if os.path.basename(filename) in OWN_FILES:
            return "harness"
        if "mindspore" in filename.split(os.sep):
            return "akg"
    return None


def raised_by(stage, exc):
    """Whose code raised `exc` in `stage`: a missing module is the environment's wherever it is imported, and so
    is a library that cannot be loaded while the check sets up (AKG's libakg.so and what it links); while AKG
    builds and runs the kernel, our own code (poisoning its outputs, reading them back) raising is ours."""
    import wire

    if isinstance(exc, ImportError) or (stage == wire.SETUP and isinstance(exc, OSError)):
        return "environment"
    who = wire.RUNS_IN.get(stage, "harness")
    if who == "akg" and _innermost_owner(exc) == "harness":
        return "harness"
    return who


def tolerances(spec):
    """Each output's tolerance: the spec's, else its dtype's (integers and booleans exactly)."""
    given = spec.get("tolerance")
    return [given if given is not None else TOLERANCE.get(o["dtype"], 0.0) for o in spec["outputs"]]


def allowances(spec, reference):
    """How far each element of each output may lie from the reference (inf: not compared): the error model's
    bound (graph_bounds.py, for a graph's numpy reference, unless the spec sets a tolerance), else tolerance *
    (1 + |reference|), plus the reference's slack. A float output may also be off by its dtype's smallest
    normal number (a kernel may flush subnormals to zero)."""
    want, bounds = reference.want, reference.bounds
    if bounds is None or spec.get("tolerance") is not None:
        limits = tolerances(spec)
        slack = reference.slack or [0.0] * len(limits)
        return [
            limits[i] * (1 + np.abs(np.nan_to_num(np.asarray(w, np.float64)))) + slack[i]
            for i, w in enumerate(want[: len(limits)])
        ]
    allowed = []
    for i, output in enumerate(spec["outputs"]):
        dtype, reference = np.dtype(output["dtype"]), np.abs(np.asarray(want[i], np.float64))
        # Where a right result may lie as far from the reference as the reference is from 0 (a comparison of
        # operands equal within their errors, a long float16 sum), the reference says too little: not compared.
        loose = (bounds[i] > 0) & (bounds[i] >= reference)
        allowed.append(np.where(loose, np.inf, bounds[i] + (float(np.finfo(dtype).tiny) if dtype.kind == "f" else 0)))
    return allowed


def wrong_elements(got, want, bad):
    """The first wrong elements of one output: index, expected, actual."""
    return [
        {"index": index, "expected": want[tuple(index)].item(), "actual": got[tuple(index)].item()}
        for index in np.argwhere(bad)[:SHOWN].tolist()
    ]


def compare(got, want, allowed):
    """(whether every output is within what is allowed, the worst output: its index, max abs error, wrong,
    unwritten and all elements, and its first wrong elements). `allowed`: per output, how far each element may
    lie from the reference (inf: anywhere). The worst output is the one with most wrong elements, then the
    largest error."""
    if len(got) != len(want):  # zip(strict=True) needs Python 3.10; this file runs on the case's 3.9+
        print(f"{len(got)} outputs from AKG, {len(want)} from the reference")
        return False, {"output": min(len(got), len(want)), "max_error": float("inf"), "tolerance": 0.0, "elements": []}
    within, worst = True, {"output": 0, "max_error": 0.0, "wrong": -1, "elements": []}
    for index in range(len(got)):
        g, w = np.asarray(got[index]).astype(np.float64), np.asarray(want[index]).astype(np.float64)
        if g.shape != w.shape:
            print(f"output {index}: shape {list(g.shape)} from AKG, {list(w.shape)} from the reference")
            return False, {"output": index, "max_error": float("inf"), "tolerance": 0.0, "elements": []}
        limit = np.broadcast_to(np.asarray(allowed[index], np.float64), w.shape)
        with np.errstate(invalid="ignore"):
            error = np.abs(g - w)
        error[g == w] = 0.0  # infinities included
        error[np.isnan(error)] = np.inf  # opposite infinities, or NaN from AKG only (never written)
        # Where the reference is NaN the result is undefined (an op's input outside its domain: the square
        # root of a random negative), and ops differ on NaN (numpy's maximum keeps it, LLVM's drops it).
        undefined = np.isnan(w) | np.isinf(limit)
        error[undefined] = 0.0
        bad = error > limit
        largest = float(error.max()) if error.size else 0.0
        wrong, unwritten, skipped = (
            int(bad.sum()),
            int(np.count_nonzero(np.isnan(g) & ~undefined)),
            int(undefined.sum()),
        )
        compared = int(error.size) - skipped
        with np.errstate(divide="ignore", invalid="ignore"):  # a limit of 0: exact, any error is all of it
            share = np.where(limit > 0, error / limit, np.where(error > 0, np.inf, 0.0))
        used = float(share[~undefined].max()) if compared else 0.0
        print(f"output {index}: max abs error {largest:.6g} ({wrong} of {compared} compared elements off, {unwritten}"
              f" never written, {skipped} of {error.size} not compared; the worst is {used:.1%} of what it is"
              " allowed)")  # fmt: skip
        within = within and not wrong
        worst["compared"] = worst.get("compared", 0) + compared
        if error.size and compared < error.size * MIN_COMPARED:
            worst["unchecked"] = [*worst.get("unchecked", []), f"{index} ({compared} of {error.size})"]
        worst["any_unwritten"] = worst.get("any_unwritten", 0) + unwritten
        if wrong:
            with np.errstate(invalid="ignore"):  # an infinite reference: inf / inf
                relative = float(np.nan_to_num(error[bad] / (1 + np.abs(w[bad])), nan=np.inf).max())
            worst["worst_relative"] = max(worst.get("worst_relative", 0.0), relative)
        if (wrong, largest) > (worst["wrong"], worst["max_error"]):
            at = np.unravel_index(int(np.argmax(np.where(bad, error, -1.0) if wrong else error)), error.shape)
            worst = {**worst, "output": index, "max_error": largest, "wrong": wrong, "unwritten": unwritten,
                     "undefined": skipped, "size": int(error.size), "tolerance": float(limit[at])}  # fmt: skip
            worst["elements"] = wrong_elements(g, w, bad)
    return within, worst


def wrong_kind(worst, problems):
    """What kind of wrong, one word (compile/identity.py keeps it through a reduction): "nan" (NaN where
    the reference has a number: never written, or computed as NaN), "outside" (writes past an output or into
    an input), "precision" (every wrong element off by at most PRECISION relative), else "values"."""
    if worst.get("any_unwritten"):
        return "nan"
    if problems:
        return "outside"
    if worst.get("worst_relative", float("inf")) <= PRECISION:
        return "precision"
    return "values"


def check(spec, folder):
    """Run the check with its files in `folder`; the exit code (see the top of this file)."""
    reference = against_name(spec)
    progress = Progress(reference)
    try:  # exit 1 says "the bug reproduces": nothing but a real comparison may end with it
        got, expected, problems = run(spec, folder, progress)
        reference = expected.name or reference  # a fallback says what it is
        progress.begin("compare")
        within, worst = compare(got, expected.want, allowances(spec, expected))
        for problem in problems:
            print(problem)
    except Exception as exc:
        import traceback

        traceback.print_exc()
        who = raised_by(progress.record.stage, exc)
        progress.end(raised_by=who, trace=f"{type(exc).__name__}: {exc}".splitlines()[0], read_by="python")
        if who == "akg":
            print("AKG fails to compile or run the kernel (the error above).")
            return AKG_RAISED
        print(f"The check could not run: {'its ' + reference + ' reference' if who == 'reference' else who} failed.")
        return FAILED
    progress.end(compared=worst.get("compared", 0), done=True)
    if within and not problems and worst.get("unchecked"):
        outputs = ", ".join(map(str, worst["unchecked"]))
        print(
            f"{VERDICT} unchecked: output {outputs} elements compared, under {MIN_COMPARED:.0%}"
            f" (the {reference} reference is undefined, or says too little, at the rest)"
        )
        return NOT_CHECKED
    if within and not problems:
        compared = f"{worst.get('compared', 0)} elements compared"
        print(f"{VERDICT} match: every output within tolerance of the {reference} reference ({compared})")
        return PASSED
    for element in worst["elements"]:
        print(f"  at {element['index']}: expected {element['expected']:.6g}, AKG gives {element['actual']:.6g}")
    identity = {"wrong_kind": wrong_kind(worst, problems), "ops": spec.get("ops", "")}
    print(DETAIL, json.dumps({**worst, "problems": problems, **identity}))
    wrong = (
        f"output {worst['output']} max error {worst['max_error']:.6g} above tolerance {worst['tolerance']:g}"
        f" ({worst.get('compared', 0)} elements compared)"
    )
    print(f"{VERDICT} mismatch: {problems[0] if within else wrong} against the {reference} reference")
    print("The bug reproduces: AKG computes a wrong result.")
    return WRONG


def main(spec):
    with tempfile.TemporaryDirectory(prefix="akg-reduce-check-") as folder:
        return check(spec, folder)


if __name__ == "__main__":
    with open(sys.argv[1]) as fh:
        sys.exit(main(json.load(fh)))
