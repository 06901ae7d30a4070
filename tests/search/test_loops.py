"""The passes that leave the minima where every loop is needed: merging two nested loops (div/mod keeps
what the kernel computes; an extent-1 loop collapses into the other), moving an extent onto the loop held,
an accumulator replaced by its output, and the search's one-step lookahead through equal-size edits."""

from __future__ import annotations

import numpy as np

from reducer.core.case import Case, TensorSpec
from reducer.core.errors import InvalidKernel
from reducer.kernels.hybrid import INTRINSICS, infer_outputs
from reducer.kernels.kinds import size_of
from reducer.search.passes.buffers import AccumulatorToOutput
from reducer.search.passes.control import FlattenControl
from reducer.search.passes.loops import MergeLoops, MoveExtent
from reducer.search.reduction import Predicate, Reduction

NEST = """def k(x, w):
    y = output_tensor((3,), x.dtype)
    for i in range(3):
        y[i] = 0.0
        for a in range(x.shape[1]):
            for b in range(4):
                y[i] += x[i, a, b] * w[b]
    return y
"""


def case(source: str, *shapes: tuple[int, ...]) -> Case:
    return Case("t", source, "k", tuple(TensorSpec(s, "float32") for s in shapes))


def run(c: Case, *arrays: np.ndarray) -> np.ndarray:
    env = dict(INTRINSICS)
    exec(compile(c.source, "<kernel>", "exec"), env)
    return env[c.function](*arrays)


def test_merging_two_loops_splits_the_index_by_div_and_mod_and_computes_the_same() -> None:
    nest = case(NEST, (3, 2, 4), (4,))
    (merged,) = [e.after for e in MergeLoops().edits(nest)]
    assert "for a in range(x.shape[1] * 4):" in merged.source and "for b" not in merged.source
    assert "x[i, a // 4, a % 4] * w[a % 4]" in merged.source
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 2, 4)).astype("float32"), rng.standard_normal(4).astype("float32")
    np.testing.assert_allclose(run(merged, x, w), run(nest, x, w), rtol=1e-6)


def test_an_extent_1_loop_collapses_into_the_loop_it_holds_or_that_holds_it() -> None:
    outer_unit = case(NEST, (3, 1, 4), (4,))
    (collapsed,) = [e.after for e in MergeLoops().edits(outer_unit)]  # x.shape[1] is 1: `a` becomes `b`
    assert "for b in range(4):" in collapsed.source and "x[i, b, b]" in collapsed.source
    inner_unit = case(NEST.replace("range(4)", "range(1)"), (3, 2, 1), (1,))
    (collapsed,) = [e.after for e in MergeLoops().edits(inner_unit)]
    assert "for a in range(x.shape[1]):" in collapsed.source and "x[i, a, a] * w[a]" in collapsed.source
    for c in (outer_unit, inner_unit):
        assert all(size_of(e.after) < size_of(c) for e in MergeLoops().edits(c))


def test_move_extent_swaps_a_unit_extent_with_the_held_loop_and_keeps_the_size() -> None:
    nest = case(NEST, (3, 1, 4), (4,))
    (moved,) = [e.after for e in MoveExtent().edits(nest)]
    assert "for a in range(4):\n            for b in range(x.shape[1]):" in moved.source
    assert size_of(moved).tokens == size_of(nest).tokens
    assert list(MoveExtent().edits(case(NEST, (3, 2, 4), (4,)))) == []  # neither extent is 1


UNIT_OUTER = """def k(x):
    y = output_tensor((4,), x.dtype)
    for a in range(1):
        for b in range(4):
            y[b] = x[b]
    return y
"""


def _valid_with_a_loop_over_a_of_4(c: Case) -> bool:
    try:
        infer_outputs(c)
    except InvalidKernel:
        return False
    return "for a in range(4):" in c.source


def test_the_lookahead_takes_an_equal_size_edit_only_for_the_strictly_smaller_one_it_enables() -> None:
    start = case(UNIT_OUTER, (4,))
    without = Reduction(start, Predicate(_valid_with_a_loop_over_a_of_4), schedule=[FlattenControl(), MergeLoops()])
    assert without.run() == start  # every smaller edit loses `for a in range(4)` or writes y[0] only
    search = Reduction(
        start, Predicate(_valid_with_a_loop_over_a_of_4), schedule=[FlattenControl(), MergeLoops(), MoveExtent()]
    )
    best = search.run()
    assert "    for a in range(4):\n        y[a] = x[a]\n" in best.source and size_of(best) < size_of(start)
    (entry,) = search.log
    assert entry["pass"] == "move-extent" and ", then " in entry["edit"]  # one entry: both steps, judged once


def test_merge_loops_leads_every_round_after_the_first() -> None:
    passes: list[str] = []
    start = case(NEST, (3, 2, 4), (4,))
    schedule = [FlattenControl(), MergeLoops()]
    search = Reduction(
        start, Predicate(lambda c: "y[i]" in c.source), schedule, on_pass=lambda name, c: passes.append(name)
    )
    search.run()
    assert search.rounds >= 2 and passes[:2] == ["control-flow", "merge-loops"]
    assert passes[2::2] == ["merge-loops"] * (search.rounds - 1)  # control-flow bit in round 1, yet goes second


ACCUMULATOR = """def k(x):
    acc = allocate((2, 3), x.dtype)
    y = output_tensor((2, 3), x.dtype)
    for i in range(2):
        for j in range(3):
            acc[i, j] = x[i, j] * 2.0
            y[i, j] = acc[i, j] + 1.0
    return y
"""


def test_an_accumulator_of_the_output_shape_becomes_the_output() -> None:
    start = case(ACCUMULATOR, (2, 3))
    (edit,) = list(AccumulatorToOutput().edits(start))
    assert edit.description == "accumulator acc -> output y"
    assert "allocate" not in edit.after.source and "y[i, j] = x[i, j] * 2.0" in edit.after.source
    assert "y[i, j] = y[i, j] + 1.0" in edit.after.source
    assert infer_outputs(edit.after) == (TensorSpec((2, 3), "float32"),)  # still well-formed
    other_shape = case(ACCUMULATOR.replace("allocate((2, 3)", "allocate((2, 4)"), (2, 3))
    assert list(AccumulatorToOutput().edits(other_shape)) == []
