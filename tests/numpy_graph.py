"""An independent check of a fused graph's recorded shapes and dtypes: the graph evaluated with numpy on
zero-filled inputs, op by op, in numpy's own dtypes (reducer/in_mindspore/graph_numpy.py's rules, which know
nothing of the reducer's shape inference; MindSpore's semantics where numpy's differ: a full reduction gives
[1]). Tests compare it with what the reducer's shape inference wrote, so the inference is not checked by
itself."""

from __future__ import annotations

from typing import Any

import numpy as np

from reducer.in_mindspore import graph_numpy
from reducer.kernels import graph as graphs


def numpy_mismatches(graph: dict[str, Any]) -> list[str]:
    """Where the recorded shapes and dtypes of `graph` differ from numpy's evaluation of it; a read of a
    tensor that does not exist yet, an output no op writes, or an op numpy refuses is a mismatch too."""
    values = {t["tensor_name"]: np.zeros(t["shape"], t["data_type"]) for t in graphs.graph_inputs(graph)}
    problems = []
    with np.errstate(all="ignore"):
        for op in graph["op_desc"]:
            (out,) = op["output_desc"]
            try:
                data, tensors = graph_numpy.op_data(op, values, exact=False)
                result = np.asarray(graph_numpy.apply(op, data, tensors))
            except ValueError as exc:
                return [f"{op['name']}: {exc}"]
            if op["name"] == "Cast":
                result = result.astype(out["data_type"])
            result = result.reshape(1) if result.ndim == 0 else result
            values[out["tensor_name"]] = result
            if (list(result.shape), str(result.dtype)) != (out["shape"], out["data_type"]):
                problems.append(f"{op['name']} records {out['shape']} {out['data_type']}, numpy gives "
                                f"{list(result.shape)} {result.dtype}")  # fmt: skip
    written = {out["tensor_name"] for op in graph["op_desc"] for out in op["output_desc"]}
    problems += [f"graph output {t['tensor_name']} is written by no op" for t in graph["output_desc"]
                 if t["tensor_name"] not in written]  # fmt: skip
    return problems
