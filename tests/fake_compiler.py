"""A stand-in for MindSpore's AKG entry with the same command line (`k.info AKG '<attrs>' <dir>`), for
unit tests of the search: it fails like AKG on a recognisable kernel shape, in milliseconds.

Bug A (the one the tests reduce): a multiplication stored inside at least two nested loops, with some
input dimension >= 3 -> an AKG-style `Check failed` in fake_tiling.cc. With attrs {"needed": false} it
does not fire, so a test can make the failure depend on an attr; nor with {"enable_vectorization": false}
(a workaround to find).
Bug B (a different bug a reduction must not slip to): no multiplication left and an attr named "trap".
Bug C (another bug the shape map meets): bug A's kernel with an input dimension of exactly 13 fails a
different check, in fake_split.cc.
Bug G (fused graphs): a ReduceMax and a Transpose reading the same tensor, with some graph input dim >= 4
-> `Check failed` in fake_band.cc. Bug H (the different one): a Transpose without a ReduceMax and an attr
named "trap".
FAKE_COMPILER_SLEEP in the environment makes every compile take that many seconds; with
FAKE_COMPILER_FLAKY=p a fraction p of the compiles pass whatever the kernel, deterministically: the n-th
compile run from this script's folder passes when frac(n * golden ratio) < p, so for p = 0.5 no three
compiles in a row agree (a seeded sequence, not `random`: a test of flakiness must not be flaky); with
FAKE_COMPILER_HANG_WITHOUT=name a compile whose attrs lack `name` hangs; FAKE_COMPILER_STOPS=text: every compile
fails as AKG's GPU pipeline does when the nvcc shim stops it, saying `text` (the shim's STOPPED) where nvcc would
run.
"""

import ast
import fcntl
import json
import os
import sys
import time

BUG_C_DIM = 13


def _store_depths(node: ast.AST, depth: int = 0):
    """(loop depth, has multiplication) of every assignment."""
    if isinstance(node, ast.Assign | ast.AugAssign):
        has_mul = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) for n in ast.walk(node))
        yield depth, has_mul
    for child in ast.iter_child_nodes(node):
        yield from _store_depths(child, depth + isinstance(node, ast.For))


def _compile_number() -> int:
    """How many compiles ran from this script's folder before this one (a counter file, locked)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".fake_compiler_count"), "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        number = len(fh.read())
        fh.write(".")
    return number


def _hang_in_pass() -> None:
    """Where the fake hangs: py-spy names it `fake_compiler.py::_hang_in_pass`."""
    time.sleep(3600)


def main() -> int:
    time.sleep(float(os.environ.get("FAKE_COMPILER_SLEEP", "0")))
    if stops := os.environ.get("FAKE_COMPILER_STOPS"):
        print(f'  File "nvcc.py", line 90, in compile_cuda\nRuntimeError: Compilation error:\n{stops}')
        return 1
    flaky = float(os.environ.get("FAKE_COMPILER_FLAKY", "0"))
    if flaky and (_compile_number() * 0.6180339887) % 1 < flaky:
        return 0  # a flaky compiler: this time the bug does not show
    with open(sys.argv[1]) as fh:
        info = json.load(fh)
    attrs = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    hang_without = os.environ.get("FAKE_COMPILER_HANG_WITHOUT")
    if hang_without and hang_without not in attrs:
        _hang_in_pass()
    if info["op_desc"][0]["name"] != "Custom":
        return _graph_bugs(info, attrs)
    op = info["op_desc"][0]
    source = next(a["value"] for a in op["attr"] if a["name"] == "func_source_str")
    dims = [d for desc in info["input_desc"] for d in desc[0]["shape"]]
    stores = list(_store_depths(ast.parse(source)))
    deep_mul = max((d for d, mul in stores if mul), default=0)
    workaround = attrs.get("enable_vectorization") is False
    if deep_mul >= 2 and BUG_C_DIM in dims:
        print("[ERROR] AKG:2026-01-01-00:00:00.000.000 [fake_split.cc:45] [pass] Check failed: fake bug C")
        return 1
    if deep_mul >= 2 and max(dims) >= 3 and attrs.get("needed", True) and not workaround:
        print(
            "[ERROR] AKG:2026-01-01-00:00:00.000.000 [fake_tiling.cc:193] [tiling] "
            f"Check failed: gemm_m.size() <= FormatM.size() ({deep_mul} vs. 2) : "
        )
        print("  [bt] (0) /x/libakg.so(dmlc::LogMessageFatal::~LogMessageFatal()+0x4f) [0x7f36de3a994f]")
        print("  [bt] (1) /x/libakg.so(akg::ir::poly::SpaceAnalyzer::MarkGemmAxes()+0x12) [0x7f3]")
        return 1
    if not any(mul for _, mul in stores) and "trap" in attrs:
        print("[ERROR] AKG:2026-01-01-00:00:00.000.000 [other_pass.cc:7] [pass] Check failed: other bug")
        return 1
    return 0


def _graph_bugs(info: dict, attrs: dict) -> int:
    def reads(name: str) -> set:
        return {d[0]["tensor_name"] for op in info["op_desc"] if op["name"] == name for d in op["input_desc"][:1]}

    dims = [d for desc in info["input_desc"] for d in desc[0]["shape"]]
    if reads("ReduceMax") & reads("Transpose") and max(dims, default=0) >= 4:
        print("[ERROR] AKG:2026-01-01-00:00:00.000.000 [fake_band.cc:12] [poly] Check failed: band_index < 1 (1 vs. 1)")
        return 1
    if reads("Transpose") and not reads("ReduceMax") and "trap" in attrs:
        print("[ERROR] AKG:2026-01-01-00:00:00.000.000 [other_pass.cc:7] [pass] Check failed: other bug")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
