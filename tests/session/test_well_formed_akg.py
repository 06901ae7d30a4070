"""Against the real AKG: a reduction ends on a well-formed kernel that is 1-minimal (no single statement
can go, no loop can be flattened) and fails the same way; every hand-found kernel in bench/known_minimal/
still fails with its corpus case's signature."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CORPUS, ROOT, SharedReductions, needs_akg

from reducer.core.case import Expectation
from reducer.inputs.crash_yaml import load_case
from reducer.kernels.kinds import kind_of, size_of
from reducer.search.oracle import Oracle
from reducer.search.passes.base import Edit
from reducer.search.passes.control import FlattenControl
from reducer.search.passes.statements import DeleteStatements

pytestmark = [pytest.mark.akg, needs_akg]

KNOWN_MINIMAL = ROOT / "bench" / "known_minimal"


def single_deletions(case) -> list[Edit]:
    p = DeleteStatements()
    edits = []
    for group in range(p.groups(case)):
        units = p.units(case, group)
        for drop in range(len(units)):
            smaller = p.keep(case, group, [u for u in range(len(units)) if u != drop])
            if smaller is not None:
                edits.append(Edit(f"delete {units[drop]}", smaller))
    return edits


@pytest.mark.timeout(900)
@pytest.mark.xdist_group("conv3d_gemm_tiling")
def test_conv3d_reduces_to_a_well_formed_1_minimal_kernel_no_bigger_than_the_hand_found_one(
    shared_reduction: SharedReductions,
) -> None:
    bundle = shared_reduction.bundle("conv3d_gemm_tiling")
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert reduction["well_formed"] == {"holds": True, "why_not": "", "required": "yes", "undecided": []}
    assert "well-formed" in (bundle / "ISSUE.md").read_text()
    reduced = load_case(bundle / "crash.yaml")
    hand = load_case(KNOWN_MINIMAL / "conv3d_gemm_tiling" / "crash.yaml")
    assert size_of(reduced).tokens <= size_of(hand).tokens
    assert kind_of(reduced).ill_formed(reduced) == ""
    assert reduction["signature"]["location"] == "tiling_utils.cc:193"
    assert reduced.expect is not None
    with Oracle(reduced.expect, jobs=2) as oracle:
        assert oracle.interesting(reduced)
        edits = single_deletions(reduced) + list(FlattenControl().edits(reduced))
        assert len(edits) >= 5  # the loops and statements of the nest
        found = oracle.first_interesting(edits)
    assert found is None, found.description  # no single statement or loop can go


@pytest.mark.timeout(300)
@pytest.mark.parametrize("folder", sorted(p.parent for p in KNOWN_MINIMAL.glob("*/crash.yaml")), ids=lambda p: p.name)
def test_a_hand_found_minimal_kernel_still_fails_like_its_corpus_case(folder: Path) -> None:
    known = load_case(folder / "crash.yaml")
    corpus = load_case(CORPUS / folder.name / "crash.yaml")
    assert known.expect == corpus.expect and isinstance(known.expect, Expectation)
    assert kind_of(known).ill_formed(known) == ""
    assert size_of(known).tokens < size_of(corpus).tokens
    with Oracle(known.expect) as oracle:
        assert oracle.interesting(known)
