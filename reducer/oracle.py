"""The oracle: is a candidate Case interesting (valid, and fails with the target signature)? Owns the
validity check, the caches (this run's verdicts, the persistent compile cache), the counters and parallel
evaluation; passes and search know no processes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from reducer.akg import cache_key, compile_case
from reducer.cache import CompileCache
from reducer.case import Case, Expectation, TensorSpec
from reducer.hybrid import InvalidKernel, infer_outputs
from reducer.sandbox import Outcome, cancel_all
from reducer.signature import Signature, matches, signature_of


@dataclass
class Counters:
    compiles: int = 0
    invalid: int = 0
    cache_hits: int = 0  # a candidate seen before in this run
    stored_hits: int = 0  # a compile answered by the persistent cache
    compile_seconds: float = 0.0
    started: float = field(default_factory=time.monotonic)

    def to_dict(self) -> dict[str, float | int]:
        return {
            "compiles": self.compiles,
            "invalid": self.invalid,
            "cache_hits": self.cache_hits,
            "stored_hits": self.stored_hits,
            "compile_seconds": round(self.compile_seconds, 2),
            "seconds": round(time.monotonic() - self.started, 2),
        }


@dataclass(frozen=True)
class Verdict:
    interesting: bool
    signature: Signature | None  # None: rejected without a compile
    reason: str = ""


Compiler = Callable[[Case, tuple[TensorSpec, ...]], Outcome]


class Oracle:
    def __init__(
        self,
        expect: Expectation,
        jobs: int = 1,
        compiler: Compiler = compile_case,
        repeat: int = 1,
        cache: CompileCache | None = None,
    ) -> None:
        self.expect = expect
        self.jobs = max(1, jobs)
        self.repeat = max(1, repeat)
        self.counters = Counters()
        self._compile = compiler
        # A flaky compiler's single answer is not worth keeping: with --repeat the stored cache is off.
        self._stored = cache if self.repeat == 1 else None
        self._cache: dict[str, Verdict] = {}
        self._lock = threading.Lock()

    def run(self, case: Case) -> tuple[Signature, Outcome]:
        """Compile `case` (valid or not) and classify it; counted, never answered from a cache."""
        return self._run(case, infer_outputs(case))

    def _run(self, case: Case, outputs: tuple[TensorSpec, ...]) -> tuple[Signature, Outcome]:
        outcome = self._compile(case, outputs)
        with self._lock:
            self.counters.compiles += 1
            self.counters.compile_seconds += outcome.seconds
        return signature_of(outcome, case.time_limit), outcome

    def run_many(self, case: Case, times: int) -> list[tuple[Signature, Outcome]]:
        """Compile the same case `times` times, up to `jobs` at once."""
        with ThreadPoolExecutor(self.jobs) as pool:
            return list(pool.map(self.run, [case] * times))

    def _signature(self, case: Case) -> Signature:
        """From the persistent cache when it knows this exact compile, else compiled (and stored)."""
        if self._stored is None:
            return self.run(case)[0]
        outputs = infer_outputs(case)
        key = cache_key(case, outputs)
        sig = self._stored.get(key)
        if sig is not None:
            with self._lock:
                self.counters.stored_hits += 1
            return sig
        sig, outcome = self._run(case, outputs)
        self._stored.put(key, sig, outcome.seconds)
        return sig

    def verdict(self, case: Case) -> Verdict:
        key = case.key()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self.counters.cache_hits += 1
                return cached
        try:
            for _ in range(self.repeat):  # a flaky failure counts when any of `repeat` compiles shows it
                sig = self._signature(case)
                verdict = Verdict(matches(sig, self.expect), sig)
                if verdict.interesting:
                    break
        except InvalidKernel as exc:
            with self._lock:
                self.counters.invalid += 1
            verdict = Verdict(False, None, str(exc))
        with self._lock:
            self._cache[key] = verdict
        return verdict

    def interesting(self, case: Case) -> bool:
        return self.verdict(case).interesting

    def first_interesting(self, candidates: Sequence[Case]) -> int | None:
        """Index of the first interesting candidate in order; up to `jobs` are compiled at once and the
        earliest interesting one wins, so the result equals a sequential scan."""
        if self.jobs == 1:
            return next((i for i, c in enumerate(candidates) if self.interesting(c)), None)
        try:
            return self._first_parallel(candidates)
        except KeyboardInterrupt:
            cancel_all()  # before the pool waits for the compiles in flight
            raise

    def _first_parallel(self, candidates: Sequence[Case]) -> int | None:
        with ThreadPoolExecutor(self.jobs) as pool:
            pending: dict[Future[bool], int] = {}
            results: dict[int, bool] = {}
            next_index = 0
            while True:
                while next_index < len(candidates) and len(pending) < self.jobs:
                    pending[pool.submit(self.interesting, candidates[next_index])] = next_index
                    next_index += 1
                if not pending:
                    return None
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    results[pending.pop(fut)] = fut.result()
                for i in range(len(candidates)):
                    if i not in results:
                        break
                    if results[i]:
                        for fut in pending:
                            fut.cancel()
                        return i
