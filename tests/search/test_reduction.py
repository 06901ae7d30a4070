"""The search on its own, judged by plain functions on Cases (no compiler): ddmin ends 1-minimal, the
transform search takes the first interesting edit, and the log lists the accepted edits in order."""

from __future__ import annotations

from reducer.core.case import Case, TensorSpec
from reducer.kernels.kinds import size_of
from reducer.search.passes import (
    DeleteEntries,
    DeletionPass,
    NumberPass,
    ShrinkDims,
    SimplifyAttrValues,
    TransformPass,
)
from reducer.search.passes.statements import DeleteStatements
from reducer.search.reduction import Predicate, Reduction

KERNEL = """def k(a):
    b = output_tensor((4,), a.dtype)
    t = a[0] * 2.0
    u = a[1] + 1.0
    for i in range(4):
        b[i] = a[i] * t
    return b
"""


def case(**kw) -> Case:
    return Case("t", KERNEL, "k", (TensorSpec((4,), "float32"),), **kw)


def test_ddmin_keeps_exactly_the_needed_attrs_and_logs_what_it_deleted() -> None:
    attrs = {f"a{i}": i for i in range(12)}
    search = Reduction(
        case(attrs=attrs), Predicate(lambda c: {"a2", "a9"} <= set(c.attrs)), schedule=[DeleteEntries("attrs")]
    )
    assert search.run().attrs == {"a2": 2, "a9": 9}
    deleted = [name for entry in search.log for name in entry["edit"].removeprefix("delete ").split(", ")]
    assert sorted(deleted) == sorted(set(attrs) - {"a2", "a9"})  # each deleted once, named
    size = f"{size_of(case()).tokens} tokens, volume 4"  # deleting attrs leaves both as they were
    assert all(entry["pass"] == "attrs" and entry["size"] == size for entry in search.log)


def test_statements_shrink_to_what_the_predicate_needs_and_the_result_is_1_minimal() -> None:
    def needs_t_and_the_loop(c: Case) -> bool:
        return "t = a[0] * 2.0" in c.source and "for i in range(4)" in c.source

    search = Reduction(case(), Predicate(needs_t_and_the_loop), schedule=[DeleteStatements()])
    best = search.run()
    assert "u = " not in best.source and needs_t_and_the_loop(best)
    p = DeleteStatements()
    for group in range(p.groups(best)):
        units = p.units(best, group)
        for drop in range(len(units)):
            smaller = p.keep(best, group, [u for u in range(len(units)) if u != drop])
            assert smaller is None or not needs_t_and_the_loop(smaller), units[drop]
    assert any("line 4: `u = a[1] + 1.0`" in entry["edit"] for entry in search.log)


def test_transform_search_takes_edits_in_order_and_logs_each() -> None:
    search = Reduction(
        case(attrs={"dim": "0 0 16 1"}),
        Predicate(lambda c: c.inputs[0].shape[0] >= 3 and c.attrs.get("dim", "").count(" ") == 3),
        schedule=[ShrinkDims(), SimplifyAttrValues()],
    )
    best = search.run()
    assert best.inputs[0].shape == (3,)
    assert best.attrs == {"dim": "0 0 1 1"}
    assert [e["pass"] for e in search.log] == ["dims", "attr-values"]
    assert search.log[0]["edit"] == "dim 0[0]: 4 -> 3"
    assert search.log[1]["edit"] == "attr dim: '0 0 16 1' -> '0 0 1 1'"


def test_a_dim_goes_down_to_its_floor_in_a_logarithmic_number_of_compiles() -> None:
    judged: list[int] = []

    def keeps(c: Case) -> bool:
        judged.append(c.inputs[0].shape[0])
        return c.inputs[0].shape[0] >= 1000

    search = Reduction(case().with_(inputs=(TensorSpec((1024,), "float32"),)), Predicate(keeps), [ShrinkDims()])
    assert search.run().inputs[0].shape == (1000,)
    # one round: 5 leaps, 1023 1022 1020 1016 1008 992, then bisection (1000, 996, 998, 999 or so); the second
    # round's leaps and 999; one compile per unit would be 24
    assert len(judged) <= 5 + 6 + 5 + 6, judged
    assert [e["edit"] for e in search.log][:2] == ["dim 0[0]: 1024 -> 1023", "dim 0[0]: 1023 -> 1022"]


def test_a_dim_that_keeps_the_bug_only_at_some_values_ends_on_one_that_keeps_it() -> None:
    def keeps(c: Case) -> bool:
        return c.inputs[0].shape[0] % 32 == 0 and c.inputs[0].shape[0] >= 200

    search = Reduction(case().with_(inputs=(TensorSpec((1024,), "float32"),)), Predicate(keeps), [ShrinkDims()])
    assert keeps(search.run()) and search.best.inputs[0].shape[0] < 1024


def test_every_pass_is_one_of_the_three_kinds_and_each_schedule_names_a_pass_once() -> None:
    from reducer.search.passes import SCHEDULES

    for schedule in SCHEDULES.values():
        names = [p.name for p in schedule]
        assert len(names) == len(set(names)), names  # a log names the pass of each edit
        for p in schedule:
            assert sum(isinstance(p, kind) for kind in (DeletionPass, TransformPass, NumberPass)) == 1, p.name
