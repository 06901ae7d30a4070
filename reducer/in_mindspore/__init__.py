"""Layer 0, the programs that run in MindSpore's interpreter, not in ours: the warm compile worker
(akg_worker.py), the wrong-result check and its warm runner (mismatch_run.py, mismatch_runner.py), the
effective-attrs probe (effective_attrs.py), the TeLang probe (telang_probe.py), the numpy reference of fused
graphs they load (graph_numpy.py, with its error bounds: graph_bounds.py) and the matrix that holds the
reference against MindSpore's own kernels (op_matrix.py). Each is started by toolchain/launch.py under the
case's interpreter, with its AKG build's environment, and speaks JSON lines or exit codes with us. They import
nothing of ours but wire.py beside them (mismatch_run.py, the body of a wrong-result repro.py, inside its
functions: a repro.py registers wire.py's copy); wire.py is the one place that makes AKG importable. In our own
process only `script()`, wire.py's constants and Record, mismatch_run.py's verdict lines, exit codes, tolerances
and input maker (what a bundle shows), and graph_numpy.py's
op tables (the ops it knows, how each reads its operands) are used.

May import: nothing of ours."""

from __future__ import annotations

from pathlib import Path


def script(name: str) -> str:
    """The file of the program `name` (akg_worker, mismatch_run, ...), to run under another interpreter."""
    path = Path(__file__).with_name(f"{name}.py")
    assert path.is_file(), path
    return str(path)
