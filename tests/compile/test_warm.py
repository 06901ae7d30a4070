"""Warm workers: a compile forked from a worker behaves exactly like a cold one (same exit, signal and
output), a crash or hang of one compile leaves the worker serving, a killed worker is replaced and its
compile rerun, and a worker that cannot start means cold compiles, not a failed reduction."""

from __future__ import annotations

import functools
import re
import signal
import sys
import textwrap
import threading
from pathlib import Path

import psutil
import pytest
from conftest import MATMUL_KERNEL, corpus_cases, needs_akg, wait_until

from reducer.compile.akg import compile_case
from reducer.compile.identity import mask
from reducer.compile.sandbox import Outcome, supervise
from reducer.compile.signature import signature_of
from reducer.compile.warm import Program, WorkerPool, mismatch_runner
from reducer.core.case import Case, TensorSpec
from reducer.inputs.crash_yaml import load_case
from reducer.inputs.source import function_source
from reducer.kernels.kinds import outputs_of

# A compiler script whose behaviour the attrs choose; what it prints is deterministic.
SCRIPT = textwrap.dedent(
    """
    import json, os, signal, sys, time

    attrs = json.loads(sys.argv[3])
    print("compiling", open(sys.argv[1]).read()[:20])
    sys.stdout.flush()
    mode = attrs.get("mode")
    if mode == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "sleep":
        time.sleep(attrs["seconds"])
    if mode == "raise":
        raise ValueError("Compile error")
    if mode == "exit":
        sys.exit(3)
    print("[ERROR] AKG:x [fake.cc:1] [t] Check failed: done", file=sys.stderr)
    """
)


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "fake_akg.py"
    path.write_text(SCRIPT)
    return path


@pytest.fixture
def pool():
    pool = WorkerPool()
    yield pool
    pool.close()


def case_for(script: Path, timeout: float = 20, **attrs: object) -> Case:
    inputs = (TensorSpec((4, 4), "float32"), TensorSpec((4, 4), "float32"), TensorSpec((4,), "float32"))
    source, function = function_source(MATMUL_KERNEL, None, "kernel")
    return Case("k", source, function, inputs, attrs=dict(attrs), compiler=str(script), timeout=timeout)


def compile_(case: Case, pool: WorkerPool | None) -> Outcome:
    return compile_case(case, outputs_of(case), pool=pool)


def observable(outcome: Outcome) -> tuple:
    return outcome.returncode, outcome.signal, outcome.timed_out, outcome.output


@pytest.mark.parametrize("mode", ["done", "raise", "exit", "segv"])
def test_a_warm_compile_looks_exactly_like_a_cold_one(script: Path, pool: WorkerPool, mode: str) -> None:
    case = case_for(script, mode=mode)
    cold, warm = compile_(case, None), compile_(case, pool)
    assert observable(warm) == observable(cold)
    assert pool.started == 1


def test_a_crash_or_hang_kills_only_that_compile(script: Path, pool: WorkerPool) -> None:
    assert compile_(case_for(script, mode="segv"), pool).signal == signal.SIGSEGV
    hung = compile_(case_for(script, timeout=1, mode="sleep", seconds=600), pool)
    assert hung.timed_out and hung.seconds < 10
    assert compile_(case_for(script, mode="done"), pool).returncode == 0
    assert pool.started == 1  # the same worker served all three


def test_a_killed_worker_is_replaced_and_its_compile_rerun(script: Path, pool: WorkerPool) -> None:
    compile_(case_for(script, mode="done"), pool)
    (worker,) = [p for p in psutil.Process().children() if "akg_worker.py" in " ".join(p.cmdline())]
    result: list[Outcome] = []
    thread = threading.Thread(target=lambda: result.append(compile_(case_for(script, mode="sleep", seconds=2), pool)))
    thread.start()
    wait_until(lambda: worker.children(), 30, "the compile forked from the worker")
    (child,) = worker.children()
    worker.kill()
    psutil.wait_procs([child], timeout=10)
    assert not child.is_running()  # a compile does not outlive its worker
    thread.join(60)
    assert result and result[0].returncode == 0 and "Check failed: done" in result[0].output
    assert pool.started == 2


def test_a_worker_that_cannot_import_akg_falls_back_to_cold(tmp_path: Path, pool: WorkerPool) -> None:
    """A compiler.py next to a get_file_path.py looks like MindSpore's entry, so the worker imports AKG
    first; here that import fails, and the compile runs cold, as it would without workers."""
    (tmp_path / "get_file_path.py").write_text("raise ImportError('no AKG here')\n")
    script = tmp_path / "compiler.py"
    script.write_text(SCRIPT)
    case = case_for(script, mode="done")
    assert observable(compile_(case, pool)) == observable(compile_(case, None))
    assert observable(compile_(case, pool)) == observable(compile_(case, None))
    assert pool.started == 0
    assert len(pool.failures) == 1 and "no AKG here" in pool.failures[0]  # not retried for every compile


def log(outcome: Outcome) -> str:
    """The whole compile log up to addresses, numbers and AKG's timestamps."""
    return mask(re.sub(r"AKG:\S+", "AKG:", outcome.output))


@pytest.mark.akg
@needs_akg
@pytest.mark.timeout(900)
@pytest.mark.xdist_group("corpus_compiles")
def test_warm_and_cold_agree_on_every_corpus_case(corpus_compiles: dict[str, tuple[Case, Outcome]]) -> None:
    """Compiles forked from a worker, and wrong-result checks in a long-lived runner, equal fresh processes:
    a hang is killed at its limit in the same AKG pass, and the worker serves the next case."""
    assert set(corpus_compiles) == {p.parent.name for p in corpus_cases()}
    for name, (case, warm) in corpus_compiles.items():
        cold = compile_(case, None)
        signature = signature_of(warm, case.time_limit)
        assert signature == signature_of(cold, case.time_limit), name
        if case.mismatch is None:  # a wrong result's error sizes may differ: it reads what AKG left unwritten
            assert log(warm) == log(cold), name
        if case.expect and case.expect.kind == "timeout":  # both PointNet hangs, found by sampling the stack
            assert signature.location == "akg::ir::poly::ComputeTransferCopyin::Run", name


ZEROS = """from mindspore.ops import kernel


@kernel
def zeros(x):
    total = output_tensor((1,), x.dtype)
    mean = output_tensor((1,), x.dtype)
    total[0] = 0.0
    mean[0] = 0.0
    return total, mean
"""
COPY = """from mindspore.ops import kernel


@kernel
def copy(x):
    y = output_tensor((2,), x.dtype)
    for i in range(2):
        y[i] = x[i]
    return y
"""


def wrong_result_case(folder: Path, source: str, shape: list[int]) -> Case:
    folder.mkdir()
    (folder / "kernel.py").write_text(source)
    (folder / "crash.yaml").write_text(
        f"name: {folder.name}\nkernel: kernel.py\ninputs:\n  - {{shape: {shape}, dtype: float32}}\n"
        "expect: {kind: mismatch, tolerance: 0.001}\n"
    )
    return load_case(folder / "crash.yaml")


@pytest.mark.quick
@pytest.mark.akg
@needs_akg
@pytest.mark.timeout(300)
def test_an_output_akg_never_writes_is_a_wrong_result_in_a_runner_and_in_a_fresh_process(
    tmp_path: Path, pool: WorkerPool
) -> None:
    """The minimal case of point_sum_and_mean_mismatch: neither output of the two-output `zeros` comes
    back written (on this build no two-output Hybrid kernel's do). Unpoisoned, a new process read the
    zeros the reference expects, and a runner what the kernel before had left; the check poisons the
    outputs' memory, so both see the wrong result, and a kernel that writes its output still matches,
    also after `zeros` in the same runner."""
    zeros = wrong_result_case(tmp_path / "zeros", ZEROS, [])
    copy = wrong_result_case(tmp_path / "copy", COPY, [2])
    assert signature_of(compile_(zeros, None), 60).kind == "mismatch"
    assert signature_of(compile_(copy, None), 60).kind == "none"
    for case, kind in ((copy, "none"), (zeros, "mismatch"), (copy, "none"), (zeros, "mismatch")):
        assert signature_of(compile_(case, pool), 60).kind == kind, case.name


# A runner as mismatch_runner.py speaks: it runs each check itself (no fork), and this one hangs in it.
HANGING_RUNNER = textwrap.dedent(
    """
    import json, os, sys, time
    print(json.dumps({"ready": 0}), flush=True)
    for line in sys.stdin:
        print(json.dumps({"pid": os.getpid()}), flush=True)
        time.sleep(600)
    """
)


def test_a_runner_stopped_at_its_limit_gives_the_checks_result_not_a_rerun(tmp_path: Path, pool: WorkerPool) -> None:
    """A wrong-result check that hangs: the runner is killed at the limit and the check timed out, once;
    not rerun in a new runner and then cold (three times the limit, two MindSpore imports)."""
    (tmp_path / "runner.py").write_text(HANGING_RUNNER)
    program = Program((sys.executable, str(tmp_path / "runner.py")), home=True)
    with pool.worker(pool.key(program, {})) as worker:
        launch = functools.partial(worker.launch, {"spec": "spec.json"})
        outcome = supervise(launch, {"spec.json": "{}"}, 1.0, 512)
    assert outcome.timed_out and outcome.signal is None
    assert pool.started == 1 and not worker.alive


# A runner as mismatch_runner.py speaks, whose every check ends with the exit code its spec file holds.
STATUS_RUNNER = textwrap.dedent(
    """
    import json, os, sys
    print(json.dumps({"ready": 0}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps({"pid": os.getpid()}), flush=True)
        status = int(open(os.path.join(request["dir"], request["spec"])).read())
        print(json.dumps({"status": status}), flush=True)
    """
)


def test_a_runner_serves_on_after_a_check_that_says_nothing_of_akg_and_not_after_akg_raised(
    tmp_path: Path, pool: WorkerPool
) -> None:
    """Each runner start is a MindSpore import and a warm-up: a check that compared too little (3) or whose
    reference failed (2) keeps its runner, as a verdict (0, 1) does; one AKG raised in (4) retires it."""
    (tmp_path / "runner.py").write_text(STATUS_RUNNER)
    program = mismatch_runner([sys.executable, str(tmp_path / "runner.py")])
    key = pool.key(program, {})
    for status in (3, 2, 3, 0, 1, 2):
        with pool.worker(key) as worker:
            outcome = supervise(
                functools.partial(worker.launch, {"spec": "spec.json"}), {"spec.json": str(status)}, 20, 512
            )
        assert outcome.returncode == status
    assert pool.started == 1
    with pool.worker(key) as worker:
        supervise(functools.partial(worker.launch, {"spec": "spec.json"}), {"spec.json": "4"}, 20, 512)
    with pool.worker(key) as worker:
        supervise(functools.partial(worker.launch, {"spec": "spec.json"}), {"spec.json": "0"}, 20, 512)
    assert pool.started == 2
