"""The check of a dispatch plan of `reduce shapes`, run under MindSpore on the CPU: `python dispatch_check.py
spec.json dispatch.py`. Every call of the spec runs through the plan's `dispatch(op, *inputs)`, with `op` the
user's kernel as a Custom op (func_type "hybrid" or "akg"), on the same seeded inputs as the wrong-result check;
its results are compared with the kernel's reference: a Hybrid DSL kernel run as Python, a TeLang kernel's
compute definition evaluated in numpy (the spec's "reference", as in the wrong-result check), every call, so
that "the same results" is never AKG's build compared with itself. One JSON line per call, as it finishes (a
call that kills the process leaves the lines of the calls before it): {"line", "compared_with", "max_error",
"same"}."""

import importlib.util
import json
import os
import sys
import tempfile

import numpy as np
from mismatch_run import (
    REFERENCE_NAMES,
    REFERENCES,
    Reference,
    allowances,
    as_list,
    composite_akg,
    load_function,
    make_inputs,
    output_types,
)


def _plan(path):
    spec = importlib.util.spec_from_file_location("akg_reduce_dispatch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compared(got, reference, outputs):
    """(same, max error): every output of the plan within what the wrong-result check allows of it."""
    want = reference.want
    if len(got) != len(want) or any(g.shape != w.shape for g, w in zip(got, want, strict=True)):
        return False, None
    worst, same = 0.0, True
    allowed = allowances({"outputs": [{"shape": s, "dtype": d} for s, d in outputs]}, reference)
    for g, w, limit in zip(got, want, allowed, strict=True):
        g, w = g.astype(np.float64), w.astype(np.float64)
        error = np.abs(g - w)
        if error.size:
            worst = max(worst, float(np.nanmax(error)))
        same = same and bool(np.all((error <= limit) | (np.isnan(g) & np.isnan(w))))
    return same, worst


def _reg_info(spec, inputs, outputs):
    """The Custom op's reg_info: its inputs, outputs and dtypes, and its own attrs, which reach the kernel's
    function only when registered."""
    from mindspore.ops import CustomRegOp, DataType

    info = CustomRegOp()
    for i in range(inputs):
        info = info.input(i, f"input_{i}")
    for i in range(outputs):
        info = info.output(i, f"output_{i}")
    info = info.dtype_format(*[getattr(DataType, name) for name in spec["dtype_formats"]])
    for name, data_type, value in spec["reg_attrs"]:
        info = info.attr(name, "required", data_type, value=value)
    return info.target("CPU").get_op_info()


def main(spec_path, plan_path):
    import mindspore as ms
    from mindspore import Tensor, ops
    from mindspore.ops import kernel

    with open(spec_path) as fh:
        spec = json.load(fh)
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    plan = _plan(plan_path)
    folder = tempfile.mkdtemp(prefix="akg-reduce-dispatch-")
    function = load_function(spec["source"], spec["function"], folder)
    outputs = {json.dumps(shapes): outs for shapes, outs in spec["outputs"]}
    custom_type = spec["custom_func_type"]

    def op(*tensors):
        outs = outputs[json.dumps([list(t.shape) for t in tensors])]
        out_shape, out_dtype = output_types([{"shape": s, "dtype": d} for s, d in outs])
        # MindSpore compiles a function of func_type "hybrid" only through its ms_kernel decorator.
        func = kernel(function, compile_attrs=spec["attrs"]) if custom_type == "hybrid" else function
        registered = {"reg_info": _reg_info(spec, len(tensors), len(outs))} if spec["reg_attrs"] else {}
        custom = ops.Custom(func, out_shape, out_dtype, func_type=custom_type, **registered)
        for name, _, value in spec["reg_attrs"]:  # reg_info names an attr, add_prim_attr gives its value
            custom.add_prim_attr(name, value)
        if custom_type != "hybrid" and spec["attrs"]:  # AKG reads the build attrs from this attr of any op
            custom.add_prim_attr("func_compile_attrs", json.dumps(spec["attrs"]))
        return custom(*tensors)

    def reference(arrays):
        if spec["reference"] in REFERENCES:
            run = REFERENCES[spec["reference"]](composite_akg(spec["build"]), spec, arrays)
            return run, f"its {run.name or REFERENCE_NAMES[spec['reference']]} reference"
        return Reference(as_list(kernel(function)(*[a.copy() for a in arrays]))), "the kernel run as Python"

    for call in spec["calls"]:
        arrays = make_inputs([{"shape": s, "dtype": d} for s, d in call["inputs"]], 0)
        got = as_list(plan.dispatch(op, *[Tensor(a) for a in arrays]))
        want, against = reference(arrays)
        same, worst = _compared(got, want, call["outputs"])
        print(
            json.dumps({"line": call["line"], "compared_with": against, "max_error": worst, "same": same}), flush=True
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], os.path.abspath(sys.argv[2])))
