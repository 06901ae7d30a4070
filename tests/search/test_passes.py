"""Each pass proposes well-formed, smaller kernels; ddmin finds a minimal subset with few tests."""

from __future__ import annotations

import pytest
from conftest import CORPUS, edited_cases
from numpy_graph import numpy_mismatches

from reducer.compile.sandbox import Outcome
from reducer.core.case import Case, Expectation, TensorSpec
from reducer.kernels.hybrid import infer_outputs
from reducer.kernels.kinds import size_of
from reducer.search.oracle import Oracle
from reducer.search.passes.config import DeleteEntries, SimplifyAttrValues
from reducer.search.passes.control import FlattenControl
from reducer.search.passes.expressions import CompactAssignments, ExpressionToConstant, ExpressionToOperand
from reducer.search.passes.tensors import DropUnitAxes, RemoveUnusedInputs, ShrinkLinkedDims
from reducer.search.passes.variables import InlineScalars
from reducer.search.reduction import Reduction

KERNEL = """def k(a, b):
    c = output_tensor((a.shape[0], a.shape[1]), a.dtype)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            t = a[i, j] * 2.0
            c[i, j] = 0.0
            c[i, j] = c[i, j] + t * b[0, j]
    return c
"""


def case(source: str = KERNEL, shapes=((4, 6), (1, 6)), **kw) -> Case:
    return Case("t", source, "k", tuple(TensorSpec(s, "float32") for s in shapes), **kw)


def candidates(p, c: Case) -> list[Case]:
    return edited_cases(p, c)


def sources(p, c: Case) -> list[str]:
    return [x.source for x in candidates(p, c)]


def test_flatten_fixes_the_loop_variable_to_its_first_value_innermost_first() -> None:
    inner, outer = sources(FlattenControl(), case())
    assert "c[i, 0] = c[i, 0] + t * b[0, 0]" in inner and "for j" not in inner
    assert "c[0, j] = c[0, j] + t * b[0, j]" in outer and "for i" not in outer


def test_inline_scalar_removes_the_temporary() -> None:
    (out,) = sources(InlineScalars(), case())
    assert "t =" not in out and "c[i, j] + a[i, j] * 2.0 * b[0, j]" in out


def test_drop_unit_axis_rewrites_shape_and_every_index() -> None:
    (cand,) = candidates(DropUnitAxes(), case())
    assert cand.inputs[1].shape == (6,) and "b[j]" in cand.source
    infer_outputs(cand)  # still a valid kernel


def test_linked_dims_shrink_together() -> None:
    c = case(shapes=((6, 6), (1, 6)))
    (six,) = ShrinkLinkedDims().numbers(c)
    assert (six.label, six.value) == ("dims 0[0], 0[1], 1[1]", 6)
    lowered = six.at(1)
    assert lowered is not None and lowered.inputs[0].shape == (1, 1) and lowered.inputs[1].shape == (1, 1)


def test_expression_passes_only_shrink() -> None:
    c = case()
    for p in (ExpressionToOperand(), ExpressionToConstant(), CompactAssignments()):
        for cand in candidates(p, c):
            assert size_of(cand) < size_of(c), (p.name, cand.source)
    assert any("c[i, j] += t * b[0, j]" in s for s in sources(CompactAssignments(), c))
    assert any("range(4)" in s for s in sources(ExpressionToConstant(), c))  # shape read -> its value


def test_unused_input_is_dropped_with_its_parameter() -> None:
    c = case(KERNEL.replace(" * b[0, j]", ""))
    (cand,) = candidates(RemoveUnusedInputs(), c)
    assert cand.source.startswith("def k(a):") and len(cand.inputs) == 1


def test_an_input_read_only_for_its_shape_is_dropped_for_the_literal_shape() -> None:
    source = "def k(a, b):\n    c = output_tensor(b.shape, b.dtype)\n    c[0, 0] = a[0, 0]\n    return c\n"
    c = Case("k", source, "k", (TensorSpec((4, 4), "float32"), TensorSpec((2, 3), "float16")))
    (cand,) = candidates(RemoveUnusedInputs(), c)
    assert "output_tensor((2, 3), 'float16')" in cand.source and cand.inputs == c.inputs[:1]
    reads_b = c.with_(source=source.replace("a[0, 0]", "b[0, 0]"))  # b's elements read: b stays, a goes
    assert [x.source.split(":")[0] for x in candidates(RemoveUnusedInputs(), reads_b)] == ["def k(b)"]


def test_attr_values_and_dim_groups_simplify() -> None:
    c = case(attrs={"dim": "0 0 16 1 0 1 8 1", "n": 5})
    values = [x.attrs["dim"] for x in candidates(SimplifyAttrValues(), c) if x.attrs["n"] == 5]
    assert "" in values and "0 1 8 1" in values and "0 0 1 1 0 1 8 1" in values
    kept = DeleteEntries("attrs").keep(c, 0, [1])
    assert kept.attrs == {"n": 5}


def test_ddmin_finds_the_two_needed_attrs_among_many() -> None:
    """A fake compile that fails only while attrs a3 and a11 are both present."""
    attrs = {f"a{i}": i for i in range(16)}

    def compile_(c: Case, outputs, cancel=None, **_: object) -> Outcome:
        fails = "a3" in c.attrs and "a11" in c.attrs
        text = "[ERROR] AKG:x [t.cc:1] [t] Check failed: boom" if fails else ""
        return Outcome(1 if fails else 0, None, False, False, 0.0, text)

    oracle = Oracle(Expectation("error", "Check failed: boom", "t.cc:1", exact=True), compiler=compile_)
    result = Reduction(case(attrs=attrs), oracle, schedule=[DeleteEntries("attrs")]).run()
    assert result.attrs == {"a3": 3, "a11": 11}
    assert oracle.counters.compiles < 40  # ddmin, not 2^16


@pytest.mark.slow
def test_every_pass_yields_parsable_kernels_on_every_corpus_case() -> None:
    """Real kernels (tuple unpacking, multi-output, allocate, if/else, intrinsics; fused graphs) never break
    a pass."""
    import ast

    from reducer.inputs.crash_yaml import load_case
    from reducer.kernels import graph as graphs
    from reducer.search.passes import DeletionPass, schedule_for

    corpus = CORPUS
    for crash in sorted(corpus.glob("*/crash.yaml")):
        c = load_case(crash)
        for p in schedule_for(c):
            if isinstance(p, DeletionPass):
                cands = [p.keep(c, g, list(range(len(p.units(c, g))))[1:]) for g in range(p.groups(c))]
            else:
                cands = candidates(p, c)
            for cand in cands:
                if cand is not None and cand.graph is not None:
                    assert numpy_mismatches(graphs.loads(cand.graph)) == [], (crash, p.name)
                elif cand is not None:
                    func = ast.parse(cand.source).body[0]
                    assert isinstance(func, ast.FunctionDef) and func.name == c.function, (crash, p.name)
                    assert len(func.args.args) == len(cand.inputs) + len(cand.op_attrs), (crash, p.name)


def test_drop_unit_axis_shortens_a_shape_unpacking() -> None:
    source = """def k(a):
    n, c, w = a.shape
    y = output_tensor((n, c, w), a.dtype)
    y[0, 0, 0] = a[0, 0, 0]
    return y
"""
    dropped = [x for x in candidates(DropUnitAxes(), case(source, shapes=((2, 1, 3),))) if x.inputs[0].shape == (2, 3)]
    (cand,) = dropped
    assert "n, w = a.shape" in cand.source and "output_tensor((n, 1, w)" in cand.source
    assert "a[0, 0]" in cand.source
    infer_outputs(cand.with_(allow_ill_formed=True))  # valid, though it writes one element of six


def test_drop_unit_axis_goes_down_to_a_scalar_tensor() -> None:
    source = """def k(a):
    n, = a.shape
    y = output_tensor((n,), a.dtype)
    return y
"""
    (to_scalar,) = candidates(DropUnitAxes(), case(source, shapes=((1,),)))
    assert to_scalar.inputs[0].shape == () and "a.shape" not in to_scalar.source
    assert "output_tensor((1,), a.dtype)" in to_scalar.source
    (out_scalar,) = candidates(DropUnitAxes(), to_scalar)
    assert "output_tensor((), a.dtype)" in out_scalar.source
    assert infer_outputs(out_scalar.with_(allow_ill_formed=True))[0].shape == ()  # valid, writes nothing
