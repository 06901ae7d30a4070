"""The bucket search on verdicts given by hand (no compile: every representative here is a call of the list,
and the oracle refuses to compile): the fewest buckets, the cheapest bucket per call, a dim the kernel reduces
over padded only with a mask, which the dispatch module then refuses with the reason."""

from __future__ import annotations

import pytest
from conftest import CORPUS

from reducer.core.case import Expectation
from reducer.inputs.crash_yaml import load_case
from reducer.inputs.shape_list import ShapeLine
from reducer.search.oracle import Oracle
from reducer.shapes.buckets import buckets
from reducer.shapes.dispatch import routes
from reducer.shapes.grid import COMPILES, FAILS, Cell

pytestmark = pytest.mark.timeout(120)
CASE = load_case(CORPUS / "nearest_distance_odd_points" / "crash.yaml")


def _no_compile(*args: object, **kwargs: object) -> None:
    raise AssertionError("the bucket search compiled a shape the list already decided")


def _plan(verdicts: dict[tuple[int, int], str]) -> tuple[list[ShapeLine], list[Cell]]:
    lines = [ShapeLine(f"list:{i}", f"N={n} M={m}", ((2, n, 3), (2, m, 3))) for i, (n, m) in enumerate(verdicts)]
    cells = [
        Cell(line, "cpu", verdict, "bug-a" if verdict == FAILS else None)
        for line, verdict in zip(lines, verdicts.values(), strict=True)
    ]
    return lines, cells


def _search(verdicts: dict[tuple[int, int], str]):
    lines, cells = _plan(verdicts)
    with Oracle(Expectation("error"), 1, _no_compile) as oracle:  # type: ignore[arg-type]
        return buckets(CASE, lines, cells, ["cpu"], oracle, check=False, budget=0)


def test_the_fewest_buckets_and_the_cheapest_for_each_call() -> None:
    found = _search({(27, 64): FAILS, (29, 64): FAILS, (28, 64): COMPILES, (32, 64): COMPILES, (40, 64): COMPILES})
    [bucket] = found.chosen  # 32 stands for both; 28 only for 27
    assert bucket.text == "N=32 M=64" and {c.text for c in bucket.covers} == {"N=27 M=64", "N=29 M=64"}
    assert bucket.cost == (32 - 27) * 6 + (32 - 29) * 6 and not bucket.mask_needed
    assert not found.uncovered
    bucketed, refused = routes(found)
    assert bucketed == {((2, 27, 3), (2, 64, 3)): ((2, 32, 3), (2, 64, 3)),
                        ((2, 29, 3), (2, 64, 3)): ((2, 32, 3), (2, 64, 3))} and not refused  # fmt: skip


def test_a_reduced_dim_is_padded_only_with_a_mask_and_dispatch_refuses_it() -> None:
    found = _search({(27, 31): FAILS, (27, 64): COMPILES, (28, 31): COMPILES})
    groups = {g.label: g for g in found.groups}
    assert groups["query[1]"].effect.safe and not groups["ref[1]"].effect.safe
    [bucket] = found.chosen  # padding the query count needs no mask: preferred though both cover the call
    assert bucket.text == "N=28 M=31" and not bucket.mask_needed
    found = _search({(27, 31): FAILS, (27, 64): COMPILES, (26, 31): COMPILES})
    [bucket] = found.chosen  # only the reference points can grow now
    assert bucket.text == "N=27 M=64" and bucket.mask_needed == ("ref[1]",)
    bucketed, refused = routes(found)
    assert not bucketed and "pads ref[1], which the kernel reduces over" in refused[((2, 27, 3), (2, 31, 3))]


def test_a_call_nothing_covers_says_why() -> None:
    found = _search({(27, 64): FAILS, (20, 64): COMPILES})
    assert not found.chosen
    [(call, why)] = found.uncovered
    assert call.text == "N=27 M=64" and "padding budget (0 shapes) was spent" in why
