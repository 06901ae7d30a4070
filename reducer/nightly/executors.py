"""Where the nightly jobs run: a local pool of N at once, or a dask.distributed cluster (an address, or a
LocalCluster of N single-threaded workers when none is given). Every job is a function of one spec: a
night's is `job.run_isolated`, a shape plan's a chunk of its calls (shapes/cluster.py); results flow back, as
they finish, to the one process that writes the state."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Protocol

from reducer.core.errors import InputError
from reducer.nightly.job import ERROR, run_isolated

Spec = dict[str, Any]
Job = Callable[[Spec], dict[str, Any]]


class Executor(Protocol):
    name: str

    def run(self, specs: Iterable[Spec]) -> Iterator[tuple[Spec, dict[str, Any]]]:
        """(spec, result) pairs, in the order they finish."""
        ...

    def close(self) -> None: ...


def _result(future: Any) -> dict[str, Any]:
    """The job's result; a job the executor lost (a killed Dask worker, ...) is an error of its case."""
    try:
        return future.result()
    except Exception as exc:
        return {"status": ERROR, "error": f"the job was lost: {type(exc).__name__}: {exc}", "compiles": 0}


class LocalExecutor:
    """Jobs as child processes of this machine, `jobs` at a time."""

    name = "local"

    def __init__(self, jobs: int, job: Job = run_isolated) -> None:
        self._pool = ThreadPoolExecutor(jobs, thread_name_prefix="akg-reduce-case")
        self._job = job

    def run(self, specs: Iterable[Spec]) -> Iterator[tuple[Spec, dict[str, Any]]]:
        futures = {self._pool.submit(self._job, spec): spec for spec in specs}
        for future in as_completed(futures):
            yield futures[future], _result(future)

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


class DaskExecutor:
    """Jobs on a dask.distributed cluster; its workers need akg-reduce and MindSpore, and the corpus and
    OUT folders at the same paths (a shared file system)."""

    name = "dask"

    def __init__(self, scheduler: str | None, jobs: int, job: Job = run_isolated) -> None:
        from dask.distributed import Client, LocalCluster  # imported here: slow, and only this executor needs it

        self._job = job
        self._cluster = None
        try:
            if scheduler:
                self._client = Client(scheduler, timeout="20s")
            else:
                self._cluster = LocalCluster(
                    n_workers=jobs,
                    threads_per_worker=1,
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
                self._client = Client(self._cluster)
        except OSError as exc:
            raise InputError(f"option '--scheduler': cannot reach the Dask scheduler {scheduler}: {exc}") from None

    def run(self, specs: Iterable[Spec]) -> Iterator[tuple[Spec, dict[str, Any]]]:
        from dask.distributed import as_completed as dask_completed

        futures = {self._client.submit(self._job, spec, pure=False): spec for spec in specs}
        for future in dask_completed(futures):
            yield futures[future], _result(future)

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def make_executor(kind: str, scheduler: str | None, jobs: int, job: Job = run_isolated) -> Executor:
    """Where `job` runs on each spec: `jobs` at a time here, or on a Dask cluster."""
    if kind == "dask":
        return DaskExecutor(scheduler, jobs, job)
    if scheduler:
        raise InputError("option '--scheduler' needs '--executor dask'")
    return LocalExecutor(jobs, job)
