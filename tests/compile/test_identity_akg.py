"""The identity of every corpus failure on the real AKG: the corpus's cases fall into exactly the bugs the
corpus says (two distinct bugs never share an id, one bug's cases never split), and MindSpore 2.7.2's and
2.9.0's AKG give every case the id MindSpore 2.10's does (a check moved to another line, a crash to another
address, a TVM helper inlined in one release and not in the other): the same partition on three releases."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import pytest
from conftest import CORPUS, HERE, needs_akg, needs_ascend

from reducer.compile import akg
from reducer.compile.akg import compile_case
from reducer.compile.sandbox import Outcome
from reducer.compile.signature import signature_of
from reducer.compile.warm import WorkerPool
from reducer.core.case import Case
from reducer.core.errors import InputError
from reducer.core.targets import AICORE, CPU, Release
from reducer.inputs.crash_yaml import load_case
from reducer.inputs.load import load_input
from reducer.kernels.kinds import outputs_of
from reducer.toolchain import releases

pytestmark = [pytest.mark.akg, needs_akg]

# The corpus cases that are one bug met twice (README's corpus table); every other case is a bug of its own.
ONE_BUG = [
    # GetNewArgs<Call>, from a fused graph, Hybrid DSL and TeLang
    {"pointnet_head_segv", "hybrid_head_attention_segv", "telang_attention_local_reconstruction_segv"},
    {"pointnet_bn_stats_ssa", "nearest_distance_odd_points"},  # split_host_device.cc's SSA check
    {"outer_band_index", "pointnet_group_outer_band"},  # GetOuterBandNode's band_index check
    {"pointnet_head_hang", "pointnet_cls_logsoftmax_hang"},  # the hang in ComputeTransferCopyin
]
DUMPED = CORPUS / "pointnet_matmul_isl_abort" / "Fused_MatMul_split_785238241113303400.info"
TRUTH = HERE / "data" / "truth"


def _identity(case: Case, outcome: Outcome) -> str:
    return signature_of(outcome, case.time_limit).bug_id(case.target)


@pytest.mark.timeout(600)
@pytest.mark.xdist_group("corpus_compiles")
def test_the_corpus_falls_into_exactly_its_bugs(corpus_compiles: dict[str, tuple[Case, Outcome]]) -> None:
    dumped = load_input(DUMPED)
    passing = [name for name, (case, outcome) in corpus_compiles.items() if not signature_of(outcome, 60).failed]
    assert not passing  # every case that passes would share one id: no partition could tell them apart
    ids = {name: _identity(case, outcome) for name, (case, outcome) in corpus_compiles.items()}
    ids[DUMPED.parent.name] = _identity(dumped, compile_case(dumped, outputs_of(dumped)))
    groups: dict[str, set[str]] = defaultdict(set)
    for name, bug in ids.items():
        groups[bug].add(name)
    together = {name for group in ONE_BUG for name in group}
    expected = [group & ids.keys() for group in ONE_BUG] + [{name} for name in ids if name not in together]
    assert sorted(map(sorted, groups.values())) == sorted(map(sorted, filter(None, expected)))


@pytest.mark.timeout(600)
def test_the_truth_kernels_fall_into_their_bugs_on_this_release() -> None:
    """Four kernels of the truth set (tests/data/truth/README.md) compiled live: TVM's simplifier folding
    floordiv(INT64_MIN, -1) under AKG's AttrForLayoutOp and under the Hybrid DSL parser is one bug, its floormod
    and truncdiv overloads two others."""
    names = ("te_floordiv_simplify", "hy_floordiv_index", "te_floormod_simplify", "te_truncdiv_simplify")
    pool = WorkerPool()
    try:
        cases = {name: load_case(TRUTH / name / "crash.yaml") for name in names}
        ids = {name: _identity(case, compile_case(case, outputs_of(case), pool=pool)) for name, case in cases.items()}
    finally:
        pool.close()
    assert ids["te_floordiv_simplify"] == ids["hy_floordiv_index"]
    assert len({ids[name] for name in names}) == 3


# The older releases every corpus case is compiled on: 2.7.2 (the aicore toolchain, whose wheel ships the CPU,
# GPU and Ascend builds) and 2.9.0, installed into the toolchain cache as a target's toolchain is.
OLDER = {
    "2.7.2": AICORE,
    "2.9.0": replace(CPU, toolchain=Release("2.9.0", "cpu", (3, 11))),
}


@pytest.mark.timeout(2400)  # installing 2.9.0 on a machine without it: a few minutes of pip
@pytest.mark.xdist_group("corpus_compiles")
@pytest.mark.parametrize("release", sorted(OLDER))
def test_an_older_release_gives_every_corpus_case_the_same_bug_id(
    release: str, corpus_compiles: dict[str, tuple[Case, Outcome]]
) -> None:
    """Every CPU and GPU corpus case compiled by an older MindSpore's AKG, wrong results and hangs too: it fails
    there too, with the bug id it has on this release (a check moved to another line, a crash to another
    address, a TVM helper inlined in one release and not in the other), so the corpus falls into the same bugs
    on each. The aicore cases only 2.7.2 compiles: the fixture compiled them there already."""
    if release == "2.7.2":
        needs_ascend()
    try:
        older = releases.ensure(OLDER[release], say=False)
    except InputError as exc:
        pytest.skip(f"MindSpore {release} cannot be installed here: {exc}")
    pool = WorkerPool()
    differ = {}
    try:
        for name, (case, outcome) in corpus_compiles.items():
            if case.target == "aicore":
                continue
            there_case = case.with_(python=older)
            there = signature_of(compile_case(there_case, outputs_of(there_case), pool=pool), case.time_limit)
            if not there.failed or there.bug_id(case.target) != _identity(case, outcome):
                differ[name] = (signature_of(outcome, case.time_limit).one_line(), there.one_line())
    finally:
        pool.close()
    assert not differ, differ


@pytest.mark.timeout(300)
def test_a_compile_gdb_watches_from_its_start_is_placed_as_a_second_run_places_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A case expected to die by a signal is compiled with gdb attached from the start: the same frames as
    the placement by a second run under gdb, without that run; a candidate that compiles is unharmed."""
    crash = load_case(CORPUS / "telang_conv3d_autofuse_segv" / "crash.yaml")
    pool = WorkerPool()
    try:
        placed = compile_case(crash, outputs_of(crash), pool=pool)
        second_runs: list[object] = []
        monkeypatch.setattr(akg, "crash_place", lambda job, pool: second_runs.append(job) or ())
        watched = compile_case(crash, outputs_of(crash), pool=pool, traced=True)
        workaround = crash.with_(attrs={"enable_auto_fuse": False})
        fine = compile_case(workaround, outputs_of(workaround), pool=pool, traced=True)
    finally:
        pool.close()
    assert placed.stack_by == watched.stack_by == "gdb" and watched.signal == placed.signal
    assert watched.stack == placed.stack
    assert watched.stack[0] == "akg::schedule::FuseCheck::GetInnerNonReduceAxisLen(air::ComputeOpNode*)"
    assert second_runs == []
    assert fine.returncode == 0 and fine.signal is None and fine.stack == ()
