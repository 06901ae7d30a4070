"""One reduction from crash.yaml to bundle: check the original, choose the compile timeout, resume from a
checkpoint, search, confirm the result, collect the IR and write the bundle. The CLI only calls into here."""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reducer.bundle.write import BundleInput, Origin, refuse_foreign, write_bundle
from reducer.compile.akg import check_program, compile_case, freeze_attrs, host_facts, side_files
from reducer.compile.cache import CompileCache
from reducer.compile.identity import Kind, Signature, matches, why_unplaced
from reducer.compile.sandbox import Outcome, allow_compiles, cancel_all, sweep_orphans, temp_dir
from reducer.compile.signature import signature_of
from reducer.compile.warm import WorkerPool
from reducer.core.case import Case, Expectation, TensorSpec
from reducer.core.errors import (
    CheckFailed,
    CompilesFine,
    EnvironmentBroken,
    FailsDifferently,
    Flaky,
    InvalidKernel,
    NeedsCodegen,
    NotChecked,
    NotFailingError,
    Unplaced,
)
from reducer.core.files import write_atomic
from reducer.core.targets import TARGETS
from reducer.diagnosis.diagnose import DEFAULT_BUDGET, Diagnosis, diagnose
from reducer.diagnosis.stage import failing_stage
from reducer.diagnosis.triage import triage
from reducer.kernels.kinds import kind_of, outputs_of, size_of
from reducer.search.oracle import Compiler, Counters, Oracle
from reducer.search.passes import schedule_for
from reducer.search.reduction import Reduction
from reducer.toolchain.builds import codegen_facts
from reducer.toolchain.launch import akg_build, toolchain_of

CONFIRM_RUNS = 3
PROBE_RUNS = 3
HANG_RUNS = 2  # ... of a hang, each of which waits out the full limit (at -j 2, both at once)
STATE_DIR = ".akg-reduce-state"
TIMEOUT_FACTOR = 10  # a candidate may take this many times the original's slowest compile ...
TIMEOUT_FLOOR = 10.0  # ... but never less than this many seconds


@dataclass(frozen=True)
class Settings:
    """How to run the compiles of one reduction."""

    jobs: int = 1
    repeat: int = 1  # flaky failures: a candidate counts when any of `repeat` compiles fails the same way
    cold: bool = False  # a new process per compile instead of forking from a warm worker
    cache: Path | None = None  # the persistent compile cache; None: off
    diagnose: bool = True  # after the reduction: workarounds and the shape boundary (reducer/diagnosis/diagnose.py)
    diagnosis_budget: float = DEFAULT_BUDGET


@contextlib.contextmanager
def compiler_for(settings: Settings) -> Iterator[tuple[Compiler, CompileCache | None]]:
    """The compile function (warm unless `cold`) and the persistent cache of a session; both are closed,
    and every worker stopped, on the way out."""
    pool = None if settings.cold else WorkerPool(settings.jobs)
    cache = CompileCache(settings.cache) if settings.cache else None
    try:
        yield functools.partial(compile_case, pool=pool), cache
    finally:
        if pool:
            pool.close()
        if cache:
            cache.close()


@dataclass
class Events:
    """Callbacks for live progress; all optional."""

    on_pass: Callable[[str, Case], None] = lambda name, case: None
    on_improve: Callable[[str, Case], None] = lambda name, case: None
    on_stage: Callable[[str], None] = lambda stage: None
    on_oracle: Callable[[Counters], None] = lambda counters: None


@dataclass(frozen=True)
class Reproduction:
    """How the original fails: its signature and in how many of the probe runs it failed that way."""

    signature: Signature
    matching: int
    runs: int
    slowest: float  # seconds of the slowest probe compile


def _cannot_compile_here(case: Case, met: Signature, probe: Oracle) -> str:
    """Why this machine cannot compile `case`, and the attr that asks for what it lacks when there is one (an
    attr without which the compile meets something else: `online_tuning` imports a tuner that is not
    installed), found by compiling the case once without each attr."""
    said = f"this machine cannot compile the case for {case.target}: {met.message}: {met.raw}"
    for name in case.attrs:
        without, _ = probe.run(case.with_(attrs={k: v for k, v in case.attrs.items() if k != name}))
        if without.kind is not Kind.ENVIRONMENT:
            return f"{said}; the attr `{name}` asks for it: leave it out, or install what it needs"
    return said


def original_signature(
    case: Case,
    runs: int = PROBE_RUNS,
    jobs: int = 1,
    repeat: int = 1,
    compiler: Compiler = compile_case,
    counters: Counters | None = None,
) -> Reproduction:
    """Run the original `runs` times; it must fail, as `expect` says when given, and every time unless
    `repeat` > 1 accepts a flaky failure. InputError when MindSpore has no AKG build for its target."""
    akg_build(case)
    try:
        outputs_of(case)
    except InvalidKernel as exc:
        raise NotFailingError(f"the original kernel is not valid: {exc}") from None
    with Oracle(case.expect or Expectation("error"), jobs, compiler, counters=counters) as probe:
        results = probe.run_many(case, runs)
        signatures = [sig for sig, _ in results]
        if signatures and all(s.kind is Kind.ENVIRONMENT for s in signatures):
            raise EnvironmentBroken(_cannot_compile_here(case, signatures[0], probe))
    harness = [s for s in signatures if s.kind is Kind.HARNESS]
    if harness and not any(s.failed for s in signatures):
        raise CheckFailed(f"the wrong-result check failed, not AKG: {harness[0].message}: {harness[0].raw}")
    if signatures and all(s.kind is Kind.UNCHECKED for s in signatures):
        raise NotChecked(
            f"not checked: {signatures[0].raw}; there the reference is undefined (an op's input outside its "
            "domain) or a right result may lie as far from it as it is from zero (operands compared while equal "
            "within their errors, a long float16 sum), so nothing tells whether AKG computes it right"
        )
    if signatures and all(s.kind is Kind.CODEGEN for s in signatures):
        target = TARGETS[case.target]
        has, generation = codegen_facts(target)
        raise NeedsCodegen(
            f"the original passes AKG's {target.device} pipeline and {signatures[0].message} ({signatures[0].raw}); "
            f"this machine: {has}. That is {generation}, not AKG's passes: nothing to reduce here"
        )
    failing = [s for s in signatures if s.failed]
    if not failing:
        if case.mismatch is not None:
            said = next((f": {s.raw}" for s in signatures if s.raw), "")
            raise CompilesFine(f"the original case computes the same result as its reference{said}; nothing to reduce")
        raise CompilesFine("the original case compiles without error; nothing to reduce")
    if case.expect is not None:
        wanted = [s for s in failing if matches(s, case.expect)]
        if not wanted:
            raise FailsDifferently(
                f"the original fails differently from expect: got {failing[0].one_line()}; "
                f"expected {case.expect.kind} {case.expect.message!r} at {case.expect.where!r}"
                + (f" in a frame {case.expect.frame!r}" if case.expect.frame else "")
            )
        sig = wanted[0]
    else:
        commonest = Counter(s.key() for s in failing).most_common(1)[0][0]  # one bug: the identity's key
        sig = next(s for s in failing if s.key() == commonest)
    unplaced = why_unplaced(sig)
    if unplaced:
        raise Unplaced(unplaced)
    matching = sum(matches(s, sig.expectation()) for s in signatures)
    if matching < runs and repeat == 1:
        others = "; ".join(sorted({s.one_line() if s.kind is not Kind.NONE else "compiled" for s in signatures}))
        raise Flaky(
            f"flaky: the original failed with [{sig.one_line()}] in {matching} of {runs} runs ({others}); "
            "rerun with --repeat N to count a candidate when any of N compiles fails that way"
        )
    return Reproduction(sig, matching, runs, max(outcome.seconds for _, outcome in results))


def adaptive_timeout(case: Case, original: Reproduction) -> float | None:
    """The compile timeout for the candidates when the user set none: TIMEOUT_FACTOR x the original's
    slowest compile, at least TIMEOUT_FLOOR, so a candidate that hangs is cut early. A hang is the bug
    itself when the original timed out; then the original's limit stays."""
    if case.timeout is not None or original.signature.kind is Kind.TIMEOUT:
        return case.timeout
    return max(TIMEOUT_FACTOR * original.slowest, TIMEOUT_FLOOR)


class Checkpoint:
    """The best case so far and the edits that led there, on disk, written atomically after every
    improvement, read on resume."""

    def __init__(self, out_dir: Path, original: Case) -> None:
        self.path = out_dir / STATE_DIR / f"{original.bundle_name}.json"
        self.original_key = original.key()

    def load(self, original: Case) -> tuple[Case, list[dict[str, str]]] | None:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return None
        if data.get("original") != self.original_key:
            return None
        best = data["best"]
        case = original.with_(
            graph=best.get("graph"),
            source=best["source"],
            inputs=tuple(TensorSpec(tuple(t["shape"]), t["dtype"]) for t in best["inputs"]),
            attrs=best["attrs"],
            env=best["env"],
        )
        return case, list(data.get("edits", []))

    def save(self, best: Case, edits: list[dict[str, str]]) -> None:
        blob = json.dumps({"original": self.original_key, "best": best.content(), "edits": edits}, indent=1)
        write_atomic(self.path, blob, mode=0o600)

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def _dump_ir(
    case: Case, outputs: tuple[TensorSpec, ...], expectation: Expectation, dest: Path, repeat: int
) -> tuple[Outcome, int]:
    """Compile `case` cold with AKG's per-pass IR dump into `dest`; a flaky failure may need up to `repeat`
    compiles to show up in the log. Returns the last outcome and the number of compiles."""
    compiles = 0
    while True:
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir()
        final = compile_case(case, outputs, dump_ir=True, collect=_collect_ir(dest))
        compiles += 1
        if compiles == repeat or matches(signature_of(final, case.time_limit), expectation):
            return final, compiles


def _collect_ir(dest: Path) -> Callable[[Path], None]:
    def collect(workdir: Path) -> None:
        for item in workdir.iterdir():
            if item.is_dir():
                shutil.copytree(item, dest / item.name, dirs_exist_ok=True)

    return collect


def reduce_case(
    case: Case,
    original_files: dict[str, str],
    out_dir: Path,
    settings: Settings,
    events: Events | None = None,
    origin: Origin | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Reduce `case`; returns the bundle folder and the reduction statistics. `origin`: the user's run the
    kernel was captured from, told in the bundle."""
    events = events or Events()
    allow_compiles()
    sweep_orphans()
    refuse_foreign(out_dir / case.bundle_name)
    with compiler_for(settings) as (compiler, cache):
        return _reduce(case, original_files, out_dir, settings, events, compiler, cache, origin)


def _reduce(
    case: Case,
    original_files: dict[str, str],
    out_dir: Path,
    settings: Settings,
    events: Events,
    compiler: Compiler,
    cache: CompileCache | None,
    origin: Origin | None,
) -> tuple[Path, dict[str, Any]]:
    repeat = settings.repeat
    toolchain = toolchain_of(case)
    counters = Counters()  # every compile of this reduction: probes, search, confirmation, IR dump
    events.on_oracle(counters)
    searched, original = _prepare(case, settings, events, compiler, counters)
    expectation = original.signature.expectation()
    with Oracle(expectation, settings.jobs, compiler, repeat, cache, counters) as oracle:
        checkpoint = Checkpoint(out_dir, case)
        search, resumed = _search(searched, oracle, checkpoint, events)
        # The bundle replays with the user's limit (or the default), not the one chosen for the search.
        best = search.best.with_(timeout=case.timeout)
        events.on_stage("confirming the result")
        outputs = outputs_of(best)
        with temp_dir("ir") as ir_dir, ThreadPoolExecutor(1) as side:
            # The IR dump compiles cold, as repro.py does: the bundle's log is what a maintainer will see.
            # With spare cores it runs alongside the confirmation runs.
            dump = functools.partial(_dump_ir, best, outputs, expectation, ir_dir, repeat)
            ir_run = side.submit(dump) if settings.jobs > 1 else None
            signatures = _confirm(best, oracle, expectation, repeat)
            same = [s for s in signatures if matches(s, expectation)]
            diagnosis: Diagnosis | None = None
            if settings.diagnose:
                events.on_stage("diagnosis: workarounds and the shape boundary")
                diagnosis = diagnose(best.with_(timeout=searched.timeout), searched, oracle, settings.diagnosis_budget)
            final, dumps = ir_run.result() if ir_run else dump()
            counters.compiles += dumps
            events.on_stage("triage: compiler bug, usage error or environment")
            stage = failing_stage(final.output, same[0], ir_dir)
            verdict = triage(best, searched, same[0], stage, final.output, oracle)
            events.on_stage("collecting IR and writing the bundle")
            stats = {
                "bug": same[0].bug_id(best.target),  # the minimal case's: a wrong result's ops are its place
                **oracle.counters.to_dict(),
                "rounds": search.rounds,
                "resumed": resumed,
                "repeat": repeat,
                "original_runs": f"{original.matching} of {original.runs}",
                "original_seconds": round(original.slowest, 1),
                "search_timeout": searched.timeout,
                "warm": not settings.cold,
                "diagnosis_compiles": diagnosis.compiles if diagnosis else 0,
            }
            bundle = write_bundle(
                BundleInput(
                    original=case,
                    original_files=original_files,
                    reduced=best,
                    outputs=outputs,
                    signature=same[0],
                    expectation=expectation,
                    log=final.output,
                    ir_dir=ir_dir,
                    toolchain=toolchain,
                    sizes={"original": size_of(case), "reduced": size_of(best)},
                    stats=stats,
                    confirmed=len(same),
                    confirm_runs=len(signatures),
                    stage=stage,
                    host=host_facts(toolchain, akg_build(case), TARGETS[best.target]),
                    side_files=side_files(best),
                    check=check_program(best, outputs) if best.mismatch else None,
                    diagnosis=diagnosis,
                    edits=search.log,
                    origin=origin,
                    build=akg_build(case),
                    triage=verdict,
                ),
                out_dir,
            )
        checkpoint.clear()
        return bundle, stats


def _prepare(
    case: Case, settings: Settings, events: Events, compiler: Compiler, counters: Counters
) -> tuple[Case, Reproduction]:
    """The case the search starts from (a graph's attrs frozen, the candidates' compile timeout chosen) and
    how the original fails."""
    if kind_of(case).tiling_repository:
        events.on_stage("freezing the attrs AKG uses for the kernel")
    frozen = freeze_attrs(case)
    events.on_stage("running the original")
    runs = (HANG_RUNS if case.expect is not None and case.expect.kind == Kind.TIMEOUT else PROBE_RUNS) * settings.repeat
    original = original_signature(frozen, runs, settings.jobs, settings.repeat, compiler, counters)
    return frozen.with_(timeout=adaptive_timeout(case, original)), original


def _search(start: Case, oracle: Oracle, checkpoint: Checkpoint, events: Events) -> tuple[Reduction, bool]:
    """Run the search from `start`, or from the checkpoint when it is still interesting; every improvement
    is checkpointed, and so is the best case when the run is interrupted. Returns it and whether it resumed."""
    resumed = checkpoint.load(start)
    edits: list[dict[str, str]] = []
    if resumed is not None and oracle.interesting(resumed[0]):
        events.on_stage("resuming from the checkpoint")
        start, edits = resumed
    else:
        resumed = None

    def improved(name: str, best: Case) -> None:
        checkpoint.save(best, search.log)
        events.on_improve(name, best)

    search = Reduction(start, oracle, schedule_for(start), on_improve=improved, on_pass=events.on_pass, log=edits)
    try:
        search.run()
    except KeyboardInterrupt:
        cancel_all()
        checkpoint.save(search.best, search.log)
        raise
    return search, resumed is not None


def _confirm(best: Case, oracle: Oracle, expectation: Expectation, repeat: int) -> list[Signature]:
    """The signatures of CONFIRM_RUNS (a hang: HANG_RUNS) x `repeat` compiles of the result; Flaky unless it
    fails the same way every time (or, with `repeat`, at least once). A wrong result is confirmed in fresh
    processes, as repro.py runs it: the runners' verdicts only steered the search."""
    runs = HANG_RUNS if expectation.kind == Kind.TIMEOUT else CONFIRM_RUNS
    if best.mismatch is not None:
        with Oracle(expectation, oracle.jobs, compile_case, counters=oracle.counters) as fresh:
            signatures = [sig for sig, _ in fresh.run_many(best, runs * repeat)]
    else:
        signatures = [sig for sig, _ in oracle.run_many(best, runs * repeat)]
    same = [s for s in signatures if matches(s, expectation)]
    if not same or (repeat == 1 and len(same) < len(signatures)):
        raise Flaky(
            "the reduced case does not fail the same way on every re-run (flaky compiler? try --repeat): "
            + "; ".join(sorted({s.one_line() for s in signatures}))
        )
    return signatures
