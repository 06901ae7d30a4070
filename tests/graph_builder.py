"""Fused graphs for tests, in MindSpore's v2 `.info` layout: a builder, a PointNet-like branch, and a
writer of `.info` files."""

from __future__ import annotations

import json
from pathlib import Path

DUMPED = Path(__file__).parent / "data" / "graphs"  # written by MindSpore 2.10 (GRAPH_MODE, enable_graph_kernel, CPU)


class Builder:
    """Graphs in MindSpore's v2 layout, for tests."""

    def __init__(self) -> None:
        self.inputs: list[list[dict]] = []
        self.ops: list[dict] = []
        self.names = 0

    def _name(self) -> str:
        self.names += 1
        return f"input_{self.names}"

    def input(self, shape: list[int], dtype: str = "float32") -> dict:
        tensor = {"data_type": dtype, "format": "DefaultFormat", "shape": shape, "tensor_name": self._name()}
        self.inputs.append([tensor])
        return tensor

    def const(self, value: object, dtype: str = "int64") -> dict:
        shape = [len(value)] if isinstance(value, list) else [1]
        return {"data_type": dtype, "format": "DefaultFormat", "shape": shape, "tensor_name": self._name(),
                "value": value}  # fmt: skip

    def op(self, name: str, ins: list[dict], shape: list[int], dtype: str = "float32", **attrs: object) -> dict:
        out = {"data_type": dtype, "format": "DefaultFormat", "shape": shape,
               "tensor_name": f"output_0_{len(self.ops)}"}  # fmt: skip
        attr = [
            {"data_type": "bool" if isinstance(v, bool) else "str", "name": k, "value": v} for k, v in attrs.items()
        ]
        self.ops.append({"attr": attr or None, "impl_path": "", "name": name,
                         "input_desc": [[{**t, "name": f"input_{i}"}] for i, t in enumerate(ins)],
                         "output_desc": [{**out, "name": "output_0"}]})  # fmt: skip
        return out

    def graph(self, outputs: list[dict]) -> dict:
        return {"composite": True, "composite_graph": "t", "id": 0, "input_desc": self.inputs, "op": "Fused_test",
                "op_desc": self.ops, "output_desc": [{k: v for k, v in o.items() if k != "name"} for o in outputs],
                "platform": "AKG", "process": "cpu", "version": 2}  # fmt: skip


def pointnet_branch(points: int = 64) -> dict:
    """bn-like scale, max over the points and a transposed copy (the fake compiler's bug G), plus a sum."""
    b = Builder()
    h = b.input([2, points, 8])
    gamma = b.input([8])
    x = b.op("Mul", [h, gamma], [2, points, 8])
    x = b.op("Maximum", [x, b.const(0.0, "float32")], [2, points, 8])
    feat = b.op("ReduceMax", [x, b.const([1])], [2, 8], keep_dims=False)
    t = b.op("Transpose", [x, b.const([0, 2, 1])], [2, 8, points])
    e = b.op("Exp", [feat], [2, 8])
    s = b.op("ReduceSum", [e, b.const([1])], [2, 1], keep_dims=True)
    out = b.op("RealDiv", [e, s], [2, 8])
    return b.graph([out, t])


def write_info(folder: Path, graph: dict, name: str = "Fused_test.info") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(graph, indent=4))
    return path
