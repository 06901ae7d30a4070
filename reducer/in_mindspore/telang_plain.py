"""A TeLang or ir_builder function called as AKG's composite/topi.py `custom()` calls it (the source made a
module, `tvm` put in the function's globals, the function called on one placeholder per input, or an
ir_builder function on the list of them and the op's attrs), and run as plain TVM builds it for the CPU: its
default schedule, LLVM, none of AKG's passes. Shared by the TeLang probe (telang_probe.py, which evaluates the
function) and the wrong-result check (mismatch_run.py, whose reference of a TeLang kernel the plain run is).
Needs only the `tvm` it is handed (AKG's) and numpy; a bundle's repro.py carries a copy."""

import os
import sys
import tempfile

import numpy as np


class Invalid(Exception):
    """The function is not a TeLang kernel AKG can lower."""


def called(tvm, source, function, func_type, inputs, op_attrs, stages=None):
    """The function called on placeholders of `inputs` ([(shape, dtype), ...]), as AKG calls it:
    (placeholders, output tensors); its local tensors when it returned go to `stages`."""
    module = {"__name__": function}
    exec(compile(source, f"<kernel {function}>", "exec"), module)
    func = module.get(function)
    if not callable(func):
        raise Invalid(f"the source defines no function {function}")
    func.__globals__["tvm"] = tvm
    placeholders = [tvm.placeholder(tuple(shape), dtype, name=f"input_{i}") for i, (shape, dtype) in enumerate(inputs)]

    def keep_locals(frame, event, arg):
        if event == "return" and frame.f_code is func.__code__:
            for name, value in frame.f_locals.items():
                if isinstance(value, tvm.tensor.Tensor) and name not in stages:
                    stages[name] = value

    attrs = {name: tvm.convert(value) for name, value in op_attrs.items()}  # as AKG hands them
    sys.setprofile(keep_locals if stages is not None else None)
    try:
        result = func(placeholders, attrs) if func_type == "ir_builder" else func(*placeholders, **attrs)
    finally:
        sys.setprofile(None)
    results = list(result) if isinstance(result, (list, tuple)) else [result]
    if not results or not all(isinstance(r, tvm.tensor.Tensor) for r in results):
        raise Invalid("the function must return its output tensors")
    return placeholders, results


def run_plain(tvm, source, function, func_type, op_attrs, values, target):
    """The function run on `values` (numpy arrays, one per input) as plain TVM builds it for `target`, tvm's
    name of the CPU: its outputs as numpy arrays."""
    inputs = [(v.shape, str(v.dtype)) for v in values]
    placeholders, results = called(tvm, source, function, func_type, inputs, op_attrs)
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="akg-reduce-plain-") as folder:
        os.chdir(folder)  # AKG's tvm.build writes akg_kernel_meta/ where it runs: never the user's folder
        try:
            schedule = tvm.create_schedule([r.op for r in results])
            built = tvm.build(schedule, placeholders + results, target)
        finally:
            os.chdir(here)
    outputs = [tvm.nd.array(np.zeros([int(d.value) for d in r.shape], r.dtype)) for r in results]
    built(*[tvm.nd.array(v) for v in values], *outputs)
    return [o.asnumpy() for o in outputs]
