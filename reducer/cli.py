"""The `reduce` command: `reduce crash.yaml` minimises a failure and writes a bundle; `reduce check
crash.yaml` compiles a case once and prints its signature; `reduce capture -- CMD` and `reduce from-log LOG`
start from a user's failing MindSpore run; `reduce corpus DIR` is the nightly run over a folder of cases.
Parses arguments, calls the library, prints."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, TextColumn

from reducer.bundle.write import bundle_triage
from reducer.capture.pipeline import NOT_CHECKED, RIGHT, CaptureOptions
from reducer.capture.sources import Limits, NothingFailed, ResultsCheck, capture, from_log
from reducer.compile.cache import default_cache_path
from reducer.core.case import Case
from reducer.core.errors import InputError, NotFailingError
from reducer.core.targets import target_named, with_toolchain
from reducer.core.words import counted
from reducer.diagnosis.diagnose import DEFAULT_BUDGET
from reducer.inputs.load import load_input, original_files
from reducer.inputs.shape_list import ShapeLine, dim_ranges, read_shape_file, run_shapes
from reducer.kernels.kinds import kind_of, size_of
from reducer.kernels.size import Size
from reducer.nightly.run import NightOptions, run_night
from reducer.search.oracle import Counters
from reducer.session import Events, Settings, original_signature, reduce_case
from reducer.shapes.buckets import PADDED_BUDGET
from reducer.shapes.plan import ShapesOptions, make_plan, targets_for
from reducer.shapes.report import check_words
from reducer.toolchain.builds import choose_build
from reducer.toolchain.launch import akg_build as build_for
from reducer.toolchain.launch import find_toolchain, target_interpreter

EXIT_BAD_INPUT = 2
EXIT_NOT_FAILING = 3
EXIT_INTERRUPTED = 130
TOOLCHAIN_HELP = f"the target whose toolchain to install or find: {', '.join(t.name for t in with_toolchain())}"
BUILD_HELP = "the AKG build to compile with, a folder of lib/plugin/ (default: chosen by the target)"
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
        kind = kind_of(case)
        count = f"{kind.unit} {kind.count(s):>4}/{kind.count(self.original)}"
        err.print(
            f"[{time.monotonic() - self.start:6.1f}s] {name:<13} {count}"
            f"  statements {s.statements:>3}  volume {s.volume:>8}  attrs {s.attrs}  env {s.env}"
            f"  | compiles {self.counters.compiles}  rejected {self.counters.invalid}",
        )
        self._status(name, case)


def _amount(size: Size, case: Case) -> str:
    return kind_of(case).amount(size)


def _about(path: Path, exc: InputError) -> str:
    """An input error naming the file: a field checked after loading (the target's AKG build, the python
    interpreter) is the field of `path`."""
    text = str(exc)
    return f"{path}: {text}" if text.startswith("field '") else text


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _progress_of(case: Case) -> Iterator[Events]:
    progress = _Progress(case)
    with progress.status:
        yield Events(progress.on_pass, progress.on_improve, progress.stage, progress.on_oracle)


def _capture_options(jobs: int, no_cache: bool, no_diagnosis: bool, no_reduce: bool) -> CaptureOptions:
    cache = None if no_cache else default_cache_path()
    settings = Settings(jobs, cache=cache, diagnose=not no_diagnosis)
    return CaptureOptions(settings, not no_reduce, _progress_of, lambda line: err.print(f"capture: {line}"))


def _report(report: dict[str, Any], output: Path) -> None:
    """One line per failing kernel found, what became of it, and the exit code the findings call for."""
    for k in report["kernels"]:
        then = k.get("bundle") or (f"same bug as {k['duplicate_of']}" if "duplicate_of" in k else k["status"])
        verdict = f"  ({k['verdict']})" if k.get("verdict") else ""
        out.print(f"{k['name']}: {k['signature']}  ->  {then}{verdict}", markup=False)
        for way_out in (w for w in k.get("run_workarounds", []) if w["passes"]):
            out.print(f"  way out, verified on the run: {way_out['setting']}", markup=False)
    for k in report["not_reproduced"]:
        out.print(f"{k['name']}: not reproduced alone: {k['why']}")
    for k in report.get(NOT_CHECKED, []):
        out.print(f"{k['name']}: results not checked: {k['why']}")
    if report.get(RIGHT):
        out.print(f"computes what the reference says: {', '.join(k['name'] for k in report[RIGHT])}")
    out.print(f"report: {output / 'capture.json'}")
    if report["cut_off"]:
        cut = "; ".join(f"{c['name']}: {c['why']}" for c in report["cut_off"])
        raise _fail(EXIT_BAD_INPUT, f"cannot read a failing kernel: {cut} (the log's lines were cut; attach the .info)")
    if not report["kernels"]:
        raise _fail(EXIT_NOT_FAILING, "no failing kernel fails the same way on its own (see capture.json)")


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
    akg_build: Annotated[str | None, typer.Option("--akg-build", help=BUILD_HELP)] = None,
    allow_ill_formed: Annotated[
        bool,
        typer.Option(
            "--allow-ill-formed",
            help="accept Hybrid DSL candidates that read memory they never wrote or leave outputs unwritten",
        ),
    ] = False,
) -> None:
    """Reduce CRASH to the smallest case that fails the same way and write OUT/<name>/ + .tar.gz."""
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        case = load_input(crash, timeout, attrs, akg_build, allow_ill_formed)
        if case.allow_ill_formed and not allow_ill_formed:
            out.print(
                f"note: the original kernel is not well-formed ({kind_of(case).ill_formed(case)}); "
                "its candidates need not be either",
                markup=False,
            )
        build_for(case)  # a target without its AKG build is bad input, before anything runs
        files = original_files(crash)
        with _progress_of(case) as events:
            cache = None if no_cache else default_cache_path()
            settings = Settings(jobs, repeat, cold, cache, not no_diagnosis, diagnosis_budget)
            bundle, stats = reduce_case(case, files, output, settings, events)
    except InputError as exc:
        raise _fail(EXIT_BAD_INPUT, _about(crash, exc)) from None
    except NotFailingError as exc:
        raise _fail(EXIT_NOT_FAILING, str(exc)) from None
    except KeyboardInterrupt:
        raise _fail(EXIT_INTERRUPTED, "interrupted; the best case so far is saved, rerun to resume") from None
    out.print(
        f"bundle: {bundle}  ({stats['compiles']} compiles, {stats['invalid']} rejected, "
        f"{stats['cache_hits'] + stats['stored_hits']} cache hits, {stats['seconds']} s)"
    )
    _say_triage(bundle)


def _say_triage(bundle: Path) -> None:
    """The bundle's verdict in words: what it is, why, and what to do."""
    found = bundle_triage(bundle)
    if found:
        out.print(f"verdict: {found['label']}: {found['reason']}", markup=False)
        out.print(f"what to do: {found['advice']}", markup=False)


@app.command("check")
def check(
    crash: Annotated[Path, typer.Argument(help="crash.yaml (or .info) to compile once")],
    attrs: Annotated[str | None, typer.Option("--attrs", help=ATTRS_HELP)] = None,
    akg_build: Annotated[str | None, typer.Option("--akg-build", help=BUILD_HELP)] = None,
) -> None:
    """Compile CRASH once and print its failure signature (exit 3 if it does not fail as expected)."""
    try:
        case = load_input(crash, attrs=attrs, akg_build=akg_build)
        sig = original_signature(case, runs=1).signature
    except InputError as exc:
        raise _fail(EXIT_BAD_INPUT, _about(crash, exc)) from None
    except NotFailingError as exc:
        raise _fail(EXIT_NOT_FAILING, str(exc)) from None
    out.print(sig.one_line())


SHAPES_HELP = "a file of calls, one per line: the shapes of the kernel's inputs in order, e.g. [1, 512, 64] [8, 64]"
DIMS_HELP = "calls from ranges: NAME[AXIS]=START..STOP[/STEP], e.g. 'x[1]=512..2048/64' (repeat: every combination)"
FROM_RUN_HELP = "calls from a run: every .info under this folder (akg_kernel_meta/) that holds the same kernel"
TARGETS_HELP = "comma-separated targets to compile for (default: every one this machine compiles for)"


@app.command("shapes")
def shapes_command(
    crash: Annotated[Path, typer.Argument(help="crash.yaml (or .info) of the kernel")],
    shapes: Annotated[Path | None, typer.Option("--shapes", help=SHAPES_HELP)] = None,
    dims: Annotated[list[str] | None, typer.Option("--dims", help=DIMS_HELP)] = None,
    from_run: Annotated[Path | None, typer.Option("--from-run", help=FROM_RUN_HELP)] = None,
    output: Annotated[Path, typer.Option("-o", "--output", help="where plan.json, plan.md and bundles go")] = Path(
        "plan"
    ),
    targets: Annotated[str | None, typer.Option("--targets", help=TARGETS_HELP)] = None,
    jobs: Annotated[int, typer.Option("-j", "--jobs", min=1, help="compiles at once")] = os.cpu_count() or 1,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="do not read or write the persistent cache")] = False,
    no_check: Annotated[
        bool, typer.Option("--no-check", help="do not check what the calls that compile compute")
    ] = False,
    no_reduce: Annotated[bool, typer.Option("--no-reduce", help="write each bug's case, do not reduce it")] = False,
    bucket_budget: Annotated[
        int, typer.Option("--bucket-budget", min=0, help="padded shapes compiled at most to find buckets")
    ] = PADDED_BUDGET,
    executor: Annotated[str, typer.Option("--executor", help="where the calls compile: local or dask")] = "local",
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Dask scheduler address (default: a local cluster of -j)")
    ] = None,
    no_diagnosis: Annotated[bool, typer.Option("--no-diagnosis", help="bundles without the diagnosis")] = False,
) -> None:
    """Compile the kernel of CRASH for every call of a shape list on every target: which calls fail, as which
    bug; the pass rate per target and bug; buckets (bigger shapes that compile) for the failing calls; one
    case, reduced into a bundle, per bug. Writes OUT/plan.json and OUT/plan.md."""
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        case = load_input(crash)
        lines = _shape_lines(case, shapes, dims or [], from_run)
        cache = None if no_cache else default_cache_path()
        settings = Settings(jobs, cache=cache, diagnose=not no_diagnosis)
        named = tuple(t.strip() for t in targets.split(",") if t.strip()) if targets else ()
        named = tuple(targets_for(case, named))  # checked before anything runs
        if executor not in ("local", "dask"):
            raise InputError(f"option '--executor': {executor!r}; expected local or dask")
        if scheduler and executor != "dask":
            raise InputError("option '--scheduler' needs '--executor dask'")
        options = ShapesOptions(settings, named, not no_check, not no_reduce, bucket_budget, executor, scheduler)
        with Progress(*Progress.get_default_columns(), TextColumn("{task.fields[stage]}"), console=err) as bar:
            task = bar.add_task("calls", total=None, stage="")
            plan = make_plan(
                case,
                lines,
                output,
                options,
                on_done=lambda n: bar.advance(task, n),
                on_stage=lambda text: bar.update(task, stage=text),
                on_total=lambda n: bar.update(task, total=n),
                events=Events(on_stage=lambda text: bar.update(task, stage=f"reducing: {text}")),
            )
    except InputError as exc:
        raise _fail(EXIT_BAD_INPUT, _about(crash, exc)) from None
    except KeyboardInterrupt:
        raise _fail(EXIT_INTERRUPTED, "interrupted; nothing of the plan is written") from None
    _say_plan(plan, output)


def _shape_lines(case: Case, shapes: Path | None, dims: list[str], from_run: Path | None) -> list[ShapeLine]:
    if sum(x is not None and x != [] for x in (shapes, dims, from_run)) != 1:
        raise InputError("give the calls one way: --shapes FILE, --dims RANGE (repeatable) or --from-run FOLDER")
    if shapes is not None:
        return read_shape_file(shapes, case)
    if dims:
        return dim_ranges(dims, case)
    assert from_run is not None
    return run_shapes(from_run, case)


def _say_plan(plan: dict[str, Any], output: Path) -> None:
    for target, rate in plan["pass_rates"].items():
        share = "no verdict" if rate["pass_rate"] is None else f"{100 * rate['pass_rate']:.0f} %"
        out.print(
            f"{target}: {rate['compiles']} of {counted(rate['calls'], 'call')} compile ({share}), {rate['fails']} "
            f"fail, {rate['wrong']} compute wrong, {rate['invalid']} invalid  [{plan['seconds_per_target'][target]} s]"
        )
    for bug in plan["bugs"]:
        then = bug.get("bundle") or bug.get("not_reduced") or bug["case"]
        out.print(f"bug {bug['bug']}: {counted(bug['calls'], 'call')}: {bug['signature']}  ->  {then}")
    for bucket in plan["buckets"]:
        mask = f"  (needs a mask: {', '.join(bucket['mask_needed'])})" if bucket["mask_needed"] else ""
        out.print(
            f"bucket {bucket['line']}: stands for {counted(len(bucket['covers']), 'call')}, "
            f"padding cost {bucket['padding_cost']}{mask}"
        )
    for call in plan["not_covered"]:
        out.print(f"no bucket for {call['line']}: {call['why']}")
    out.print(f"dispatch: {output / plan['dispatch']['module']}  ({check_words(plan['dispatch']['check'])})")
    out.print(f"plan: {output / 'plan.md'}, {output / 'plan.html'}")


@app.command("toolchain")
def toolchain_command(
    name: Annotated[str, typer.Argument(metavar="TARGET", help=TOOLCHAIN_HELP)] = with_toolchain()[0].name,
) -> None:
    """Install once (or find) what compiles TARGET when this MindSpore has no AKG build for it, and print it:
    for aicore, MindSpore 2.7.2, whose wheel ships AKG's Ascend build, in the tool's cache."""
    try:
        target = target_named(name, "argument 'TARGET'")
        toolchain = find_toolchain(target_interpreter(target), None)
        build = (
            None
            if toolchain.mindspore_dir is None
            else choose_build(toolchain.mindspore_dir, toolchain.mindspore_version, target, None)
        )
    except InputError as exc:
        raise _fail(EXIT_BAD_INPUT, str(exc)) from None
    out.print(f"{target.name}: MindSpore {toolchain.mindspore_version} at {toolchain.python}")
    if build is not None:
        out.print(f"AKG build {build.name}: {build.plugin_dir}/libakg.so, sha256 {build.sha256}")


NO_REDUCE_HELP = "write and check the crash.yaml of each failing kernel, do not reduce"
CAPTURE_TIMEOUT_HELP = "seconds the command may run (a run stalled on a compile that died ends sooner)"
CHECK_RESULTS_HELP = (
    "when no compile fails but the run does (a failed assertion on its results), check what every kernel it "
    "built computes against a reference, and reduce the wrong ones"
)
CHECK_ALWAYS_HELP = "check what the kernels compute even when the run passes (implies --check-results)"


@app.command("capture", context_settings={"allow_interspersed_args": False})
def capture_command(
    command: Annotated[list[str], typer.Argument(help="the failing command, after --: python train.py ...")],
    output: Annotated[Path, typer.Option("-o", "--output", help="where run.log, cases and bundles go")] = Path("out"),
    timeout: Annotated[float, typer.Option("--timeout", min=1, help=CAPTURE_TIMEOUT_HELP)] = 3600,
    memory: Annotated[int, typer.Option("--memory", min=64, help="MB the command's process tree may use")] = 16384,
    no_reduce: Annotated[bool, typer.Option("--no-reduce", help=NO_REDUCE_HELP)] = False,
    jobs: Annotated[int, typer.Option("-j", "--jobs", min=1, help="compiles at once")] = os.cpu_count() or 1,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="do not read or write the persistent cache")] = False,
    no_diagnosis: Annotated[bool, typer.Option("--no-diagnosis", help="bundles without the diagnosis")] = False,
    check_results: Annotated[bool, typer.Option("--check-results", help=CHECK_RESULTS_HELP)] = False,
    check_always: Annotated[bool, typer.Option("--check-always", help=CHECK_ALWAYS_HELP)] = False,
) -> None:
    """Run COMMAND (your MindSpore script) here, collect every AKG compile that failed in it, and reduce each
    distinct failure into OUT/<kernel>/; OUT/capture.json lists what was found. With --check-results, a run
    that fails with no failing compile has what its kernels compute checked, and the wrong ones reduced."""
    signal.signal(signal.SIGTERM, _interrupt)
    options = _capture_options(jobs, no_cache, no_diagnosis, no_reduce)
    results = ResultsCheck.ALWAYS if check_always else ResultsCheck.FAILED if check_results else ResultsCheck.OFF
    try:
        report = capture(command, Path.cwd(), dict(os.environ), output, Limits(timeout, memory), options, results)
    except InputError as exc:
        raise _fail(EXIT_BAD_INPUT, str(exc)) from None
    except NothingFailed as exc:
        raise _fail(EXIT_NOT_FAILING, str(exc)) from None
    except KeyboardInterrupt:
        raise _fail(EXIT_INTERRUPTED, f"interrupted; processes stopped, what was found so far is in {output}") from None
    _report(report, output)


@app.command("from-log")
def from_log_command(
    log: Annotated[Path, typer.Argument(help="the output of a failing MindSpore run")],
    output: Annotated[Path, typer.Option("-o", "--output", help="where cases and bundles go")] = Path("out"),
    no_reduce: Annotated[bool, typer.Option("--no-reduce", help=NO_REDUCE_HELP)] = False,
    jobs: Annotated[int, typer.Option("-j", "--jobs", min=1, help="compiles at once")] = os.cpu_count() or 1,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="do not read or write the persistent cache")] = False,
    no_diagnosis: Annotated[bool, typer.Option("--no-diagnosis", help="bundles without the diagnosis")] = False,
) -> None:
    """Read every failing AKG compile out of LOG and reduce each distinct failure into OUT/<kernel>/."""
    signal.signal(signal.SIGTERM, _interrupt)
    options = _capture_options(jobs, no_cache, no_diagnosis, no_reduce)
    try:
        report = from_log(log, output, options)
    except InputError as exc:
        raise _fail(EXIT_BAD_INPUT, str(exc)) from None
    except NothingFailed as exc:
        raise _fail(EXIT_NOT_FAILING, str(exc)) from None
    except KeyboardInterrupt:
        raise _fail(EXIT_INTERRUPTED, f"interrupted; what was found so far is in {output}, rerun to resume") from None
    _report(report, output)


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
    if args and args[0] not in {"run", "check", "capture", "from-log", "corpus", "shapes", "toolchain", "--help", "-h"}:
        args = ["run", *args]
    app(args, prog_name="reduce")
