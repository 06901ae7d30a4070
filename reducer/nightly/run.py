"""One night over a corpus: lock OUT, discover the cases, decide per case what it needs (nothing, one
recheck compile, a reduction), run the jobs on the executor, record every result as it arrives, and
write the reports. A run killed midway is resumed by the next: recorded cases are skipped, a reduction
in progress continues from its checkpoint."""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reducer.compile.cache import default_cache_path
from reducer.compile.identity import stored_bug_id
from reducer.core.errors import InputError
from reducer.nightly.discover import CorpusCase, discover
from reducer.nightly.executors import Executor, make_executor
from reducer.nightly.job import BROKEN, CHANGED, NEW, RECHECK, REDUCE, REPRODUCES, UNDECIDED
from reducer.nightly.report import write_reports
from reducer.nightly.state import CaseRecord, CorpusState

STATE_FILE = "state.sqlite"
LOCK_FILE = ".lock"


@dataclass
class NightOptions:
    executor: str = "local"
    scheduler: str | None = None
    jobs: int = 1
    case_timeout: float | None = None
    cache: Path | None = field(default_factory=default_cache_path)
    diagnose: bool = True  # workarounds and shape boundary in every new bundle


@dataclass
class NightSummary:
    run: int
    actions: dict[str, int]  # skipped / rechecked / reduced / duplicate / checked -> cases
    compiles: int
    reports: list[Path]
    statuses: dict[str, int]  # new / reproduces / no-longer-same-bug / fixed / ... -> cases, as recorded tonight

    @property
    def news(self) -> int:
        """Cases whose bug is new or changed tonight: what a nightly job is to be told of."""
        return self.statuses.get(NEW, 0) + self.statuses.get(CHANGED, 0)


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Only one run per OUT: a second one gets an InputError naming the holder."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / LOCK_FILE, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "unknown"
            raise InputError(
                f"{out}: another 'reduce corpus' run (pid {holder}) is using this folder; "
                "wait for it to finish or choose another -o"
            ) from None
        lock.truncate(0)
        lock.write(str(os.getpid()))
        lock.flush()
        yield


def _action(case: CorpusCase, previous: CaseRecord | None, identity: str) -> str:
    if previous is None or previous.content_hash != case.content_hash or previous.status in UNDECIDED:
        return REDUCE
    return "skip" if previous.identity == identity else RECHECK


Toolchain = tuple[str | None, str | None]


class Night:
    """One run: what each case needs, and its result recorded as soon as it is known."""

    def __init__(self, out: Path, options: NightOptions, state: CorpusState, on_case: Callable[[str], None]) -> None:
        self.out, self.options, self.state, self.on_case = out, options, state, on_case
        self.run = state.start_run(options.executor)
        self.actions: dict[str, int] = {}
        self.statuses: dict[str, int] = {}
        self.compiles = 0
        self._jobs: dict[str, tuple[CorpusCase, str]] = {}  # slug -> (case, identity) of a job out
        self._copies: dict[str, list[CorpusCase]] = {}  # slug of a job -> cases of identical content

    def record(self, case: CorpusCase, identity: str, result: dict[str, Any], action: str) -> None:
        previous = self.state.case(case.slug)
        signature = result.get("signature")
        bundle = result.get("bundle")
        record = CaseRecord(
            slug=case.slug,
            path=str(case.path),
            content_hash=case.content_hash,
            identity=identity,
            status=result["status"],
            signature=signature,
            bug=stored_bug_id(signature) if signature else None,
            error=result.get("error", ""),
            original_size=result.get("original_size"),
            reduced_size=result.get("reduced_size"),
            bundle=os.path.relpath(bundle, self.out) if bundle else None,
            compiles=result.get("compiles", 0),
            seconds=result.get("seconds", 0.0),
            first_run=previous.first_run if previous and previous.content_hash == case.content_hash else self.run,
            run=self.run,
        )
        self.state.save(record, action)
        self.actions[action] = self.actions.get(action, 0) + 1
        self.statuses[record.status] = self.statuses.get(record.status, 0) + 1
        self.compiles += record.compiles
        self.on_case(case.slug)

    def _skip(self, case: CorpusCase, previous: CaseRecord) -> None:
        """Unchanged case, same compiler: no compile. A new bug stays new only while its run is unfinished
        (this run resumes it); after a finished night it is a bug that reproduces."""
        status = previous.status
        if status == NEW and self.state.run_finished(previous.run):
            status = REPRODUCES
        kept = {k: v for k, v in vars(previous).items() if k in {"signature", "error", "original_size", "reduced_size"}}
        bundle = str(self.out / previous.bundle) if previous.bundle else None
        self.record(case, previous.identity, {**kept, "status": status, "bundle": bundle, "compiles": 0}, "skipped")

    def _spec(self, case: CorpusCase, action: str, previous: CaseRecord | None) -> dict[str, Any]:
        return {
            "kind": "case",
            "slug": case.slug,
            "path": str(case.path),
            "out": str(self.out / "bundles" / case.slug),
            "action": action,
            "previous": previous.signature if previous else None,
            "previous_status": self.state.last_status(case.slug, UNDECIDED) if previous else None,
            "jobs": 1,
            "diagnose": self.options.diagnose,
            "cache": str(self.options.cache) if self.options.cache else None,
            "case_timeout": self.options.case_timeout,
        }

    def plan(self, cases: list[CorpusCase], identities: dict[Toolchain, str]) -> list[dict[str, Any]]:
        """Record what needs no job (broken, unchanged); the job specs of the rest, one per content."""
        leaders: dict[tuple[str, Toolchain], str] = {}  # (content, toolchain) -> slug of the job doing it
        specs = []
        for case in cases:
            previous = self.state.case(case.slug)
            if case.problem:
                self.record(case, "", {"status": BROKEN, "error": case.problem}, "checked")
                continue
            identity = identities[case.toolchain]
            action = _action(case, previous, identity)
            if action == "skip" and previous:
                self._skip(case, previous)
            elif (case.content_hash, case.toolchain) in leaders:
                self._copies[leaders[case.content_hash, case.toolchain]].append(case)
            else:
                leaders[case.content_hash, case.toolchain] = case.slug
                self._jobs[case.slug] = (case, identity)
                self._copies[case.slug] = []
                specs.append(self._spec(case, action, previous))
        return specs

    def take(self, spec: dict[str, Any], result: dict[str, Any]) -> None:
        """Record a job's result for its case and the cases of identical content."""
        case, identity = self._jobs[spec["slug"]]
        steps = ["rechecked" if spec["action"] == RECHECK else "", "reduced" if result.get("reduced_size") else ""]
        self.record(case, identity, result, " and ".join(filter(None, steps)) or "checked")
        for copy in self._copies[case.slug]:
            self.record(copy, identity, {**result, "compiles": 0, "seconds": 0.0}, "duplicate")


def _identities(executor: Executor, cases: list[CorpusCase]) -> dict[Toolchain, str]:
    """The compiler identity of every toolchain the cases ask for, read where the jobs run."""
    toolchains = sorted({c.toolchain for c in cases if not c.problem}, key=str)
    if not toolchains:
        return {}
    ((_, answer),) = executor.run([{"kind": "identity", "toolchains": toolchains}])
    if "identities" not in answer:
        raise InputError(f"cannot read the compiler identity: {answer.get('error', 'no answer')}")
    return dict(zip(toolchains, answer["identities"], strict=True))


def run_night(
    root: Path, out: Path, options: NightOptions, on_case: Callable[[str, int, int], None] = lambda s, d, t: None
) -> NightSummary:
    """Process every case under `root` into OUT; `on_case(slug, done, total)` after each."""
    if not root.is_dir():
        raise InputError(f"{root}: not a directory of cases")
    with locked(out):
        cases = discover(root, out)
        state = CorpusState(out / STATE_FILE)
        executor = make_executor(options.executor, options.scheduler, options.jobs)
        done = itertools.count(1)
        try:
            night = Night(out, options, state, lambda slug: on_case(slug, next(done), len(cases)))
            for spec, result in executor.run(night.plan(cases, _identities(executor, cases))):
                night.take(spec, result)
            state.finish_run(night.run)
            reports = write_reports(out, state, [c.slug for c in cases], night.run)
            return NightSummary(night.run, night.actions, night.compiles, reports, night.statuses)
        finally:
            executor.close()
            state.close()
