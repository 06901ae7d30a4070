"""How AKG's own reference for fused graphs (`akg/utils/composite_op_helper.py` gen_json_data: inputs, and
the expected outputs from `akg/utils/op_dsl.py`) agrees with ours (reducer/in_mindspore/graph_numpy.py), on every
graph MindSpore wrote that we ship (corpus/, tests/data/graphs/, or the .info files named): per graph, its
ops, whether both references cover it, and the largest difference between them relative to the output's
tolerance (on gen_json_data's inputs, fed to both). A ratio above 1 is a disagreement: one of the two is
wrong about an op.

Usage: python bench/reference_agreement.py [graph.info ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from reducer.in_mindspore import graph_numpy, mismatch_run
from reducer.kernels import graph as graphs

ROOT = Path(__file__).resolve().parent.parent


def shipped() -> list[Path]:
    return sorted((ROOT / "corpus").glob("*/*.info")) + sorted((ROOT / "tests" / "data" / "graphs").glob("*.info"))


def compare(path: Path) -> str:
    text = path.read_text()
    graph = json.loads(text)
    if not graphs.is_graph(graph):
        return "not a fused graph"
    ours_missing = graph_numpy.unsupported(graph)
    try:
        from akg.utils.composite_op_helper import gen_json_data

        inputs, expect, _ = gen_json_data(text)
    except Exception as exc:  # op_dsl lacks the op, or gen_json_data fails on the graph
        lacks = f"; ours lacks {', '.join(ours_missing)}" if ours_missing else ""
        return f"op_dsl: {type(exc).__name__}: {str(exc)[:80]}{lacks}"
    if ours_missing:
        return f"ours lacks {', '.join(ours_missing)}"
    count = len(graph["input_desc"] or [])
    ours = graph_numpy.evaluate(graph, inputs[:count])
    worst = 0.0
    for mine, theirs, desc in zip(ours, expect, graph["output_desc"], strict=True):
        limit = mismatch_run.TOLERANCE.get(desc["data_type"], 0.0) or 1e-12
        a, b = np.asarray(mine, np.float64), np.asarray(theirs, np.float64).reshape(np.shape(mine))
        with np.errstate(invalid="ignore"):
            error = np.abs(a - b) / (1 + np.abs(a))
        error[np.isnan(a) & np.isnan(b)] = 0
        worst = max(worst, float(np.nanmax(error)) / limit if error.size else 0.0)
    return f"agree (max difference {worst:.3g} x tolerance)" if worst <= 1 else f"DISAGREE ({worst:.3g} x tolerance)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("graphs", nargs="*", type=Path)
    paths = parser.parse_args().graphs or shipped()
    mismatch_run.akg_package("cpu")  # its CPU build: gen_json_data only evaluates op_dsl
    for path in paths:
        graph = json.loads(path.read_text())
        ops = " ".join(graphs.op_names(graph)) if graphs.is_graph(graph) else "-"
        print(f"{path.name[:60]:<60} {ops[:60]:<60} {compare(path)}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
