"""Well-formedness of Hybrid DSL candidates: a kernel that reads a fresh tensor's element before writing it,
or leaves output elements unwritten, is refused (IllFormed) unless the case allows it; a wrong-result case
always must be well-formed; fused graphs are by construction; every corpus original is well-formed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS

from reducer.core.case import Case, TensorSpec
from reducer.core.errors import InvalidKernel
from reducer.inputs.load import load_input
from reducer.kernels.hybrid import LINE_BUDGET, infer_outputs
from reducer.kernels.kinds import GRAPH, kind_of
from reducer.kernels.well_formed import IllFormed

WELL_FORMED = """def k(x):
    acc = allocate((4,), x.dtype)
    y = output_tensor((4,), x.dtype)
    for i in range(4):
        acc[i] = 0.0
        acc[i] += x[i]
        y[i] = acc[i]
    return y
"""


def case(source: str, shape: tuple[int, ...] = (4,), **kw) -> Case:
    return Case("t", source, "k", (TensorSpec(shape, "float32"),), **kw)


def test_a_kernel_that_writes_before_reading_and_fills_its_output_is_accepted() -> None:
    assert infer_outputs(case(WELL_FORMED)) == (TensorSpec((4,), "float32"),)
    assert kind_of(case(WELL_FORMED)).ill_formed(case(WELL_FORMED)) == ""


@pytest.mark.parametrize(
    ("source", "why"),
    [
        (WELL_FORMED.replace("        acc[i] = 0.0\n", ""), r"reads acc\[0\] before writing it"),
        (WELL_FORMED.replace("range(4)", "range(3)"), "leaves 1 of 4 elements of output y unwritten"),
        (WELL_FORMED.replace("        y[i] = acc[i]\n", ""), "leaves 4 of 4 elements of output y unwritten"),
    ],
)
def test_reading_unwritten_memory_or_leaving_outputs_unwritten_is_refused_and_named(source: str, why: str) -> None:
    with pytest.raises(IllFormed, match=why):
        infer_outputs(case(source))
    assert kind_of(case(source)).ill_formed(case(source))  # the reason, for the bundle
    # Allowed, the same kernel is a valid candidate (today's behaviour with --allow-ill-formed).
    assert infer_outputs(case(source, allow_ill_formed=True)) == (TensorSpec((4,), "float32"),)


def test_a_two_dimensional_read_names_the_element() -> None:
    source = """def k(x):
    y = output_tensor((2, 3), x.dtype)
    for i in range(2):
        for j in range(3):
            y[i, j] = y[i, j] + x[i, j]
    return y
"""
    with pytest.raises(IllFormed, match=r"reads y\[0, 0\] before writing it"):
        infer_outputs(case(source, (2, 3)))


def test_a_wrong_result_case_must_be_well_formed_even_when_allowed() -> None:
    from reducer.core.case import Mismatch

    source = WELL_FORMED.replace("        acc[i] = 0.0\n", "")
    with pytest.raises(InvalidKernel, match="before writing it"):
        infer_outputs(case(source, allow_ill_formed=True, mismatch=Mismatch()))


def test_a_kernel_too_long_to_run_is_checked_without_running_for_an_output_never_written() -> None:
    n = int(LINE_BUDGET**0.5) + 100  # an n x n loop nest spends the line budget
    long_running = f"""def k(x):
    acc = allocate(({n}, {n}), x.dtype)
    y = output_tensor(({n}, {n}), x.dtype)
    for i in range({n}):
        for j in range({n}):
            acc[i, j] = x[i, j]
    return y
"""
    with pytest.raises(IllFormed, match="never writes output y"):
        infer_outputs(case(long_running, (n, n)))
    writes_y = long_running.replace("acc[i, j] = x[i, j]", "y[i, j] = x[i, j]")
    assert infer_outputs(case(writes_y, (n, n))) == (TensorSpec((n, n), "float32"),)


@pytest.mark.parametrize("crash", sorted(CORPUS.glob("*/crash.yaml")), ids=lambda p: p.parent.name)
def test_every_corpus_original_is_well_formed_so_its_candidates_must_be(crash: Path) -> None:
    original = load_input(crash)
    assert kind_of(original).ill_formed(original) == ""
    assert not original.allow_ill_formed


def test_an_ill_formed_original_allows_ill_formed_candidates(tmp_path: Path) -> None:
    (tmp_path / "kernel.py").write_text(WELL_FORMED.replace("        acc[i] = 0.0\n", ""))
    (tmp_path / "crash.yaml").write_text(
        "kernel: kernel.py\nfunction: k\ninputs:\n  - {shape: [4], dtype: float32}\nexpect: {kind: signal}\n"
    )
    assert load_input(tmp_path / "crash.yaml").allow_ill_formed
    (tmp_path / "kernel.py").write_text(WELL_FORMED)
    assert not load_input(tmp_path / "crash.yaml").allow_ill_formed
    assert load_input(tmp_path / "crash.yaml", allow_ill_formed=True).allow_ill_formed


def test_fused_graphs_are_well_formed_by_construction() -> None:
    graph = load_input(CORPUS / "pointnet_bn_stats_ssa" / "crash.yaml")
    assert kind_of(graph) is GRAPH and GRAPH.ill_formed(graph) == ""


def test_a_kernel_too_long_to_run_is_checked_with_its_input_dims_cut() -> None:
    n = int(LINE_BUDGET**0.5) + 100
    partial = """def k(x):
    y = output_tensor(x.shape, x.dtype)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            y[i, 0] = x[i, j]
    return y
"""
    with pytest.raises(IllFormed, match=r"leaves 56 of 64 elements of output y unwritten .*cut to 8"):
        infer_outputs(case(partial, (n, n)))
    whole = partial.replace("y[i, 0]", "y[i, j]")
    assert infer_outputs(case(whole, (n, n))) == (TensorSpec((n, n), "float32"),)


def test_an_output_of_literal_shape_is_not_judged_by_a_run_with_cut_inputs() -> None:
    """A 300 x 300 copy whose output shape is a literal: with the inputs cut to 8 the loops cover 8 x 8 of
    an output still 300 x 300, which says nothing about the kernel."""
    n = int(LINE_BUDGET**0.5) + 100
    literal = f"""def k(x):
    y = output_tensor(({n}, {n}), x.dtype)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            y[i, j] = x[i, j]
    return y
"""
    assert infer_outputs(case(literal, (n, n))) == (TensorSpec((n, n), "float32"),)
    never = literal.replace("            y[i, j] = x[i, j]\n", "            z = x[i, j]\n")
    with pytest.raises(IllFormed, match="never writes output y"):
        infer_outputs(case(never, (n, n)))
