"""The AKG compiler driver: turns a Case into MindSpore's own compile command (`compiler.py k.info AKG
'<attrs>' <dir>`) or its wrong-result check, run in the sandbox cold or in a warm worker, started by the
launcher (toolchain/launch.py) under the case's interpreter with its build's environment."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import platform
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from reducer import __version__
from reducer.compile import crash_stack
from reducer.compile.cache import compile_key
from reducer.compile.sandbox import HangCheck, Outcome, Running, read_capped, run_sandboxed, supervise
from reducer.compile.warm import (
    Program,
    Worker,
    WorkerDied,
    WorkerPool,
    WorkerUnavailable,
    compile_worker,
    mismatch_runner,
)
from reducer.core.case import Case, TensorSpec
from reducer.core.targets import CCEC, NVCC, TARGETS, Target
from reducer.in_mindspore import script
from reducer.kernels.kinds import KernelKind, info_text, kind_of
from reducer.toolchain.builds import PLUGINS, AkgBuild, CudaHost, ascend_pipeline_reach, ccec, cuda_host, shipped
from reducer.toolchain.launch import (
    FROZEN_TILING,
    TILING_ENV,
    Toolchain,
    akg_build,
    compile_command,
    launch,
    toolchain_of,
)
from reducer.toolchain.nvcc import STOPPED, gpu_pipeline_reach, with_architecture

MISMATCH_SCRIPT = script("mismatch_run")
CHECK_MODULES = {"wire": script("wire")}  # what mismatch_run.py loads beside it whatever the reference
# What mismatch_run.py loads beside it for a spec's "reference", name -> file, each after what it imports.
REFERENCE_MODULES = {
    "graph_numpy": {name: script(name) for name in ("graph_numpy", "graph_bounds")},
    "telang_plain": {"telang_plain": script("telang_plain")},
    "telang_numpy": {name: script(name) for name in ("graph_numpy", "telang_plain", "telang_numpy")},
}
SET_BY_AKG = {"target", "process"}  # AKG sets these from the .info itself
WORKER_ATTEMPTS = 2  # a compile whose worker died is rerun once in a fresh worker
GDB_SLOWDOWN = 3  # a compile under gdb may take this many times its own limit (symbols of libakg.so, ptrace)
GDB_EXIT_SECONDS = 10.0
HOLD_FILE = "akg-reduce-go"  # a warm compile waits for it (akg_worker's hold_until); gdb makes it once attached
GDB_LOG = "akg-reduce-gdb.log"


def side_files(case: Case) -> dict[str, str]:
    """Files besides the `.info` that a compile of `case` needs in its dir (and repro.py writes): the empty
    tiling repository of a frozen graph."""
    return {FROZEN_TILING: "{}"} if case.env.get(TILING_ENV) == FROZEN_TILING else {}


def kernel_files(case: Case, outputs: tuple[TensorSpec, ...]) -> dict[str, str]:
    """What the compile dir holds: the kernel's `.info` (a cuda kernel with an architecture, see nvcc.py) and
    its side files."""
    info = info_text(case, outputs)
    return {"k.info": with_architecture(info) if TARGETS[case.target].codegen == NVCC else info, **side_files(case)}


@dataclass(frozen=True)
class _Job:
    """One compile, as it runs cold (`command`) and in a warm worker (`program`, `request`)."""

    case: Case
    files: dict[str, str]
    env: dict[str, str]
    command: list[str]
    program: Program
    request: dict[str, Any]


def compile_case(
    case: Case,
    outputs: tuple[TensorSpec, ...],
    dump_ir: bool = False,
    collect: Callable[[Path], Any] | None = None,
    pool: WorkerPool | None = None,
    cancel: threading.Event | None = None,
    hang_check: HangCheck | None = None,
    stop_at_codegen: bool = False,
    traced: bool = False,
) -> Outcome:
    """One compile of `case` by MindSpore's AKG entry, in the sandbox: forked from a warm worker of
    `pool` when given (a worker that dies mid-compile is replaced and the compile rerun), else cold; a
    wrong-result case runs in a mismatch runner of `pool`. A compile that dies by a signal is run once more
    under gdb, to know where it died (crash_place); with `traced` (a case expected to die by a signal), a
    warm compile has gdb attached from its start instead, and where it died is read without a second run.
    Setting `cancel` stops it (CompileCancelled); `hang_check` cuts a hang elsewhere short (see HangCheck).
    With `stop_at_codegen` a cuda compile stops where nvcc would start (the shim says STOPPED: a `codegen`
    result), a cost decision of the caller's whose question is decided by AKG's passes (nvcc costs a second a
    compile); a question that nvcc decides (an invalid-cuda bug) runs it."""
    toolchain = toolchain_of(case)
    if case.mismatch is not None:  # compiled and run by a runner of its kernel kind (MindSpore does not fork)
        files = {"spec.json": json.dumps(mismatch_spec(case, outputs))}
        check = launch(case, "mismatch_run", "spec.json", dump_ir=dump_ir, stop_at_codegen=stop_at_codegen)
        warm_up = json.dumps(_warm_up_spec(kind_of(case), case.target))
        runner = mismatch_runner(check.beside("mismatch_runner", warm_up).argv)
        job = _Job(case, files, check.env, check.argv, runner, {"spec": "spec.json"})
    else:
        command = compile_command(toolchain, case.attrs)
        worker = launch(case, "akg_worker", toolchain.compiler_script, dump_ir=dump_ir, stop_at_codegen=stop_at_codegen)
        job = _Job(
            case, kernel_files(case, outputs), worker.env, command, compile_worker(worker.argv), {"argv": command[1:]}
        )
    watched = traced and collect is None and case.mismatch is None
    if watched and pool is not None and (tool := crash_stack.gdb()) is not None:
        outcome = _traced_warm(tool, job, pool, job.case.time_limit, cancel, hang_check)
        if outcome is not None and not outcome.timed_out:  # gdb's slowdown never decides a timeout
            stack = crash_stack.frames(outcome.collected or "") if outcome.signal is not None else ()
            if stack or outcome.signal is None:
                return replace(outcome, collected=None, stack=stack, stack_by="gdb" if stack else "")
    outcome = _run(job, pool, collect, cancel, hang_check)
    if case.mismatch is not None:
        return replace(outcome, check=True)
    if outcome.signal is not None:
        stack = crash_place(job, pool)
        return replace(outcome, stack=stack, stack_by="gdb" if stack else "")
    return outcome


def _run(
    job: _Job,
    pool: WorkerPool | None,
    collect: Callable[[Path], Any] | None,
    cancel: threading.Event | None,
    hang_check: HangCheck | None,
) -> Outcome:
    limit, memory = job.case.time_limit, job.case.memory
    if pool is not None:
        key = pool.key(job.program, job.env)
        for _ in range(WORKER_ATTEMPTS):
            if not pool.usable(key):
                break
            try:
                with pool.worker(key) as worker:
                    launch = functools.partial(worker.launch, job.request)
                    return supervise(launch, job.files, limit, memory, collect, cancel, hang_check)
            except WorkerUnavailable:
                break
            except WorkerDied:
                continue
    return run_sandboxed(job.command, job.files, job.env, limit, memory, collect, cancel, hang_check)


def crash_place(job: _Job, pool: WorkerPool | None) -> tuple[str, ...]:
    """The innermost AKG frames of a compile that died by a signal, read by gdb from the same compile once
    more: forked from a warm worker with gdb attached (the import is paid already), else run cold by gdb;
    () when gdb is missing or the crash did not recur."""
    tool = crash_stack.gdb()
    if tool is None:
        return ()
    if pool is not None:
        traced = _traced_warm(tool, job, pool, GDB_SLOWDOWN * job.case.time_limit)
        frames = crash_stack.frames(traced.collected or "") if traced and traced.signal is not None else ()
        if frames:
            return frames
    command = crash_stack.under_gdb(tool, job.command)
    again = run_sandboxed(command, job.files, job.env, GDB_SLOWDOWN * job.case.time_limit, job.case.memory)
    return crash_stack.frames(again.output)


def _traced_warm(
    tool: str,
    job: _Job,
    pool: WorkerPool,
    limit: float,
    cancel: threading.Event | None = None,
    hang_check: HangCheck | None = None,
) -> Outcome | None:
    """The compile forked from a warm worker of `pool`, held until gdb has attached to it (hold_until), held
    to `limit` seconds; its outcome with gdb's output as `collected`. None when no warm worker runs it."""
    key = pool.key(job.program, job.env)
    if not pool.usable(key):
        return None
    debuggers: list[subprocess.Popen[bytes]] = []

    def launch(worker: Worker, workdir: Path) -> Running:
        running = worker.launch({**job.request, "hold_until": HOLD_FILE}, workdir)
        with (workdir / GDB_LOG).open("wb") as log:
            command = crash_stack.attached_gdb(tool, running.pid, workdir / HOLD_FILE)
            debuggers.append(subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT))
        return running

    def collect(workdir: Path) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):  # it detached before the compile died
            debuggers[0].wait(GDB_EXIT_SECONDS)
        return read_capped(workdir / GDB_LOG)

    try:
        with pool.worker(key) as worker:
            launch_it = functools.partial(launch, worker)
            return supervise(launch_it, job.files, limit, job.case.memory, collect, cancel, hang_check)
    except (WorkerUnavailable, WorkerDied):
        return None
    finally:
        for debugger in debuggers:
            with contextlib.suppress(OSError):
                debugger.kill()
            debugger.wait()


def freeze_attrs(case: Case) -> Case:
    """A fused graph with the attrs AKG really compiles it with (its tiling repository and its own additions
    merged in, see effective_attrs.py) and an empty tiling repository, so that shrinking the graph cannot
    silently change them; only the attr and env passes may remove them. `case` itself when it is not a graph,
    AKG splits it into several segments, or the compiler is not MindSpore's."""
    if not kind_of(case).tiling_repository:
        return case
    akg_target = TARGETS[case.target].akg_name
    probe = launch(
        case, "effective_attrs", toolchain_of(case).compiler_script, "k.info", json.dumps(case.attrs), akg_target
    )
    outcome = run_sandboxed(probe.argv, kernel_files(case, ()), probe.env, 300, case.memory)
    try:
        segments = json.loads(outcome.output.strip().splitlines()[-1])["segments"]
    except (ValueError, IndexError, KeyError, TypeError):
        return case
    if outcome.returncode != 0 or len(segments) != 1:
        return case
    attrs = {k: v for k, v in segments[0].items() if k not in SET_BY_AKG}
    return case.with_(attrs=attrs, env={**case.env, TILING_ENV: FROZEN_TILING})


def mismatch_spec(case: Case, outputs: tuple[TensorSpec, ...]) -> dict[str, Any]:
    """What reducer/in_mindspore/mismatch_run.py needs to run `case` (its kernel returning `outputs`) on AKG and
    on its reference."""
    assert case.mismatch is not None
    build = akg_build(case)
    return {
        **kind_of(case).check_spec(case, outputs),
        "build": build.name if build else TARGETS[case.target].build_prefix,
        "ops": kind_of(case).ops(case),
        "inputs": kind_of(case).drawn_inputs(case),
        "outputs": [t.to_dict() for t in outputs],
        "attrs": case.attrs,
        "against": case.mismatch.against_attrs,
        "tolerance": case.mismatch.tolerance,
        "seed": 0,
    }


@functools.cache
def _warm_up_spec(kind: KernelKind, target: str) -> dict[str, Any]:
    """What a check runner of `kind` runs first, to import MindSpore and start its compile server: the check
    of the kind's smallest kernel."""
    case = kind.smallest(target)
    return mismatch_spec(case, kind.outputs(case))


def compiler_identity(toolchain: Toolchain) -> dict[str, str]:
    """What makes two compilers the same for the persistent cache: the Python version and environment
    (MindSpore's package dir, not the interpreter's path: `.venv/bin/python` and `python3` of one venv are
    one compiler), MindSpore's version, and the exact compile entry script and AKG libraries (content hash;
    size and mtime of every build shipped; not where the script is: a corpus moved elsewhere keeps its
    compiler). Read on every call, so a compiler replaced under a running reducer is noticed."""
    identity = {
        "mindspore_dir": toolchain.mindspore_dir or "",
        "python_version": toolchain.python_version,
        "mindspore": toolchain.mindspore_version or "",
        "script_sha256": hashlib.sha256(Path(toolchain.compiler_script).read_bytes()).hexdigest(),
    }
    if toolchain.mindspore_dir:
        for name in shipped(toolchain.mindspore_dir):
            with contextlib.suppress(OSError):
                stat = (Path(toolchain.mindspore_dir) / PLUGINS / name / "libakg.so").stat()
                identity[f"libakg:{name}"] = f"{stat.st_size}:{stat.st_mtime_ns}"
    return identity


def cache_key(case: Case, outputs: tuple[TensorSpec, ...], stop_at_codegen: bool) -> str:
    """The persistent-cache key of compiling `case`: exactly what the compiler is given, who compiles, and how far
    it was let run (compile_case's `stop_at_codegen`): a compile stopped before nvcc never answers one that ran it."""
    toolchain = toolchain_of(case)
    build = akg_build(case)
    compiler_input = {"info": info_text(case, outputs), "attrs": case.attrs, "env": case.env}
    identity = {**compiler_identity(toolchain), "akg_build": build.name if build else ""}
    if case.mismatch is not None:  # the check itself decides the verdict: a new check, new verdicts
        compiler_input["mismatch"] = mismatch_spec(case, outputs)
        check = [MISMATCH_SCRIPT, *CHECK_MODULES.values()]
        identity["check_sha256"] = hashlib.sha256(b"".join(Path(path).read_bytes() for path in check)).hexdigest()
        if reference := compiler_input["mismatch"].get("reference"):  # and the reference it loads
            whole = b"".join(Path(path).read_bytes() for path in REFERENCE_MODULES[reference].values())
            identity["reference_sha256"] = hashlib.sha256(whole).hexdigest()
    codegen = TARGETS[case.target].codegen
    if codegen == CCEC:  # how far the Ascend pipeline gets depends on CANN's compiler being here
        identity["ccec"] = ccec() or ""
    if codegen == NVCC:  # how far the GPU pipeline gets depends on the machine's GPU and nvcc
        identity["cuda_machine"] = json.dumps(cuda_host().to_dict(), sort_keys=True)
        identity["nvcc"] = STOPPED if stop_at_codegen else "run"
    return compile_key(identity, compiler_input)


def pipeline_reach(target: Target, cuda: CudaHost) -> tuple[str, str]:
    """For a target whose code generator is outside AKG: what this machine (with `cuda`) has of it, and how far
    a compile gets here when that is short of running the kernel ('' for each when there is nothing to say)."""
    if target.codegen == NVCC:
        return f"this machine: {cuda.said()}", "" if cuda.has_gpu else gpu_pipeline_reach()
    if target.codegen == CCEC:
        return "", ascend_pipeline_reach()
    return "", ""


def host_facts(toolchain: Toolchain, build: AkgBuild | None, target: Target) -> dict[str, str]:
    """This machine, the compiler and the AKG build, and how far the pipeline of `target` gets here: the
    Environment section of a bundle."""
    cuda = cuda_host()
    has, reach = pipeline_reach(target, cuda)
    return {
        "os": os_distribution(),
        "kernel": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "akg_reduce": __version__,
        "python": toolchain.python_version,
        "mindspore": toolchain.mindspore_version or "not installed",
        "akg_build_name": build.name if build else "",
        "libakg": f"lib/plugin/{build.name}/libakg.so, {build.size} bytes, sha256 {build.sha256}" if build else "",
        "libakg_short": f"lib/plugin/{build.name}/libakg.so, sha256 {build.sha256[:12]}" if build else "",
        "has_gpu": "yes" if cuda.has_gpu else "no",
        "nvcc": cuda.nvcc or "none",
        "cuda_version": cuda.version or "none",
        "codegen_here": has,  # what this machine has of the target's code generator
        "reach": reach,  # how far the target's compile gets here, when short of running the kernel
    }


def os_distribution(os_release: Path = Path("/etc/os-release")) -> str:
    """The OS as a maintainer asks for it, the distribution (PRETTY_NAME of os-release: "Debian GNU/Linux 12
    (bookworm)"), not the kernel release; the platform's name when the file does not say."""
    with contextlib.suppress(OSError):
        for line in os_release.read_text().splitlines():
            key, _, value = line.partition("=")
            if key == "PRETTY_NAME" and value.strip("\"' "):
                return value.strip("\"' ")
    return platform.platform(terse=True)


@dataclass(frozen=True)
class CheckProgram:
    """A wrong-result check as a standalone script needs it: the runner's source, the case's spec and the
    modules mismatch_run.py loads (wire.py, and the reference's), name -> source, each after what it imports."""

    runner: str
    spec: dict[str, Any]
    reference: dict[str, str]


def check_program(case: Case, outputs: tuple[TensorSpec, ...]) -> CheckProgram:
    spec = mismatch_spec(case, outputs)
    modules = {**CHECK_MODULES, **REFERENCE_MODULES.get(spec.get("reference", ""), {})}
    return CheckProgram(Path(MISMATCH_SCRIPT).read_text(), spec, {n: Path(p).read_text() for n, p in modules.items()})
