"""Workarounds a user can ship today: a small, documented set of attr and dtype changes tried on the
minimal case (one compile each), and those that make it compile (or fail another way) tried again on the
ORIGINAL case; only those that make the original compile are reported, and where what the original computes
can be checked here, only those under which it computes right: a way around a crash into a wrong result is
no way out. A compile that stopped before the stage that decides the bug (nvcc, for an invalid-cuda bug on a
machine without it) verifies nothing: the oracle calls it incomplete, never PASSES. Time-boxed."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from reducer.core.case import Case, Mismatch, TensorSpec
from reducer.core.targets import TARGETS, Target
from reducer.kernels.kinds import as_float16, as_float32, kind_of, results_unchecked
from reducer.search.oracle import OTHER_FAILURE, PASSES, Oracle


@dataclass(frozen=True)
class Perturbation:
    name: str
    why: str
    apply: Callable[[Case], Case | None]  # None: does not apply to this case


@dataclass(frozen=True)
class Workaround:
    name: str
    why: str
    attrs: dict  # the original's attrs with the workaround applied
    inputs: tuple[TensorSpec, ...]  # the original's inputs with the workaround applied
    results: str = ""  # of a crash's way out: "right", or why what it computes was not checked

    def to_dict(self) -> dict:
        results = {"results": self.results} if self.results else {}
        inputs = [t.to_dict() for t in self.inputs]
        return {"name": self.name, "why": self.why, "attrs": self.attrs, "inputs": inputs, **results}


def _dim(tile: Callable[[int], int]) -> Callable[[Case], Case | None]:
    """Manual tiling of the deepest loop nest: AKG's `dim` attr, one `band axis tile 1` group per loop."""

    def apply(case: Case) -> Case | None:
        extents = kind_of(case).loop_extents(case)
        if not extents:
            return None
        dim = " ".join(f"0 {axis} {tile(extent)} 1" for axis, extent in enumerate(extents))
        return case.with_(attrs={**case.attrs, "dim": dim})

    return apply


def _attrs(**values: object) -> Callable[[Case], Case | None]:
    def apply(case: Case) -> Case | None:
        if all(case.attrs.get(name) == value for name, value in values.items()):
            return None
        return case.with_(attrs={**case.attrs, **values})

    return apply


def _without(name: str) -> Callable[[Case], Case | None]:
    def apply(case: Case) -> Case | None:
        return case.with_(attrs={k: v for k, v in case.attrs.items() if k != name}) if name in case.attrs else None

    return apply


# Every change tried, by name; each target lists those its users try (core/targets.py `workarounds`).
CATALOGUE = {
    p.name: p
    for p in [
        Perturbation(
            "manual tiling, whole loops",
            "AKG's `dim` attr: every loop of the deepest nest in one tile, so auto-tiling is skipped",
            _dim(lambda extent: extent),
        ),
        Perturbation(
            "manual tiling, tile 1",
            "AKG's `dim` attr: every loop of the deepest nest tiled by 1",
            _dim(lambda extent: 1),
        ),
        Perturbation("auto-inline off", "`enable_auto_inline: false`", _attrs(enable_auto_inline=False)),
        Perturbation("auto-fuse off", "`enable_auto_fuse: false`", _attrs(enable_auto_fuse=False)),
        Perturbation(
            "manual tiling, small tiles",
            "AKG's `dim` attr: the loops of the deepest nest in tiles of at most 16, which keep the buffers within UB",
            _dim(lambda extent: min(extent, 16)),
        ),
        Perturbation("rescheduling off", "`pragma_enable_reschedule: false`", _attrs(pragma_enable_reschedule=False)),
        Perturbation(
            "loop partition off",
            "`enable_pre_poly_loop_partition: false`, `enable_post_poly_loop_partition: false`",
            _attrs(enable_pre_poly_loop_partition=False, enable_post_poly_loop_partition=False),
        ),
        Perturbation("double buffering off", "`enable_double_buffer: false`", _attrs(enable_double_buffer=False)),
        Perturbation("multi-core off", "`enable_multicore: false`", _attrs(enable_multicore=False)),
        Perturbation("self-dependence removal off", "`pragma_rmselfdep: false`", _attrs(pragma_rmselfdep=False)),
        Perturbation(
            "float16 instead of float32",
            "inputs in float16, which Ascend's vector emitters require for some reductions",
            as_float16,
        ),
        Perturbation("vectorisation off", "`enable_vectorization: false`", _attrs(enable_vectorization=False)),
        Perturbation("common subexpression elimination off", "`disable_cse: true`", _attrs(disable_cse=True)),
        Perturbation("float32 instead of float16/float64", "inputs in float32", as_float32),
    ]
}  # fmt: skip


def perturbations_for(target: Target) -> list[Perturbation]:
    """The changes tried for a case of `target`, in the order its table entry lists them."""
    return [CATALOGUE[name] for name in target.workarounds]


def _user_attr_removals(case: Case) -> list[Perturbation]:
    return [Perturbation(f"without `{name}`", f"the attr `{name}` left out", _without(name)) for name in case.attrs]


def find_workarounds(
    minimal: Case, original: Case, oracle: Oracle, budget: float
) -> tuple[list[Workaround], list[dict]]:
    """(workarounds verified on the original, every try with its outcome on the minimal and the original).
    Attrs the minimal case still has are needed by the bug: leaving each out is tried first."""
    deadline = time.monotonic() + budget
    verified: list[Workaround] = []
    tries: list[dict] = []
    for perturbation in [*_user_attr_removals(minimal), *perturbations_for(TARGETS[minimal.target])]:
        small = perturbation.apply(minimal)
        if small is None:
            continue
        entry = {"name": perturbation.name, "why": perturbation.why}
        tries.append(entry)
        if time.monotonic() > deadline:
            entry["minimal"] = "not tried: time budget spent"
            continue
        entry["minimal"] = oracle.outcome(small)
        big = perturbation.apply(original)
        # A change that removes the bug from the minimal case may make the original compile even when the
        # minimal case then meets another failure (a degenerate kernel of its own).
        if (entry["minimal"] != PASSES and not entry["minimal"].startswith(OTHER_FAILURE)) or big is None:
            continue
        entry["original"] = oracle.outcome(big)
        if entry["original"] != PASSES:
            continue
        results = results_under(big, oracle)
        if results.startswith(OTHER_FAILURE):
            entry["original"] = wrong_words(results)
            continue
        verified.append(Workaround(perturbation.name, perturbation.why, big.attrs, big.inputs, results))
    return verified, tries


def wrong_words(results: str) -> str:
    """A way out under which the original compiles and computes wrong, for the tries table."""
    return f"compiles, computes wrong: {results.removeprefix(OTHER_FAILURE)}"


def results_under(way_out: Case, oracle: Oracle) -> str:
    """What the original computes under a way out of its failure: '' for a wrong-result case (the outcome said
    it), "right", "not checked: why", or the wrong-result check's other failure."""
    if way_out.mismatch is not None:
        return ""
    if why := results_unchecked(way_out):
        return f"not checked: {why}"
    outcome = oracle.outcome(way_out.with_(mismatch=Mismatch()))
    if outcome == PASSES:
        return "right"
    return outcome if outcome.startswith(OTHER_FAILURE) else f"not checked: {outcome}"
