"""The `reduce` command: `reduce crash.yaml` minimises a failure and writes a bundle; `reduce check
crash.yaml` compiles a case once and prints its signature; `reduce corpus DIR` is the nightly run over a
folder of cases. Parses arguments, calls the library, prints."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress, TextColumn

from reducer.compile.cache import default_cache_path
from reducer.core.case import Case
from reducer.core.errors import InputError, NotFailingError
from reducer.diagnosis.diagnose import DEFAULT_BUDGET
from reducer.inputs.load import load_input, original_files
from reducer.kernels.kinds import GRAPH, kind_of, size_of
from reducer.kernels.size import Size
from reducer.nightly.run import NightOptions, run_night
from reducer.search.oracle import Counters
from reducer.session import Events, Settings, original_signature, reduce_case

EXIT_BAD_INPUT = 2
EXIT_NOT_FAILING = 3
EXIT_INTERRUPTED = 130
ATTRS_HELP = "build attrs as JSON (replaces the file's), e.g. from MindSpore's 'Compile error ... build attrs:'"

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
out = Console(highlight=False, markup=False, soft_wrap=True)


def _fail(code: int, message: str) -> typer.Exit:
    err.print(f"error: {message}")
    return typer.Exit(code)


class _Progress:
    """Live status line on a terminal; one line per improvement in logs."""

    def __init__(self, case: Case) -> None:
        self.start = time.monotonic()
        self.counters = Counters()
        self.status = err.status("starting", spinner="dots")
        self.original = size_of(case)

    def stage(self, text: str) -> None:
        err.print(f"[{time.monotonic() - self.start:6.1f}s] {text}")
        self.status.update(text)

    def _status(self, name: str, case: Case) -> None:
        self.status.update(
            f"pass {name}: best {_amount(size_of(case), case)}, {self.counters.compiles} compiles, "
            f"{self.counters.invalid} rejected, {time.monotonic() - self.start:.0f} s"
        )

    def on_oracle(self, counters: Counters) -> None:
        self.counters = counters

    def on_pass(self, name: str, case: Case) -> None:
        self._status(name, case)

    def on_improve(self, name: str, case: Case) -> None:
        s = size_of(case)
        count = (
            f"ops {s.ops:>3}/{self.original.ops}"
            if kind_of(case) is GRAPH
            else f"tokens {s.tokens:>4}/{self.original.tokens}"
        )
        err.print(
            f"[{time.monotonic() - self.start:6.1f}s] {name:<13} {count}"
            f"  statements {s.statements:>3}  volume {s.volume:>8}  attrs {s.attrs}  env {s.env}"
            f"  | compiles {self.counters.compiles}  rejected {self.counters.invalid}",
        )
        self._status(name, case)


def _amount(size: Size, case: Case) -> str:
    return kind_of(case).amount(size)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@app.command("run")
def run(
    crash: Annotated[Path, typer.Argument(help="crash.yaml of the failing kernel, or a bare .info")],
    output: Annotated[Path, typer.Option("-o", "--output", help="where the bundle goes")] = Path("out"),
    jobs: Annotated[int, typer.Option("-j", "--jobs", min=1, help="compiles at once")] = os.cpu_count() or 1,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.1, help="seconds per compile (default: 10 x the original's, at least 10)"),
    ] = None,
    repeat: Annotated[
        int, typer.Option("--repeat", min=1, help="flaky failures: a candidate counts if any of N compiles fails")
    ] = 1,
    cold: Annotated[bool, typer.Option("--cold", help="a new process per compile instead of a warm worker")] = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="do not read or write the persistent cache")] = False,
    no_diagnosis: Annotated[
        bool, typer.Option("--no-diagnosis", help="skip the workarounds and the shape boundary after the reduction")
    ] = False,
    diagnosis_budget: Annotated[
        float, typer.Option("--diagnosis-budget", min=1, help="seconds for workarounds and the shape boundary")
    ] = DEFAULT_BUDGET,
    attrs: Annotated[str | None, typer.Option("--attrs", help=ATTRS_HELP)] = None,
) -> None:
    """Reduce CRASH to the smallest case that fails the same way and write OUT/<name>/ + .tar.gz."""
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        case = load_input(crash, timeout, attrs)
        files = original_files(crash)
        progress = _Progress(case)
        events = Events(progress.on_pass, progress.on_improve, progress.stage, progress.on_oracle)
        with progress.status:
            cache = None if no_cache else default_cache_path()
            settings = Settings(jobs, repeat, cold, cache, not no_diagnosis, diagnosis_budget)
            bundle, stats = reduce_case(case, files, output, settings, events)
    except InputError as exc:
        raise _fail(EXIT_BAD_INPUT, str(exc)) from None
    except NotFailingError as exc:
        raise _fail(EXIT_NOT_FAILING, str(exc)) from None
    except KeyboardInterrupt:
        raise _fail(EXIT_INTERRUPTED, "interrupted; the best case so far is saved, rerun to resume") from None
    out.print(
        f"bundle: {bundle}  ({stats['compiles']} compiles, {stats['invalid']} rejected, "
        f"{stats['cache_hits'] + stats['stored_hits']} cache hits, {stats['seconds']} s)"
    )


@app.command("check")
def check(
    crash: Annotated[Path, typer.Argument(help="crash.yaml (or .info) to compile once")],
    attrs: Annotated[str | None, typer.Option("--attrs", help=ATTRS_HELP)] = None,
) -> None:
    """Compile CRASH once and print its failure signature (exit 3 if it does not fail as expected)."""
    try:
        case = load_input(crash, attrs=attrs)
        sig = original_signature(case, runs=1).signature
    except InputError as exc:
        raise _fail(EXIT_BAD_INPUT, str(exc)) from None
    except NotFailingError as exc:
        raise _fail(EXIT_NOT_FAILING, str(exc)) from None
    out.print(sig.one_line())


@app.command("corpus")
def corpus(
    folder: Annotated[Path, typer.Argument(help="folder of cases: every crash.yaml and .info under it")],
    output: Annotated[Path, typer.Option("-o", "--output", help="state, bundles and reports")] = Path("corpus-out"),
    executor: Annotated[str, typer.Option("--executor", help="local | dask")] = "local",
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Dask scheduler address (default: a LocalCluster)")
    ] = None,
    jobs: Annotated[int, typer.Option("-j", "--jobs", min=1, help="cases at once")] = os.cpu_count() or 1,
    case_timeout: Annotated[
        float | None, typer.Option("--case-timeout", min=1, help="seconds one case may take in all")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="do not read or write the persistent cache")] = False,
    no_diagnosis: Annotated[bool, typer.Option("--no-diagnosis", help="bundles without the diagnosis")] = False,
) -> None:
    """Nightly run over FOLDER: dedupe, reduce what is new or changed, notice what got fixed; reports in OUT."""
    signal.signal(signal.SIGTERM, _interrupt)
    if executor not in {"local", "dask"}:
        raise _fail(EXIT_BAD_INPUT, f"option '--executor': expected local or dask, got {executor!r}")
    cache = None if no_cache else default_cache_path()
    options = NightOptions(executor, scheduler, jobs, case_timeout, cache, not no_diagnosis)
    try:
        with Progress(*Progress.get_default_columns(), TextColumn("{task.fields[case]}"), console=err) as bar:
            task = bar.add_task("cases", total=None, case="")

            def advance(slug: str, done: int, total: int) -> None:
                bar.update(task, completed=done, total=total, case=slug)

            summary = run_night(folder, output, options, advance)
    except InputError as exc:
        raise _fail(EXIT_BAD_INPUT, str(exc)) from None
    except KeyboardInterrupt:
        raise _fail(EXIT_INTERRUPTED, "interrupted; rerun to resume where it stopped") from None
    actions = ", ".join(f"{n} {action}" for action, n in sorted(summary.actions.items()))
    out.print(f"run {summary.run}: {actions}; {summary.compiles} compiles")
    out.print("reports: " + "  ".join(str(p) for p in summary.reports))


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] not in {"run", "check", "corpus", "--help", "-h"}:
        args = ["run", *args]
    app(args, prog_name="reduce")
