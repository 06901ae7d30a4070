"""The grid of a long shape list spread over a night's executors (`--executor dask --scheduler ADDR`, or a
LocalCluster): the calls cut into chunks, each chunk compiled on a worker through its own oracle (warm workers,
the persistent cache of the machine it runs on), the cells flowing back as chunks finish. A chunk the cluster
lost leaves its calls without a verdict, saying why, never a verdict about the kernel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reducer.core.case import Case
from reducer.inputs.shape_list import ShapeLine
from reducer.nightly.executors import make_executor
from reducer.search.oracle import Oracle
from reducer.session import Settings, compiler_for
from reducer.shapes.grid import NO_VERDICT, Cell, compiled_as_far_as, grid

CHUNK_LINES = 16


def run_chunk(spec: dict[str, Any]) -> dict[str, Any]:
    """One chunk of calls on a worker: {"cells", "seconds" per target, "compiles"}."""
    settings: Settings = spec["settings"]
    with (
        compiler_for(settings) as (compiler, cache),
        Oracle(compiled_as_far_as(spec["case"]), settings.jobs, compiler, cache=cache) as oracle,
    ):
        cells, seconds = grid(spec["case"], spec["lines"], spec["targets"], oracle, spec["check"])
        return {"cells": cells, "seconds": seconds, "compiles": oracle.counters.compiles}


def grid_on_cluster(
    case: Case,
    lines: list[ShapeLine],
    targets: list[str],
    settings: Settings,
    check: bool,
    scheduler: str | None,
    on_done: Callable[[int], None],
) -> tuple[list[Cell], dict[str, float], int]:
    """(the cells in the list's order, the seconds the workers spent per target, their compiles)."""
    chunks = [lines[i : i + CHUNK_LINES] for i in range(0, len(lines), CHUNK_LINES)]
    worker = Settings(1, cache=settings.cache)  # one compile at a time per single-threaded Dask worker
    specs = [
        {"n": n, "case": case, "lines": chunk, "targets": targets, "check": check, "settings": worker}
        for n, chunk in enumerate(chunks)
    ]
    executor = make_executor("dask", scheduler, settings.jobs, run_chunk)
    found: dict[int, list[Cell]] = {}
    seconds = dict.fromkeys(targets, 0.0)
    compiles = 0
    try:
        for spec, result in executor.run(specs):
            n = spec["n"]
            if "cells" in result:
                found[n] = result["cells"]
                compiles += result["compiles"]
                for target, spent in result["seconds"].items():
                    seconds[target] = round(seconds[target] + spent, 1)
            else:
                why = result.get("error", "the job gave no result")
                found[n] = [Cell(line, t, NO_VERDICT, said=why) for t in targets for line in spec["lines"]]
            on_done(len(spec["lines"]) * len(targets))
    finally:
        executor.close()
    cells = [cell for n in range(len(chunks)) for cell in found[n]]
    return sorted(cells, key=lambda c: targets.index(c.target)), seconds, compiles
