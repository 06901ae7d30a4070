"""`reduce shapes`: a kernel over the user's list of calls on every target this machine compiles for. The grid of
verdicts (grid.py), the pass rate per target and per bug, the buckets that stand for the failing calls
(buckets.py), one case per distinct bug met, reduced into a bundle as `reduce` does, and the plan written to
OUT: plan.json for machines, plan.md for people."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reducer.compile.identity import Signature
from reducer.core.case import Case
from reducer.core.errors import InputError, NotFailingError
from reducer.core.files import write_atomic
from reducer.core.targets import NAMES
from reducer.inputs.crash_yaml import case_to_yaml
from reducer.inputs.shape_list import ShapeLine
from reducer.kernels.kinds import kind_of, outputs_of
from reducer.search.oracle import Counters, Oracle
from reducer.session import Events, Settings, compiler_for, reduce_case
from reducer.shapes.buckets import PADDED_BUDGET, DimGroup, buckets, elements
from reducer.shapes.cluster import grid_on_cluster
from reducer.shapes.dispatch import check_module, module_text
from reducer.shapes.figure import shape_map_svg
from reducer.shapes.grid import COMPILES, FAILS, NO_VERDICT, WRONG, Cell, cell_case, compiled_as_far_as, grid
from reducer.shapes.report import plan_html, plan_markdown
from reducer.toolchain.launch import compiles_here

FIGURE = "shape_map.svg"


@dataclass(frozen=True)
class ShapesOptions:
    settings: Settings
    targets: tuple[str, ...] = ()  # () : every target this machine compiles for
    check: bool = True  # check what the calls that compile compute, where that can run here
    reduce: bool = True  # reduce one case per distinct bug into a bundle
    bucket_budget: int = PADDED_BUDGET  # padded shapes compiled at most to find buckets
    executor: str = "local"  # where the grid compiles: "local" (this machine, -j), or "dask"
    scheduler: str | None = None  # the Dask scheduler's address; None: a LocalCluster of -j workers


@dataclass(frozen=True)
class Bug:
    """A distinct bug met on the list: its id, signature, target, how many calls show it, and the smallest."""

    bug: str
    signature: Signature
    target: str
    calls: int
    smallest: ShapeLine

    def case(self, case: Case) -> Case:
        """The smallest call showing it, expecting exactly this failure, named after the bug."""
        shown = cell_case(case, self.smallest.shapes, self.target)
        name = f"{case.name}-{self.bug.replace('@', '-')}"
        return shown.with_(name=name, expect=self.signature.expectation())


def targets_for(case: Case, named: tuple[str, ...]) -> list[str]:
    """The targets to compile for: those named (each must compile here), or every one this machine has a
    build for, the case's own first."""
    if named:
        for target in named:
            if target not in NAMES:
                raise InputError(f"option '--targets': unknown target {target!r}; expected some of {', '.join(NAMES)}")
            if not compiles_here(kind_of(case).on_target(case, target)):
                raise InputError(
                    f"option '--targets': this machine has no AKG build for {target} "
                    "(run `reduce toolchain aicore` for Ascend)"
                )
        return list(dict.fromkeys(named))
    ordered = sorted(NAMES, key=lambda t: t != case.target)
    return [t for t in ordered if compiles_here(kind_of(case).on_target(case, t))]


def pass_rates(cells: list[Cell], targets: list[str]) -> dict[str, dict[str, Any]]:
    """Per target: calls, how many compile (and of those, computed right where checked; `reach`: how far, when
    they stopped before the target's code generator), fail, compute wrong, are invalid, have no verdict; and how
    many calls each bug takes."""
    rates = {}
    for target in targets:
        mine = [c for c in cells if c.target == target]
        counts = Counter(c.verdict for c in mine)
        decided = len(mine) - counts[NO_VERDICT]
        rates[target] = {
            "calls": len(mine),
            **{verdict: counts[verdict] for verdict in (COMPILES, FAILS, WRONG, "invalid", NO_VERDICT)},
            "pass_rate": round(counts[COMPILES] / decided, 4) if decided else None,
            "checked_right": sum(c.checked.startswith("right") for c in mine),
            "reach": next((c.reach for c in mine if c.reach), ""),
            "bugs": dict(Counter(c.bug for c in mine if c.bug)),
        }
    return rates


def distinct_bugs(cells: list[Cell]) -> list[Bug]:
    """The bugs met, most calls first; each with its smallest call (fewest input elements)."""
    found: dict[str, list[Cell]] = {}
    for cell in cells:
        if cell.bug and cell.signature is not None:
            found.setdefault(cell.bug, []).append(cell)
    bugs = []
    for bug, shown in found.items():
        smallest = min(shown, key=lambda c: elements(c.line.shapes))
        assert smallest.signature is not None
        bugs.append(Bug(bug, smallest.signature, smallest.target, len(shown), smallest.line))
    return sorted(bugs, key=lambda b: (-b.calls, b.bug))


def _write_bug_case(case: Case, out: Path) -> Path:
    outputs = outputs_of(case)
    kind = kind_of(case)
    folder = out / "bugs" / case.name
    write_atomic(folder / kind.kernel_file, kind.kernel_text(case, outputs))
    write_atomic(folder / "crash.yaml", case_to_yaml(case, kind.kernel_file, case.expect))
    return folder / "crash.yaml"


def make_plan(
    case: Case,
    lines: list[ShapeLine],
    out: Path,
    options: ShapesOptions,
    on_done: Callable[[int], None] = lambda n: None,
    on_stage: Callable[[str], None] = lambda text: None,
    on_total: Callable[[int], None] = lambda n: None,
    events: Events | None = None,
) -> dict[str, Any]:
    """Run the plan of `case` over `lines` into `out`; returns what plan.json holds. `on_total(n)`: the calls
    to compile, n for all targets; `on_done(n)` as n more are decided; `on_stage(text)` at each step."""
    started = time.monotonic()
    targets = targets_for(case, options.targets)
    counters = Counters()
    jobs = options.settings.jobs
    with (
        compiler_for(options.settings) as (compiler, cache),
        Oracle(compiled_as_far_as(case), jobs, compiler, cache=cache, counters=counters) as oracle,
    ):
        on_stage(f"{len(lines)} calls on {', '.join(targets)}" + (" (Dask)" if options.executor == "dask" else ""))
        on_total(len(lines) * len(targets))
        remote = 0
        if options.executor == "dask":
            cells, seconds, remote = grid_on_cluster(
                case, lines, targets, options.settings, options.check, options.scheduler, on_done
            )
        else:
            cells, seconds = grid(case, lines, targets, oracle, options.check, on_done)
        decided = [t for t in targets if any(c.target == t and c.verdict != NO_VERDICT for c in cells)]
        on_stage("buckets for the failing calls")
        found = buckets(case, lines, cells, decided, oracle, options.check, options.bucket_budget)
    grid_compiles = counters.to_dict() | {"compiles": counters.compiles + remote, "on_the_cluster": remote}
    bugs = distinct_bugs(cells)
    module = module_text(case, cells, found, targets, [f"{b.bug}: {b.signature.one_line()}" for b in bugs])
    write_atomic(out / "dispatch.py", module)
    if options.check and bugs:
        on_stage("checking dispatch.py")
        checked = check_module(case, module, cells, found)
    else:
        checked = {"ran": False, "why": "--no-check" if bugs else "no call fails: nothing to dispatch"}
    plan: dict[str, Any] = {
        "kernel": case.name,
        "kind": kind_of(case).name,
        "targets": targets,
        "shapes": [c.to_dict() for c in cells],
        "pass_rates": pass_rates(cells, targets),
        "seconds_per_target": seconds,
        "dims": [_group_dict(g) for g in found.groups],
        "buckets": [b.to_dict() for b in found.chosen],
        "not_covered": [{"line": line.text, "why": why} for line, why in found.uncovered],
        "dispatch": {"module": "dispatch.py", "check": checked},
        "padded_calls_compiled": [c.to_dict() for c in found.compiled],
        "bugs": [],
        "compiles": grid_compiles,
    }
    for bug in bugs:
        shown = bug.case(case)
        entry = {
            "bug": bug.bug,
            "target": bug.target,
            "signature": bug.signature.one_line(),
            "calls": bug.calls,
            "smallest": bug.smallest.text,
            "case": str(_write_bug_case(shown, out).relative_to(out)),
        }
        if options.reduce:
            on_stage(f"reducing bug {bug.bug} ({bug.signature.one_line()[:80]})")
            entry |= _reduced(shown, out, options.settings, events)
        plan["bugs"].append(entry)
    plan["seconds"] = round(time.monotonic() - started, 1)
    svg = shape_map_svg(cells, found.groups, targets)
    if svg:
        write_atomic(out / FIGURE, svg)
    write_atomic(out / "plan.json", json.dumps(plan, indent=1))
    write_atomic(out / "plan.md", plan_markdown(plan, FIGURE if svg else ""))
    write_atomic(out / "plan.html", plan_html(plan, svg))
    return plan


def _group_dict(group: DimGroup) -> dict[str, Any]:
    return {"dims": group.label, "padding": group.effect.words(), "padded_freely": group.effect.safe}


def _reduced(case: Case, out: Path, settings: Settings, events: Events | None) -> dict[str, Any]:
    """The bundle of one bug's case, or why there is none (it does not fail so on its own, ...)."""
    files = {"crash.yaml": case_to_yaml(case, kind_of(case).kernel_file, case.expect)}
    try:
        bundle, stats = reduce_case(case, files, out / "bundles", settings, events)
    except (NotFailingError, InputError) as exc:  # one bug not reduced leaves the plan and the others standing
        return {"bundle": None, "not_reduced": str(exc)}
    # A wrong result's id names the ops of its kernel: the reduced kernel's differs from the list's calls'.
    return {
        "bundle": str(bundle.relative_to(out)),
        "reduced_bug": stats["bug"],
        "reduction_compiles": stats["compiles"],
    }
