"""The oracle: is a candidate Case interesting (valid, and fails with the target signature)? Owns the
validity check, the caches (this run's verdicts, the persistent compile cache), the counters and parallel
evaluation; passes and search know no processes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Protocol

from reducer.compile.akg import cache_key, compile_case
from reducer.compile.cache import CompileCache
from reducer.compile.identity import Kind, Signature, incomplete, matches
from reducer.compile.sandbox import CompileCancelled, HangCheck, Outcome, cancel_all
from reducer.compile.signature import hang_signature, signature_of
from reducer.core.case import Case, Expectation, TensorSpec
from reducer.core.errors import InvalidKernel
from reducer.kernels.kinds import outputs_of
from reducer.search.hang_limit import HangLimit
from reducer.search.passes.base import Edit

TRACED_COMPILE_SECONDS = 1.0


@dataclass
class Counters:
    compiles: int = 0
    invalid: int = 0
    cache_hits: int = 0  # a candidate seen before in this run
    stored_hits: int = 0  # a compile answered by the persistent cache
    reconfirmed: int = 0  # a candidate hanging like the bug at the hang limit, left to run to the full one
    compile_seconds: float = 0.0
    started: float = field(default_factory=time.monotonic)

    def to_dict(self) -> dict[str, float | int]:
        return {
            "compiles": self.compiles,
            "invalid": self.invalid,
            "cache_hits": self.cache_hits,
            "stored_hits": self.stored_hits,
            **({"hangs_reconfirmed": self.reconfirmed} if self.reconfirmed else {}),
            "compile_seconds": round(self.compile_seconds, 2),
            "seconds": round(time.monotonic() - self.started, 2),
        }


AHEAD_POLL = 0.05  # seconds between looks at a cancel event while waiting for a compile ahead
SAME_FAILURE = "fails the same way"
PASSES = "passes"  # compiles, or for a wrong-result case computes the right result
OTHER_FAILURE = "other failure: "  # how an outcome that is another bug starts
SAYS_NOTHING = "no verdict"  # the environment, or a check that compared too little: says nothing of the kernel
INCOMPLETE = "incomplete"  # stopped before the stage that decides the bug (nvcc not here): neither passes nor fails


@dataclass(frozen=True)
class Verdict:
    interesting: bool
    signature: Signature | None  # None: rejected without a compile
    reason: str = ""


class Compiler(Protocol):
    """compile_case, with or without a worker pool bound; test doubles take the same arguments.
    `stop_at_codegen`: the compile may stop where nvcc would start (a cost decision: the oracle's question is
    decided by AKG's passes). `traced`: the case is expected to die by a signal, so gdb may watch the compile
    from its start."""

    def __call__(
        self,
        case: Case,
        outputs: tuple[TensorSpec, ...],
        *,
        cancel: threading.Event | None = None,
        hang_check: HangCheck | None = None,
        stop_at_codegen: bool = False,
        traced: bool = False,
    ) -> Outcome: ...


class Oracle:
    def __init__(
        self,
        expect: Expectation,
        jobs: int = 1,
        compiler: Compiler = compile_case,
        repeat: int = 1,
        cache: CompileCache | None = None,
        counters: Counters | None = None,
    ) -> None:
        self.expect = expect
        self.jobs = max(1, jobs)
        self.repeat = max(1, repeat)
        self.counters = counters or Counters()
        self._compile = compiler
        # A flaky compiler's single answer is not worth keeping: with --repeat the stored cache is off.
        self._stored = cache if self.repeat == 1 else None
        self._cache: dict[str, Verdict] = {}
        self._lock = threading.Lock()
        # One pool for the whole reduction: a search step returns as soon as its answer is known and
        # the compiles it no longer needs wind down while the next step starts.
        self._pool = ThreadPoolExecutor(self.jobs, thread_name_prefix="compile")
        self._prefetching: dict[str, tuple[Future[Verdict], threading.Event]] = {}
        self.hang_limit = HangLimit() if expect.kind == Kind.TIMEOUT else None
        # The one place that decides how far a verdict's compile runs: to nvcc only when the bug is nvcc's.
        self.stop_at_codegen = not Kind(expect.kind).needs_codegen

    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        """Wait for compiles still winding down; the oracle is unusable afterwards. On Ctrl-C or SIGTERM they
        are killed first: waiting would hold the user for as long as a compile's limit."""
        if exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
            cancel_all()
        self._pool.shutdown(wait=True)

    def _traced(self) -> bool:
        """Watch compiles with gdb from their start: the bug is a crash by a signal, and its compiles take long
        enough (on average, so far) that placing a crash by a second run costs more than gdb watching each
        compile (about 0.3 s each: CPU kernels compile in less, big Ascend kernels in seconds)."""
        if self.expect.kind != Kind.SIGNAL or self.counters.compiles == 0:
            return False
        return self.counters.compile_seconds / self.counters.compiles >= TRACED_COMPILE_SECONDS

    def run(self, case: Case) -> tuple[Signature, Outcome]:
        """Compile `case` (valid or not) and classify it; counted, never answered from a cache."""
        return self._run(case, outputs_of(case))

    def _run(
        self, case: Case, outputs: tuple[TensorSpec, ...], cancel: threading.Event | None = None, search: bool = False
    ) -> tuple[Signature, Outcome]:
        """One compile; a search candidate of a hang is cut short when it hangs elsewhere (_hang_check)."""
        check = self._hang_check(case) if search and self.hang_limit is not None else None
        stop = search and self.stop_at_codegen
        outcome = self._compile(
            case, outputs, cancel=cancel, hang_check=check, stop_at_codegen=stop, traced=self._traced()
        )
        with self._lock:
            self.counters.compiles += 1
            self.counters.compile_seconds += outcome.seconds
        if self.hang_limit is not None and not outcome.timed_out:
            self.hang_limit.finished(outcome.seconds)
        return signature_of(outcome, case.time_limit), outcome

    def run_many(self, case: Case, times: int) -> list[tuple[Signature, Outcome]]:
        """Compile the same case `times` times, up to `jobs` at once."""
        return list(self._pool.map(self.run, [case] * times))

    def _hang_check(self, case: Case) -> HangCheck:
        """The stack of a candidate still running after the hang limit must show the bug's hang, else it
        is stopped there; one that does runs on to the full limit (counted as reconfirmed)."""
        assert self.hang_limit is not None

        def same(stack: tuple[str, ...]) -> bool:
            hangs_here = matches(hang_signature(stack, 0), self.expect)
            if hangs_here:
                with self._lock:
                    self.counters.reconfirmed += 1
            return hangs_here

        return HangCheck(self.hang_limit.limit(case.time_limit), same)

    def _signature(self, case: Case, cancel: threading.Event | None) -> Signature:
        """From the persistent cache when it knows this exact compile, else compiled (and stored)."""
        outputs = outputs_of(case)
        if self._stored is None:
            return self._run(case, outputs, cancel, search=True)[0]
        key = cache_key(case, outputs, self.stop_at_codegen)
        sig = self._stored.get(key)
        if sig is not None:
            with self._lock:
                self.counters.stored_hits += 1
            return sig
        sig, outcome = self._run(case, outputs, cancel, search=True)
        self._stored.put(key, sig, outcome.seconds)
        return sig

    @staticmethod
    def _ahead(future: Future[Verdict], cancel: threading.Event | None) -> Verdict | None:
        """The verdict being compiled ahead of time, waited for; None when that compile was stopped or
        had not started (then it is dropped and the caller compiles). Setting `cancel` stops the wait."""
        while not future.cancel():
            try:
                return future.result(timeout=AHEAD_POLL)
            except TimeoutError:
                if cancel is not None and cancel.is_set():
                    raise CompileCancelled from None
            except CompileCancelled:
                return None
        return None

    def verdict(self, case: Case, cancel: threading.Event | None = None) -> Verdict:
        """Is `case` interesting? Setting `cancel` abandons the compile (CompileCancelled), remembering nothing."""
        key = case.key()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self.counters.cache_hits += 1
                return cached
            ahead = self._prefetching.get(key)
        if ahead is not None:
            verdict = self._ahead(ahead[0], cancel)
            if verdict is not None:
                return verdict
        return self._decide(case, cancel)

    def _decide(self, case: Case, cancel: threading.Event | None) -> Verdict:
        """Compile `case` (up to `repeat` times) and remember the verdict."""
        try:
            for _ in range(self.repeat):  # a flaky failure counts when any of `repeat` compiles shows it
                sig = self._signature(case, cancel)
                verdict = Verdict(matches(sig, self.expect), sig)
                if verdict.interesting:
                    break
        except InvalidKernel as exc:
            with self._lock:
                self.counters.invalid += 1
            verdict = Verdict(False, None, str(exc))
        with self._lock:
            self._cache[case.key()] = verdict
        return verdict

    def outcome(self, case: Case) -> str:
        """How `case` fares, in words for a report: SAME_FAILURE, PASSES, or what else happened; a compile that
        stopped before the stage deciding the bug (nvcc, for an invalid-cuda bug on a machine without it) is
        INCOMPLETE, never PASSES."""
        verdict = self.verdict(case)
        if verdict.signature is None:
            return f"invalid kernel: {verdict.reason}"
        if verdict.interesting:
            return SAME_FAILURE
        if not verdict.signature.kind.is_verdict:  # neither passes nor another bug
            return f"{SAYS_NOTHING}: {verdict.signature.message}"
        if incomplete(verdict.signature, self.expect.kind):
            return f"{INCOMPLETE}: {verdict.signature.message}"
        if not verdict.signature.failed:  # CODEGEN: AKG's passes passed; nvcc not here
            return PASSES
        return f"{OTHER_FAILURE}{verdict.signature.one_line()}"

    def outcomes(self, cases: list[Case], deadline: float) -> list[str | None]:
        """outcome() of each case, `jobs` at a time, in order; None for a case not started by `deadline`
        (time.monotonic())."""

        def one(case: Case) -> str | None:
            return self.outcome(case) if time.monotonic() < deadline else None

        return list(self._pool.map(one, cases))

    def interesting(self, case: Case, cancel: threading.Event | None = None) -> bool:
        return self.verdict(case, cancel).interesting

    def first_interesting(
        self, edits: Iterable[Edit], successor: Callable[[Edit], Edit | None] | None = None
    ) -> Edit | None:
        """The first edit whose case is interesting, in order; the answer, and what is cached, equal a
        sequential scan. With `jobs` > 1 the spare cores guess: without `successor`, that the candidates
        fail (the next ones compile at once, the pipeline stays full); with it, that they pass (while a
        candidate compiles, the search's next query if it is accepted, `successor(edit)`, compiles ahead).
        Compiles whose result can no longer matter are killed."""
        if self.jobs == 1:
            return next((e for e in edits if self.interesting(e.after)), None)
        try:
            if successor is None:
                return self._first_parallel(iter(edits))
            for edit in edits:
                after = successor(edit)
                self._prefetch_only(after.after if after is not None else None)
                if self.interesting(edit.after):
                    return edit
            self._prefetch_only(None)
            return None
        except KeyboardInterrupt:
            cancel_all()  # before the pool waits for the compiles in flight
            raise

    def _prefetch_only(self, case: Case | None) -> None:
        """Compile `case` ahead of time, if a core is free and its verdict unknown; stop other compiles
        ahead, which were guesses that did not come true."""
        key = case.key() if case is not None else None
        with self._lock:
            for other, (_, stop) in list(self._prefetching.items()):
                if other != key:
                    stop.set()
                    del self._prefetching[other]
            if key is None or key in self._cache or key in self._prefetching:
                return
            stop = threading.Event()
            self._prefetching[key] = (self._pool.submit(self._decide, case, stop), stop)

    def _first_parallel(self, edits: Iterator[Edit]) -> Edit | None:
        started: list[Edit] = []
        pending: dict[Future[bool], tuple[int, threading.Event]] = {}
        results: dict[int, bool] = {}
        lowest_unknown = 0
        winner = None  # lowest index known to be interesting; nothing after it needs starting
        exhausted = False
        try:
            while True:
                while not exhausted and winner is None and len(pending) < self.jobs:
                    edit = next(edits, None)
                    if edit is None:
                        exhausted = True
                        break
                    stop = threading.Event()
                    pending[self._pool.submit(self.interesting, edit.after, stop)] = (len(started), stop)
                    started.append(edit)
                if not pending:
                    return None
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    index, _ = pending.pop(fut)
                    try:
                        results[index] = fut.result()
                    except CompileCancelled:  # after the winner: its result cannot matter
                        continue
                    if results[index] and (winner is None or index < winner):
                        winner = index
                while lowest_unknown in results:
                    if results[lowest_unknown]:
                        return started[lowest_unknown]
                    lowest_unknown += 1
                for index, stop in pending.values():
                    if winner is not None and index > winner:
                        stop.set()
        finally:
            for _, stop in pending.values():  # not waited for: they end within a poll of the sandbox
                stop.set()
