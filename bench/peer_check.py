"""The interestingness test bench/peers.py gives every peer reducer: exit 0 when the single-file case (a
`CASE = {...}` dict of inputs/attrs/env and, where they apply, func_type, target and op_attrs, then the kernel
function) is a valid kernel of its language and, compiled cold by the real AKG, fails with the target
signature; exit 1 otherwise. The file is the first argument, or ./case.py (C-Vise runs the test next to its
copy). PEER_EXPECT names the target signature's JSON, PEER_LOG a file that gets one line per call ("compile" or
"invalid"), PEER_TIMEOUT the compile limit. The smallest interesting file seen is kept as PEER_LOG + ".best": a
peer stopped at its time budget may not have written its own result."""

from __future__ import annotations

import ast
import fcntl
import json
import os
import sys
from pathlib import Path

from reducer.compile.akg import compile_case
from reducer.compile.identity import matches
from reducer.compile.signature import signature_of
from reducer.core.case import Case, Expectation, TensorSpec
from reducer.core.errors import InvalidKernel
from reducer.kernels.kinds import outputs_of


def parse_single_file(text: str) -> Case:
    """The Case a single-file form describes; ValueError/SyntaxError/KeyError/TypeError when it does not."""
    tree = ast.parse(text)
    spec = next(n for n in tree.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "CASE")
    data = ast.literal_eval(spec.value)
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    lines = text.splitlines(keepends=True)
    source = "".join(lines[func.lineno - 1 : func.end_lineno])
    inputs = tuple(TensorSpec(tuple(int(d) for d in t["shape"]), str(t["dtype"])) for t in data["inputs"])
    if any(d < 1 for t in inputs for d in t.shape):
        raise ValueError("a dimension below 1")
    env = {str(k): str(v) for k, v in dict(data.get("env", {})).items()}
    func_type = str(data.get("func_type", "hybrid"))
    attrs = dict(data.get("attrs", {}))
    target = str(data.get("target", "cpu"))
    op_attrs = dict(data.get("op_attrs", {}))
    return Case(
        "peer", source, func.name, inputs, attrs=attrs, env=env, target=target, func_type=func_type, op_attrs=op_attrs
    )


def single_file(case: Case) -> str:
    spec = {"inputs": [t.to_dict() for t in case.inputs], "attrs": case.attrs, "env": case.env}
    if case.func_type != "hybrid":
        spec["func_type"] = case.func_type
    if case.target != "cpu":
        spec["target"] = case.target
    if case.op_attrs:
        spec["op_attrs"] = case.op_attrs
    return f"CASE = {spec!r}\n\n\n{case.source}"


def _log(word: str) -> None:
    if os.environ.get("PEER_LOG"):
        with open(os.environ["PEER_LOG"], "a") as fh:
            fh.write(word + "\n")


def _keep_if_smallest(text: str) -> None:
    if not os.environ.get("PEER_LOG"):
        return
    best = Path(os.environ["PEER_LOG"] + ".best")
    with open(os.environ["PEER_LOG"] + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # peers run tests in parallel
        if not best.exists() or len(text) < len(best.read_text()):
            best.write_text(text)


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("case.py")
    try:
        text = path.read_text()
        case = parse_single_file(text).with_(timeout=float(os.environ.get("PEER_TIMEOUT", "60")))
        outputs = outputs_of(case)
    except (InvalidKernel, ValueError, SyntaxError, KeyError, TypeError, StopIteration, OSError):
        _log("invalid")
        return 1
    expect = Expectation(**json.loads(Path(os.environ["PEER_EXPECT"]).read_text()), exact=True)
    sig = signature_of(compile_case(case, outputs), case.time_limit)
    _log("compile")
    if not matches(sig, expect):
        return 1
    _keep_if_smallest(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
