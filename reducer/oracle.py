"""The oracle: is a candidate Case interesting (valid, and fails with the target signature)? Owns the
validity check, the cache, the counters and parallel evaluation; passes and search know no processes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from reducer.akg import compile_case
from reducer.case import Case, Expectation, TensorSpec
from reducer.hybrid import InvalidKernel, infer_outputs
from reducer.sandbox import Outcome, cancel_all
from reducer.signature import Signature, matches, signature_of


@dataclass
class Counters:
    compiles: int = 0
    invalid: int = 0
    cache_hits: int = 0
    compile_seconds: float = 0.0
    started: float = field(default_factory=time.monotonic)

    def to_dict(self) -> dict[str, float | int]:
        return {
            "compiles": self.compiles,
            "invalid": self.invalid,
            "cache_hits": self.cache_hits,
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
    def __init__(self, expect: Expectation, jobs: int = 1, compiler: Compiler = compile_case, repeat: int = 1) -> None:
        self.expect = expect
        self.jobs = max(1, jobs)
        self.repeat = max(1, repeat)
        self.counters = Counters()
        self._compile = compiler
        self._cache: dict[str, Verdict] = {}
        self._lock = threading.Lock()

    def run(self, case: Case) -> tuple[Signature, Outcome]:
        """Compile `case` (valid or not) and classify it; counted, never cached."""
        outputs = infer_outputs(case)
        outcome = self._compile(case, outputs)
        with self._lock:
            self.counters.compiles += 1
            self.counters.compile_seconds += outcome.seconds
        return signature_of(outcome, case.timeout), outcome

    def run_many(self, case: Case, times: int) -> list[Signature]:
        """Compile the same case `times` times, up to `jobs` at once."""
        with ThreadPoolExecutor(self.jobs) as pool:
            return [sig for sig, _ in pool.map(self.run, [case] * times)]

    def verdict(self, case: Case) -> Verdict:
        key = case.key()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self.counters.cache_hits += 1
                return cached
        try:
            for _ in range(self.repeat):  # a flaky failure counts when any of `repeat` compiles shows it
                sig, _ = self.run(case)
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
