"""The `reduce` command: one typer command per way in (capture, from-log, run, check, shapes, corpus, toolchain),
listed in that order in the help. Every option is checked before any work starts; a bad one is one line
`error: ...` and exit 2. The exit codes live in EXIT_CODES, which the top-level help prints. What the commands
do lives in the library; here are their options, their errors and what they print."""

from __future__ import annotations

import contextlib
import enum
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import psutil
import typer
from rich.console import Console
from rich.progress import Progress, TextColumn

import reducer
from reducer.capture.interpreter import given
from reducer.capture.pipeline import NOT_CHECKED, RIGHT, CaptureOptions
from reducer.capture.sources import Limits, NothingFailed, ResultsCheck, capture, from_log
from reducer.compile.cache import default_cache_path
from reducer.core.case import Case
from reducer.core.errors import InputError, NotFailingError
from reducer.core.targets import NAMES, TARGETS, Target
from reducer.core.words import counted
from reducer.diagnosis.diagnose import DEFAULT_BUDGET
from reducer.diagnosis.triage import COMPILER_BUG
from reducer.inputs.load import load_input, original_files
from reducer.inputs.shape_list import ShapeLine, dim_ranges, read_shape_file, run_shapes
from reducer.kernels.kinds import kind_of, size_of
from reducer.kernels.size import Size
from reducer.nightly.run import NightOptions, run_night
from reducer.search.oracle import Counters
from reducer.session import Events, Settings, original_signature, reduce_case
from reducer.shapes.buckets import PADDED_BUDGET
from reducer.shapes.plan import ShapesOptions, make_plan, targets_for
from reducer.shapes.report import check_words, compile_words
from reducer.toolchain import releases
from reducer.toolchain.builds import choose_build
from reducer.toolchain.launch import akg_build as build_for
from reducer.toolchain.launch import find_toolchain, target_interpreter

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
EXIT_NOT_FAILING = 3
EXIT_NEW_BUG = 4
EXIT_NOT_AKG = 5
EXIT_INTERRUPTED = 130
EXIT_CODES = {
    EXIT_OK: "done",
    EXIT_INTERNAL: "an unexpected error in akg-reduce itself (a traceback): please report it",
    EXIT_BAD_INPUT: "bad input or option, said in one line 'error: ...'",
    EXIT_NOT_FAILING: "the case does not fail (as expected), or the run or log shows no failing kernel",
    EXIT_NEW_BUG: "corpus: a new or changed bug tonight (see its report)",
    EXIT_NOT_AKG: "run: the triage says the failure is not AKG's (a usage error or the environment)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C or SIGTERM); what was done so far is kept",
}
CACHE_ENV = "AKG_REDUCE_CACHE"
COMMANDS = ("capture", "from-log", "run", "check", "shapes", "corpus", "toolchain")
# A cap on a training run is a guard for the machine (the kernel's OOM killer takes whatever it likes), not a
# budget: most of the memory there is, so that a run which fits is never killed.
MEMORY_SHARE = 0.8
DEFAULT_RUN_MEMORY = int(MEMORY_SHARE * psutil.virtual_memory().total / 2**20)

HELP = """Shrink a failing MindSpore AKG compile to the smallest kernel that fails the same way, and write a bug
report bundle for it (ISSUE.md, repro.py, the kernel, logs).

\b
Start from what you have:
  reduce capture -- python train.py  a failing run: its AKG failures, reduced
  reduce from-log run.log            the log of a failing run
  reduce crash.yaml                  a case (the same as: reduce run crash.yaml)
  reduce check crash.yaml            compile a case once, print its signature
  reduce shapes crash.yaml --dims .. which calls of a kernel fail; buckets
  reduce corpus cases/               the nightly run over a folder of cases
  reduce toolchain                   what compiles each target here

Every command takes -h/--help. -o/--output is the folder a command writes, -j/--jobs how many compiles run at
once, -q/--quiet silences progress and status lines on stderr (errors still print). Colour is off when NO_COLOR
is set or the output is not a terminal.
"""
EPILOG = (
    "\b\nExit codes:\n"
    + "\n".join(f"  {code:<4} {meaning}" for code, meaning in EXIT_CODES.items())
    + f"""

\b
Environment:
  {CACHE_ENV}       the compile cache file (as --cache)
  AKG_REDUCE_TOOLCHAINS  where toolchains are installed (reduce toolchain)
  XDG_CACHE_HOME         the default of both: $XDG_CACHE_HOME/akg-reduce
  NO_COLOR               set: no colour
"""
)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help=HELP,
    epilog=EPILOG,
    rich_markup_mode=None,  # help texts are plain: `START..STOP[/STEP]` is not markup
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)  # errors: never quiet
status = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)  # progress: quiet with -q
out = Console(highlight=False, markup=False, soft_wrap=True)


class Executor(enum.StrEnum):
    """Where a command's compiles run."""

    local = "local"
    dask = "dask"


TargetName = enum.StrEnum("TargetName", {name: name for name in NAMES})  # a choice the help lists


BUILD_HELP = "the AKG build to compile with, a folder of lib/plugin/ (default: chosen by the target)"
ATTRS_HELP = "build attrs as JSON (replaces the file's), e.g. from MindSpore's 'Compile error ... build attrs:'"
JSON_HELP = "print one JSON object on stdout, nothing else there (its keys: see below)"

Jobs = Annotated[int, typer.Option("-j", "--jobs", min=1, metavar="N", help="compiles at once")]
Quiet = Annotated[bool, typer.Option("-q", "--quiet", help="no progress or status lines on stderr")]
NoCache = Annotated[bool, typer.Option("--no-cache", help="do not read or write the persistent cache")]
Cache = Annotated[
    Path,
    typer.Option(
        "--cache",
        metavar="FILE",
        envvar=CACHE_ENV,
        show_envvar=True,
        dir_okay=False,
        help="the persistent compile cache (SQLite)",
    ),
]
NoDiagnosis = Annotated[bool, typer.Option("--no-diagnosis", help="bundles without the diagnosis")]
NoReduce = Annotated[bool, typer.Option("--no-reduce", help="write and check each failing case, do not reduce it")]
RunPython = Annotated[
    Path | None,
    typer.Option(
        "--python",
        metavar="PATH",
        help="the Python that ran the model: its MindSpore rebuilds the kernels (capture: found from the run; "
        "from-log: akg-reduce's own)",
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
Scheduler = Annotated[
    str | None,
    typer.Option("--scheduler", metavar="ADDRESS", help="Dask scheduler address (default: a local cluster of -j)"),
]
ALL_CORES = os.cpu_count() or 1
CACHE_FILE = default_cache_path()


def _output(what: str) -> Any:
    return typer.Option("-o", "--output", metavar="DIR", file_okay=False, help=f"the folder {what} go to")


def _fail(code: int, message: str, as_json: bool = False) -> typer.Exit:
    err.print(f"error: {message}")
    if as_json:
        _answer(code, error=message)
    return typer.Exit(code)


def _answer(code: int, **fields: Any) -> None:
    """The one JSON object of --json: the exit code and its meaning, and what the command found."""
    print(json.dumps({"exit": code, "meaning": EXIT_CODES[code], **fields}, default=str))


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _command(quiet: bool, interrupted: str, about: Path | None = None, as_json: bool = False) -> Iterator[None]:
    """What every command shares: -q, SIGTERM taken as Ctrl-C, and the exit of its errors: bad input is 2, a
    case that does not fail 3, an interrupt 130, each one line (`interrupted`: what is left, and how to go on)."""
    status.quiet = quiet
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    except InputError as exc:
        raise _fail(EXIT_BAD_INPUT, _about(about, exc), as_json) from None
    except (NotFailingError, NothingFailed) as exc:
        raise _fail(EXIT_NOT_FAILING, str(exc), as_json) from None
    except KeyboardInterrupt:
        raise _fail(EXIT_INTERRUPTED, f"interrupted; {interrupted}", as_json) from None


def _about(path: Path | None, exc: InputError) -> str:
    """An input error naming the file: a field checked after loading (the target's AKG build, the python
    interpreter) is the field of `path`."""
    text = str(exc)
    return f"{path}: {text}" if path is not None and text.startswith("field '") else text


def _cache(no_cache: bool, cache: Path) -> Path | None:
    return None if no_cache else cache


class _Progress:
    """Live status line on a terminal; one line per improvement in logs."""

    def __init__(self, case: Case) -> None:
        self.start = time.monotonic()
        self.counters = Counters()
        self.status = status.status("starting", spinner="dots")
        self.original = size_of(case)

    def stage(self, text: str) -> None:
        status.print(f"[{time.monotonic() - self.start:6.1f}s] {text}")
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
        status.print(
            f"[{time.monotonic() - self.start:6.1f}s] {name:<13} {count}"
            f"  statements {s.statements:>3}  volume {s.volume:>8}  attrs {s.attrs}  env {s.env}"
            f"  | compiles {self.counters.compiles}  rejected {self.counters.invalid}",
        )
        self._status(name, case)


def _amount(size: Size, case: Case) -> str:
    return kind_of(case).amount(size)


@contextlib.contextmanager
def _progress_of(case: Case) -> Iterator[Events]:
    progress = _Progress(case)
    with progress.status:
        yield Events(progress.on_pass, progress.on_improve, progress.stage, progress.on_oracle)


def _capture_options(jobs: int, cache: Path | None, no_diagnosis: bool, no_reduce: bool) -> CaptureOptions:
    settings = Settings(jobs, cache=cache, diagnose=not no_diagnosis)
    return CaptureOptions(settings, not no_reduce, _progress_of, lambda line: status.print(f"capture: {line}"))


def _report(report: dict[str, Any], output: Path) -> None:
    """One line per failing kernel found, what became of it, and the exit code the findings call for."""
    for k in report["kernels"]:
        then = k.get("bundle") or (f"same bug as {k['duplicate_of']}" if "duplicate_of" in k else k["status"])
        verdict = f"  ({k['verdict']})" if k.get("verdict") else ""
        out.print(f"{k['name']}: {k['signature']}  ->  {then}{verdict}")
        for way_out in (w for w in k.get("run_workarounds", []) if w["passes"]):
            out.print(f"  way out, verified on the run: {way_out['setting']}")
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


def _toolchain_line(target: Target) -> str:
    """What compiles `target` here, or what is missing; nothing is installed."""
    release = target.toolchain
    try:
        toolchain = find_toolchain(target_interpreter(target, install=False), None)
        assert toolchain.mindspore_dir is not None  # find_toolchain refuses an interpreter without MindSpore
        build = choose_build(toolchain.mindspore_dir, toolchain.mindspore_version, target, None)
    except InputError as exc:
        if release is not None and releases.installed(target) is None:
            return (
                f"{target.name}: missing; 'reduce toolchain {target.name}' installs MindSpore {release.mindspore} "
                f"(about 2.7 GB) into {releases.venv_of(release)}"
            )
        return f"{target.name}: missing; {exc}"
    return f"{target.name}: AKG build {build.name} of MindSpore {toolchain.mindspore_version} at {toolchain.python}"


def _version(shown: bool) -> None:
    if shown:
        out.print(f"akg-reduce {reducer.__version__}")
        for target in TARGETS.values():
            out.print(_toolchain_line(target))
        raise typer.Exit()


@app.callback()
def top(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version,
            is_eager=True,
            help="the version; the MindSpore and AKG build per target",
        ),
    ] = False,
) -> None:
    """The options before a command."""


CAPTURE_TIMEOUT_HELP = "seconds the whole command may run (a run stalled on a compile that died ends sooner)"
MEMORY_HELP = f"MiB the command's process tree may use (default: {MEMORY_SHARE:.0%} of this machine's memory)"
CHECK_RESULTS_HELP = (
    "when no compile fails but the run does (a failed assertion on its results), check what every kernel it "
    "built computes against a reference, and reduce the wrong ones"
)
CHECK_ALWAYS_HELP = "check what the kernels compute even when the run passes (implies --check-results)"


@app.command(
    "capture",
    context_settings={"allow_interspersed_args": False},
    short_help="Run your failing command; reduce every AKG failure in it.",
)
def capture_command(
    command: Annotated[
        list[str], typer.Argument(metavar="COMMAND", help="the failing command, after --: python train.py ...")
    ],
    output: Annotated[Path, _output("run.log, cases and bundles")] = Path("out"),
    run_timeout: Annotated[
        float, typer.Option("--run-timeout", min=1, metavar="SECONDS", help=CAPTURE_TIMEOUT_HELP)
    ] = 3600,
    memory: Annotated[int, typer.Option("--memory", min=64, metavar="MIB", help=MEMORY_HELP)] = DEFAULT_RUN_MEMORY,
    no_reduce: NoReduce = False,
    jobs: Jobs = ALL_CORES,
    cache: Cache = CACHE_FILE,
    no_cache: NoCache = False,
    no_diagnosis: NoDiagnosis = False,
    check_results: Annotated[bool, typer.Option("--check-results", help=CHECK_RESULTS_HELP)] = False,
    check_always: Annotated[bool, typer.Option("--check-always", help=CHECK_ALWAYS_HELP)] = False,
    python: RunPython = None,
    quiet: Quiet = False,
) -> None:
    """Run your failing MindSpore command and reduce every AKG failure in it. COMMAND runs here, in this folder;
    every AKG compile that failed in it is collected, and each distinct failure reduced into OUT/<kernel>/;
    OUT/capture.json lists what was found. With --check-results, a run that fails with no failing compile has
    what its kernels compute checked, and the wrong ones reduced."""
    options = _capture_options(jobs, _cache(no_cache, cache), no_diagnosis, no_reduce)
    results = ResultsCheck.ALWAYS if check_always else ResultsCheck.FAILED if check_results else ResultsCheck.OFF
    with _command(quiet, f"processes stopped, what was found so far is in {output}"):
        run_python = given(python) if python else None
        limits = Limits(run_timeout, memory)
        report = capture(command, Path.cwd(), dict(os.environ), output, limits, options, results, run_python)
    _report(report, output)


@app.command("from-log", short_help="Reduce every AKG failure in the log of a failing run.")
def from_log_command(
    log: Annotated[Path, typer.Argument(metavar="LOG", help="the output of a failing MindSpore run")],
    output: Annotated[Path, _output("cases and bundles")] = Path("out"),
    no_reduce: NoReduce = False,
    jobs: Jobs = ALL_CORES,
    cache: Cache = CACHE_FILE,
    no_cache: NoCache = False,
    no_diagnosis: NoDiagnosis = False,
    python: RunPython = None,
    quiet: Quiet = False,
) -> None:
    """Reduce every AKG failure in the log of a failing run. Every failing AKG compile is read out of LOG, and
    each distinct failure reduced into OUT/<kernel>/, rebuilt with the MindSpore of --python (default:
    akg-reduce's own)."""
    options = _capture_options(jobs, _cache(no_cache, cache), no_diagnosis, no_reduce)
    with _command(quiet, f"what was found so far is in {output}, rerun to resume"):
        report = from_log(log, output, options, given(python) if python else None)
    _report(report, output)


RUN_JSON = (
    "With --json, stdout holds one JSON object: exit, meaning (the exit code's), bundle and archive (paths), "
    "bug (its id), signature (kind, message, location, frames, component, raw), triage (verdict: compiler-bug, "
    "usage-error or environment; label, reason, evidence, advice, unsure), stats (compiles, invalid, cache hits, "
    "seconds, ...); on an error: exit, meaning, error."
)


@app.command("run", epilog=RUN_JSON, short_help="Reduce a case (crash.yaml or .info) into a bundle.")
def run(
    crash: Annotated[Path, typer.Argument(metavar="CRASH", help="crash.yaml of the failing kernel, or a bare .info")],
    output: Annotated[Path, _output("the bundle and its .tar.gz")] = Path("out"),
    jobs: Jobs = ALL_CORES,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.1,
            metavar="SECONDS",
            help="seconds per compile (default: 10 x the original's, at least 10)",
        ),
    ] = None,
    repeat: Annotated[
        int,
        typer.Option(
            "--repeat", min=1, metavar="N", help="flaky failures: a candidate counts if any of N compiles fails"
        ),
    ] = 1,
    cold: Annotated[bool, typer.Option("--cold", help="a new process per compile instead of a warm worker")] = False,
    cache: Cache = CACHE_FILE,
    no_cache: NoCache = False,
    no_diagnosis: Annotated[
        bool, typer.Option("--no-diagnosis", help="skip the workarounds and the shape boundary after the reduction")
    ] = False,
    diagnosis_budget: Annotated[
        float,
        typer.Option(
            "--diagnosis-budget", min=1, metavar="SECONDS", help="seconds for workarounds and the shape boundary"
        ),
    ] = DEFAULT_BUDGET,
    attrs: Annotated[str | None, typer.Option("--attrs", metavar="JSON", help=ATTRS_HELP)] = None,
    akg_build: Annotated[str | None, typer.Option("--akg-build", metavar="BUILD", help=BUILD_HELP)] = None,
    allow_ill_formed: Annotated[
        bool,
        typer.Option(
            "--allow-ill-formed",
            help="accept Hybrid DSL candidates that read memory they never wrote or leave outputs unwritten",
        ),
    ] = False,
    as_json: AsJson = False,
    quiet: Quiet = False,
) -> None:
    """Reduce a case to the smallest one that fails the same way, and write the bundle OUT/<name>/ and
    OUT/<name>.tar.gz. Exit 5 when the triage finds the failure is not AKG's: a usage error or the
    environment (its advice says what to do)."""
    with _command(quiet, "the best case so far is saved, rerun to resume", crash, as_json):
        case = load_input(crash, timeout, attrs, akg_build, allow_ill_formed)
        if case.allow_ill_formed and not allow_ill_formed:
            status.print(
                f"note: the original kernel is not well-formed ({kind_of(case).ill_formed(case)}); "
                "its candidates need not be either"
            )
        build_for(case)  # a target without its AKG build is bad input, before anything runs
        files = original_files(crash)
        with _progress_of(case) as events:
            settings = Settings(jobs, repeat, cold, _cache(no_cache, cache), not no_diagnosis, diagnosis_budget)
            bundle, stats = reduce_case(case, files, output, settings, events)
    reduction = json.loads((bundle / "reduction.json").read_text())
    triage = reduction.get("triage")
    code = EXIT_NOT_AKG if triage and triage["verdict"] != COMPILER_BUG else EXIT_OK
    if as_json:
        archive = bundle.with_name(f"{bundle.name}.tar.gz")
        signature = reduction["signature"]
        _answer(code, bundle=bundle, archive=archive, bug=stats["bug"], signature=signature, triage=triage, stats=stats)
    else:
        out.print(
            f"bundle: {bundle}  ({stats['compiles']} compiles, {stats['invalid']} rejected, "
            f"{stats['cache_hits'] + stats['stored_hits']} cache hits, {stats['seconds']} s)"
        )
        if triage:
            out.print(f"verdict: {triage['label']}: {triage['reason']}")
            out.print(f"what to do: {triage['advice']}")
    raise typer.Exit(code)


CHECK_JSON = (
    "With --json, stdout holds one JSON object: exit, meaning (the exit code's), bug (its id), signature (kind, "
    "message, location, frames, component, raw), line (the signature in one line); on an error: exit, meaning, "
    "error."
)


@app.command("check", epilog=CHECK_JSON, short_help="Compile a case once; print its failure signature.")
def check(
    crash: Annotated[Path, typer.Argument(metavar="CRASH", help="crash.yaml (or .info) to compile once")],
    attrs: Annotated[str | None, typer.Option("--attrs", metavar="JSON", help=ATTRS_HELP)] = None,
    akg_build: Annotated[str | None, typer.Option("--akg-build", metavar="BUILD", help=BUILD_HELP)] = None,
    as_json: AsJson = False,
    quiet: Quiet = False,
) -> None:
    """Compile a case once and print its failure signature (exit 3 if it does not fail as expected)."""
    with _command(quiet, "nothing was written", crash, as_json):
        case = load_input(crash, attrs=attrs, akg_build=akg_build)
        sig = original_signature(case, runs=1).signature
    if as_json:
        _answer(EXIT_OK, bug=sig.bug_id(case.target), signature=sig.to_dict(), line=sig.one_line())
    else:
        out.print(sig.one_line())


SHAPES_HELP = "a file of calls, one per line: the shapes of the kernel's inputs in order, e.g. [1, 512, 64] [8, 64]"
DIMS_HELP = "calls from ranges: NAME[AXIS]=START..STOP[/STEP], e.g. 'x[1]=512..2048/64' (repeat: every combination)"
FROM_RUN_HELP = "calls from a run: every .info under this folder (akg_kernel_meta/) that holds the same kernel"
TARGETS_HELP = f"comma-separated targets to compile for, of {', '.join(NAMES)} (default: every one compiled here)"


@app.command("shapes", short_help="Which calls of a kernel fail, on which target, as which bug.")
def shapes_command(
    crash: Annotated[Path, typer.Argument(metavar="CRASH", help="crash.yaml (or .info) of the kernel")],
    shapes: Annotated[Path | None, typer.Option("--shapes", metavar="FILE", dir_okay=False, help=SHAPES_HELP)] = None,
    dims: Annotated[list[str] | None, typer.Option("--dims", metavar="RANGE", help=DIMS_HELP)] = None,
    from_run: Annotated[
        Path | None, typer.Option("--from-run", metavar="DIR", file_okay=False, help=FROM_RUN_HELP)
    ] = None,
    output: Annotated[Path, _output("plan.json, plan.md and bundles")] = Path("plan"),
    targets: Annotated[str | None, typer.Option("--targets", metavar="LIST", help=TARGETS_HELP)] = None,
    jobs: Jobs = ALL_CORES,
    cache: Cache = CACHE_FILE,
    no_cache: NoCache = False,
    no_check: Annotated[
        bool, typer.Option("--no-check", help="do not check what the calls that compile compute")
    ] = False,
    no_reduce: Annotated[bool, typer.Option("--no-reduce", help="write each bug's case, do not reduce it")] = False,
    bucket_budget: Annotated[
        int, typer.Option("--bucket-budget", min=0, metavar="N", help="padded shapes compiled at most to find buckets")
    ] = PADDED_BUDGET,
    executor: Annotated[Executor, typer.Option("--executor", help="where the calls compile")] = Executor.local,
    scheduler: Scheduler = None,
    no_diagnosis: NoDiagnosis = False,
    quiet: Quiet = False,
) -> None:
    """Which calls of a kernel fail, on which target, as which bug. The kernel of CRASH is compiled for every
    call of a shape list on every target: the pass rate per target and bug; buckets (bigger shapes that
    compile) for the failing calls; one case, reduced into a bundle, per bug. Writes OUT/plan.json and
    OUT/plan.md."""
    with _command(quiet, "nothing of the plan is written", crash):
        case = load_input(crash)
        lines = _shape_lines(case, shapes, dims or [], from_run)
        settings = Settings(jobs, cache=_cache(no_cache, cache), diagnose=not no_diagnosis)
        named = tuple(t.strip() for t in targets.split(",") if t.strip()) if targets else ()
        named = tuple(targets_for(case, named))  # checked before anything runs
        if scheduler and executor != Executor.dask:
            raise InputError("option '--scheduler' needs '--executor dask'")
        options = ShapesOptions(settings, named, not no_check, not no_reduce, bucket_budget, executor.value, scheduler)
        with Progress(
            *Progress.get_default_columns(), TextColumn("{task.fields[stage]}"), console=status, transient=True
        ) as bar:
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
            f"{target}: {rate['compiles']} of {counted(rate['calls'], 'call')} {compile_words(rate)} ({share}), "
            f"{rate['fails']} "
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


CORPUS_EPILOG = f"Exit {EXIT_NEW_BUG} when a case's bug is new or changed tonight, 0 when nothing is new."


@app.command("corpus", epilog=CORPUS_EPILOG, short_help="The nightly run over a folder of cases.")
def corpus(
    folder: Annotated[
        Path,
        typer.Argument(
            metavar="FOLDER", exists=True, file_okay=False, help="folder of cases: every crash.yaml and .info under it"
        ),
    ],
    output: Annotated[Path, _output("state, bundles and reports")] = Path("corpus-out"),
    executor: Annotated[Executor, typer.Option("--executor", help="where the cases run")] = Executor.local,
    scheduler: Scheduler = None,
    jobs: Annotated[
        int, typer.Option("-j", "--jobs", min=1, metavar="N", help="compiles at once (one case each)")
    ] = ALL_CORES,
    case_timeout: Annotated[
        float | None, typer.Option("--case-timeout", min=1, metavar="SECONDS", help="seconds one case may take in all")
    ] = None,
    cache: Cache = CACHE_FILE,
    no_cache: NoCache = False,
    no_diagnosis: NoDiagnosis = False,
    quiet: Quiet = False,
) -> None:
    """The nightly run over a folder of cases: dedupe, reduce what is new or changed, notice what got fixed;
    state and reports in OUT. A second run resumes or compiles only what changed."""
    options = NightOptions(executor.value, scheduler, jobs, case_timeout, _cache(no_cache, cache), not no_diagnosis)
    columns = (*Progress.get_default_columns(), TextColumn("{task.fields[case]}"))
    with _command(quiet, "rerun to resume where it stopped"), Progress(*columns, console=status, transient=True) as bar:
        task = bar.add_task("cases", total=None, case="")

        def advance(slug: str, done: int, total: int) -> None:
            bar.update(task, completed=done, total=total, case=slug)

        summary = run_night(folder, output, options, advance)
    actions = ", ".join(f"{n} {action}" for action, n in sorted(summary.actions.items()))
    out.print(f"run {summary.run}: {actions}; {summary.compiles} compiles")
    out.print("reports: " + "  ".join(str(p) for p in summary.reports))
    if summary.news:
        out.print(f"new or changed: {counted(summary.news, 'case')}")
        raise typer.Exit(EXIT_NEW_BUG)


@app.command("toolchain", short_help="What compiles each target here; install one.")
def toolchain_command(
    name: Annotated[
        TargetName | None, typer.Argument(metavar="TARGET", help="the target whose toolchain to install or find")
    ] = None,
    quiet: Quiet = False,
) -> None:
    """What compiles each target here. Without TARGET: each target, installed or missing, and where; nothing is
    installed. With TARGET: install (once) or find what compiles it when this MindSpore has no AKG build for it
    (for aicore, MindSpore 2.7.2, about 2.7 GB, in the tool's cache), and print it."""
    if name is None:
        for target in TARGETS.values():
            out.print(_toolchain_line(target))
        return
    with _command(quiet, "an unfinished install is redone by the next run"):
        target = TARGETS[name]
        toolchain = find_toolchain(target_interpreter(target), None)
        build = (
            None
            if toolchain.mindspore_dir is None
            else choose_build(toolchain.mindspore_dir, toolchain.mindspore_version, target, None)
        )
    out.print(f"{target.name}: MindSpore {toolchain.mindspore_version} at {toolchain.python}")
    if build is not None:
        out.print(f"AKG build {build.name}: {build.plugin_dir}/libakg.so, sha256 {build.sha256}")


# The click that typer parses with (its own copy since typer 0.2x) raises this for a bad option or argument;
# typer exports only the BadParameter kind of it.
UsageError: type[Exception] = typer.BadParameter.__mro__[1]


def main() -> None:
    """The `reduce` program: a first argument that is neither a command nor a top-level option is a case to run
    (`reduce crash.yaml` is `reduce run crash.yaml`); no argument at all is the help."""
    args = sys.argv[1:] or ["--help"]
    if args[0] not in {*COMMANDS, "-h", "--help", "--version"}:
        args = ["run", *args]
    try:
        code = app(args, prog_name="reduce", standalone_mode=False)
    except UsageError as exc:
        context = getattr(exc, "ctx", None)
        where = f" (see '{context.command_path} -h')" if context else ""
        err.print(f"error: {' '.join(exc.format_message().split())}{where}")  # type: ignore[attr-defined]
        code = EXIT_BAD_INPUT
    except (typer.Abort, KeyboardInterrupt):
        err.print("error: interrupted")
        code = EXIT_INTERRUPTED
    except Exception:
        traceback.print_exc()
        err.print(f"error: {EXIT_CODES[EXIT_INTERNAL]} with the traceback above")
        code = EXIT_INTERNAL
    sys.exit(code or EXIT_OK)
