"""The grid's verdict on a target whose compiles stop before its code generator (given by a stand-in compiler,
no AKG): a call whose cuda compile stopped where nvcc would start compiles "up to nvcc (not run)", in its cell,
its target's pass-rate line and plan.md, never as compiling on the GPU."""

from __future__ import annotations

import pytest
from conftest import CORPUS

from reducer.compile.identity import Kind, Signature
from reducer.compile.sandbox import Outcome
from reducer.core.case import Case, Expectation, TensorSpec
from reducer.inputs.crash_yaml import load_case
from reducer.inputs.shape_list import ShapeLine
from reducer.search.oracle import Oracle
from reducer.shapes.grid import COMPILES, FAILS, _compiled, compiled_as_far_as, grid
from reducer.shapes.plan import distinct_bugs, pass_rates
from reducer.shapes.report import compile_words, verdict_words
from reducer.toolchain.nvcc import STOPPED

pytestmark = pytest.mark.timeout(60)
CASE = load_case(CORPUS / "nearest_distance_odd_points" / "crash.yaml")


def _stops_at_nvcc(case: Case, outputs: object, **_: object) -> Outcome:
    """cpu compiles to its end; cuda stops where nvcc would start, as the nvcc shim makes it."""
    if case.target == "cuda":
        return Outcome(1, None, False, False, 0.0, f"RuntimeError: Compilation error:\n{STOPPED}")
    return Outcome(0, None, False, False, 0.0, "")


def test_a_call_whose_compile_stopped_before_nvcc_compiles_up_to_nvcc_not_on_the_gpu() -> None:
    lines = [ShapeLine(f"list:{n}", f"N={n}", ((2, n, 3), (2, n, 3))) for n in (4, 5)]
    with Oracle(Expectation("error"), 1, _stops_at_nvcc) as oracle:
        cells, _ = grid(CASE, lines, ["cpu", "cuda"], oracle, check=False)
    assert {c.verdict for c in cells} == {COMPILES}
    words = {c.target: verdict_words(c.to_dict()) for c in cells}
    assert words == {"cpu": "compiles", "cuda": "compiles up to nvcc (not run)"}
    rates = pass_rates(cells, ["cpu", "cuda"])
    assert compile_words(rates["cpu"]) == "compile"
    assert compile_words(rates["cuda"]) == "compile up to nvcc (not run)"


def test_crashes_whose_place_was_not_read_are_never_one_bug() -> None:
    """Two calls die of SIGSEGV and no frame of either was read: each fails, with no bug id (it would pass for
    every crash of its signal), so the plan makes no bug and no bundle of them together."""
    unread = Signature(Kind.SIGNAL, "SIGSEGV", "", (), raw="SIGSEGV")
    placed = Signature(
        Kind.SIGNAL, "SIGSEGV", "", ("akg::ir::X::Mutate_(air::ir::Call*)",), raw="SIGSEGV", read_by="gdb"
    )
    lines = [ShapeLine("calls.txt", f"[{n}]", ((n,),)) for n in (4, 8, 16)]
    cells = [
        _compiled(lines[0], "cpu", unread, ""),
        _compiled(lines[1], "cpu", unread, ""),
        _compiled(lines[2], "cpu", placed, ""),
    ]
    assert [c.verdict for c in cells] == [FAILS] * 3
    assert cells[0].bug is None and cells[1].bug is None and "cannot be told" in cells[0].said
    assert [b.calls for b in distinct_bugs(cells)] == [1]  # only the placed crash is a bug


def test_each_call_compiles_as_far_as_the_cases_failure_needs() -> None:
    """An invalid-cuda case's calls run nvcc (it decides that bug: stopped before it, every call would pass
    for "compiles up to nvcc"); every other case's stop where AKG's passes end."""
    source = (
        "def f(a):\n    b = output_tensor(a.shape, a.dtype)\n    for i in range(4):\n        b[i] = a[i]\n    return b"
    )
    case = Case("k", source, "f", (TensorSpec((4,), "float32"),), target="cuda")
    invalid = case.with_(expect=Expectation("invalid-cuda", 'identifier "ccN" is undefined'))
    with Oracle(compiled_as_far_as(invalid), compiler=lambda *a, **kw: None) as oracle:
        assert not oracle.stop_at_codegen
    for other in (case, case.with_(expect=Expectation("error", "Check failed"))):
        with Oracle(compiled_as_far_as(other), compiler=lambda *a, **kw: None) as oracle:
            assert oracle.stop_at_codegen
