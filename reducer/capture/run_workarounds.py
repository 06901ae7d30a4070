"""The way out of wrong results, verified on the user's own run: MindSpore's graph-kernel flags
(MS_DEV_GRAPH_KERNEL_FLAGS, read as `graph_kernel_flags` at startup) that keep the wrong kernels' ops out of
fusion, one op of each wrong kernel at a time (all the run's wrong kernels in one flag: the run passes only
when none is left), and last fusion itself off. Each is tried by running the user's command again with the
flag added to theirs; the least invasive one that makes the run pass ends the search."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from reducer.bundle.write import RunWorkaround
from reducer.capture.found import FLAGS_ENV
from reducer.compile.sandbox import Outcome
from reducer.compile.user_run import run_command
from reducer.core.errors import InputError
from reducer.kernels import graph as graphs
from reducer.kernels.kinds import kind_of_info

MAX_OPS = 3  # ops of the wrong kernel tried one at a time before fusion is turned off
FUSION_OFF = "--opt_level=0"

# The user's command run again with this flag added to its graph-kernel flags, its output to this log:
# the setting as the user would make it, and how the run ended.
Rerun = Callable[[str, Path], tuple[str, Outcome]]


def candidates(graphs_of_run: list[dict[str, Any]]) -> list[str]:
    """The flags to try, least invasive first: for each wrong kernel one kind of its ops kept out of fusion (the
    last ops first: a wrong kernel's last op writes its output), all of them in one flag, since the run
    passes only when every wrong kernel is gone; then graph-kernel fusion off."""
    orders = [list(dict.fromkeys(reversed(graphs.op_names(graph)))) for graph in graphs_of_run]
    flags = []
    for step in range(MAX_OPS):
        ops = dict.fromkeys(order[min(step, len(order) - 1)] for order in orders if order)
        flags.append(f"--disable_cluster_ops={','.join(ops)}")
    return [*dict.fromkeys(flags), FUSION_OFF]


def _outcome(outcome: Outcome) -> str:
    if outcome.timed_out:
        return "killed at the run's time limit"
    if outcome.returncode == 0:
        return "the run passes (exit status 0)"
    if outcome.signal is not None:
        return f"the run dies by signal {outcome.signal}"
    return f"the run still fails (exit status {outcome.returncode})"


def try_flags(infos: list[dict[str, Any]], rerun: Rerun, logs: Path) -> list[RunWorkaround]:
    """Each candidate flag tried on the run until one makes it pass, for all the wrong kernels `infos` of the
    run at once (those that are not fused graphs left out: the flags do not touch them); every run's output in
    `logs`."""
    tried = []
    fused = [info for info in infos if (kind := kind_of_info(info)) and kind.graph_kernel_flags]
    for number, flag in enumerate(candidates(fused) if fused else [], 1):
        try:
            setting, outcome = rerun(flag, logs / f"run-{number}.log")
        except InputError as exc:
            tried.append(RunWorkaround(f"{FLAGS_ENV} with {flag}", f"not run: {exc}", False))
            break
        passes = outcome.returncode == 0 and not outcome.timed_out
        tried.append(RunWorkaround(setting, _outcome(outcome), passes))
        if passes:
            break
    return tried


def rerun_of(command: list[str], cwd: Path, env: dict[str, str], timeout: float, memory_mb: float) -> Rerun:
    """The user's command run again as capture ran it (in `cwd`, with `env`), quietly: its output to the log."""

    def rerun(flag: str, log: Path) -> tuple[str, Outcome]:
        flags = f"{env.get(FLAGS_ENV, '')} {flag}".strip()
        log.parent.mkdir(parents=True, exist_ok=True)
        outcome = run_command(command, cwd, {**env, FLAGS_ENV: flags}, timeout, memory_mb, log, echo=None)
        return f"{FLAGS_ENV}={flags!r}", outcome

    return rerun
