"""The AKG compiler driver: finds MindSpore under an interpreter and turns a Case into MindSpore's own
compile command (`compiler.py k.info AKG '<attrs>' <dir>`), run in the sandbox cold or forked from a
warm worker."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from reducer.compile import crash_stack, toolchains
from reducer.compile.builds import PLUGINS, AkgBuild, ascend_pipeline_reach, ccec, choose_build, cuda_host, shipped
from reducer.compile.cache import compile_key
from reducer.compile.nvcc import STOPPED, gpu_pipeline_reach, nvcc_env, with_architecture
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
from reducer.core.errors import InputError
from reducer.core.targets import CCEC, NVCC, TARGETS, Target
from reducer.kernels import graph_numpy
from reducer.kernels.kinds import GRAPH, info_text, kind_of

COMPILER_SCRIPT = "_extends/parallel_compile/akg_compiler/compiler.py"
MISMATCH_SCRIPT = str(Path(__file__).with_name("mismatch_run.py"))
GRAPH_REFERENCE = graph_numpy.__file__  # what mismatch_run.py loads beside it
EFFECTIVE_ATTRS_SCRIPT = str(Path(__file__).with_name("effective_attrs.py"))
TILING_ENV = "MS_GRAPH_KERNEL_TILING"
WHITELIST_ENV = "AKG_WHITE_LIST_PATH"
FROZEN_TILING = "akg_reduce_frozen_tiling.json"  # an empty tiling repository, written next to the .info
SET_BY_AKG = {"target", "process"}  # AKG sets these from the .info itself
WORKER_ATTEMPTS = 2  # a compile whose worker died is rerun once in a fresh worker
GDB_SLOWDOWN = 3  # a compile under gdb may take this many times its own limit (symbols of libakg.so, ptrace)
GDB_EXIT_SECONDS = 10.0
HOLD_FILE = "akg-reduce-go"  # a warm compile waits for it (akg_worker's hold_until); gdb makes it once attached
GDB_LOG = "akg-reduce-gdb.log"

_PROBE = """
import importlib.metadata, importlib.util, json, platform, sys
spec = importlib.util.find_spec("mindspore")
try:
    version = importlib.metadata.version("mindspore")
except importlib.metadata.PackageNotFoundError:
    version = None
print(json.dumps({"site": list(spec.submodule_search_locations)[0] if spec else None, "version": version,
                  "python": platform.python_version()}))
"""


@dataclass(frozen=True)
class Toolchain:
    """Where the compile runs: the interpreter, MindSpore's package dir and the compile entry script."""

    python: str
    mindspore_dir: str | None
    mindspore_version: str | None
    python_version: str
    compiler_script: str


@functools.cache
def find_toolchain(python: str | None, compiler: str | None) -> Toolchain:
    """Probe `python` (default: this interpreter) for MindSpore; `compiler` replaces its entry script."""
    interpreter = python or sys.executable
    try:
        probe = subprocess.run([interpreter, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=True)
        facts = json.loads(probe.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        raise InputError(f"field 'python': cannot run {interpreter} to look for MindSpore") from None
    site = facts["site"]
    if compiler is None:
        if site is None:
            raise InputError(
                f"field 'python': MindSpore is not installed for {interpreter} "
                "(pip install 'akg-reduce[akg]', or set python: to an interpreter that has it)"
            )
        script = str(Path(site) / COMPILER_SCRIPT)
    else:
        if not Path(compiler).is_file():
            raise InputError(f"field 'compiler': {compiler} is not a file")
        script = compiler
    return Toolchain(interpreter, site, facts["version"], facts["python"], script)


def interpreter_of(case: Case) -> str | None:
    """The interpreter that compiles `case`: its `python:`; else, for a target whose AKG build this
    interpreter's MindSpore does not ship (aicore on a wheel without the Ascend build), the toolchain
    installed for it (toolchains.py, installed on first use); else None, this interpreter."""
    if case.python is not None or case.compiler is not None:
        return case.python
    return target_interpreter(TARGETS[case.target])


def target_interpreter(target: Target, install: bool = True) -> str | None:
    """The interpreter that compiles `target` when a case names none (see interpreter_of). Without
    `install`, InputError when its toolchain would have to be installed first."""
    if target.toolchain is None:
        return None
    own = find_toolchain(None, None)
    if own.mindspore_dir is not None and target.toolchain.build in shipped(own.mindspore_dir):
        return None
    if not install and toolchains.installed(target) is None:
        raise InputError(
            f"field 'target': the toolchain of {target.name} is not installed (reduce toolchain {target.name})"
        )
    return toolchains.ensure(target)


def compiles_here(case: Case) -> bool:
    """Whether this machine has what compiles `case` (its target's AKG build), without installing anything."""
    try:
        if case.python is None and case.compiler is None:
            target_interpreter(TARGETS[case.target], install=False)
        akg_build(case)
    except InputError:
        return False
    return True


def toolchain_of(case: Case) -> Toolchain:
    """The toolchain that compiles `case` (see interpreter_of)."""
    return find_toolchain(interpreter_of(case), case.compiler)


def akg_build(case: Case) -> AkgBuild | None:
    """The AKG build that compiles `case` (by its target, or its `akg_build`); None for a compiler of its
    own outside MindSpore. InputError when MindSpore has no build for the target."""
    toolchain = toolchain_of(case)
    if toolchain.mindspore_dir is None:
        return None
    return choose_build(toolchain.mindspore_dir, toolchain.mindspore_version, TARGETS[case.target], case.akg_build)


def compile_env(case: Case, build: AkgBuild | None, dump_ir: bool = False, search: bool = False) -> dict[str, str]:
    """The environment of a compile of `case` by `build`: ours without MindSpore's, AKG's and TVM's variables,
    the build's library path (one whose code goes to nvcc: with the nvcc shim, see nvcc.py), then the case's own
    variables (case_env)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MS_", "AKG_", "TVM_"))}
    if build is not None:
        env["TVM_LIBRARY_PATH"] = build.plugin_dir
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [build.plugin_dir, os.environ.get("LD_LIBRARY_PATH")]))
        if TARGETS[case.target].codegen == NVCC:
            env.update(nvcc_env(env.get("PATH", os.defpath), run=not search))
    env.update(case_env(case))
    if dump_ir:
        env["MS_DEV_DUMP_IR"] = "on"
    return env


def compile_command(toolchain: Toolchain, attrs: dict[str, Any]) -> list[str]:
    return [toolchain.python, toolchain.compiler_script, "k.info", "AKG", json.dumps(attrs), "."]


def case_env(case: Case) -> dict[str, str]:
    """The case's environment for a compile in the sandbox. AKG reads a tiling repository only under
    AKG_WHITE_LIST_PATH, by default the compile's working dir: in MindSpore that is the user's, in the sandbox
    a fresh one. So a repository the case names (MS_GRAPH_KERNEL_TILING, the `repository_path` attr) has its
    folder whitelisted, unless the case sets AKG_WHITE_LIST_PATH itself."""
    folders = []
    repository, repository_dir = case.env.get(TILING_ENV), case.attrs.get("repository_path")
    if repository and repository != FROZEN_TILING:
        folders.append(os.path.dirname(os.path.abspath(repository)))
    if isinstance(repository_dir, str) and repository_dir:
        folders.append(os.path.abspath(repository_dir))
    if not folders or WHITELIST_ENV in case.env:
        return case.env
    return {WHITELIST_ENV: os.path.commonpath(folders), **case.env}


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
    search: bool = False,
) -> Outcome:
    """One compile of `case` by MindSpore's AKG entry, in the sandbox: forked from a warm worker of
    `pool` when given (a worker that dies mid-compile is replaced and the compile rerun), else cold; a
    wrong-result case runs in a mismatch runner of `pool`. A compile that dies by a signal is run once more
    under gdb, to know where it died (crash_place).
    Setting `cancel` stops it (CompileCancelled); `hang_check` cuts a hang elsewhere short (see HangCheck).
    A `search` candidate's cuda compile stops where nvcc would start: past AKG's passes, nvcc tells the search
    nothing (code generation is never the bug reduced) and costs a second a candidate."""
    toolchain = toolchain_of(case)
    env = compile_env(case, akg_build(case), dump_ir, search)
    if case.mismatch is not None:  # compiled and run by a runner of its kernel kind (MindSpore does not fork)
        spec = mismatch_spec(case, outputs)
        files = {"spec.json": json.dumps(spec)}
        command = [toolchain.python, MISMATCH_SCRIPT, "spec.json"]
        runner = mismatch_runner(toolchain.python, spec["kernel"])
        job = _Job(case, files, env, command, runner, {"spec": "spec.json"})
    else:
        command = compile_command(toolchain, case.attrs)
        program = compile_worker(toolchain.python, toolchain.compiler_script)
        job = _Job(case, kernel_files(case, outputs), env, command, program, {"argv": command[1:]})
    outcome = _run(job, pool, collect, cancel, hang_check)
    if outcome.signal is not None and case.mismatch is None:
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
    frames = _traced_warm(tool, job, pool) if pool is not None else ()
    if frames:
        return frames
    command = crash_stack.under_gdb(tool, job.command)
    again = run_sandboxed(command, job.files, job.env, GDB_SLOWDOWN * job.case.time_limit, job.case.memory)
    return crash_stack.frames(again.output)


def _traced_warm(tool: str, job: _Job, pool: WorkerPool) -> tuple[str, ...]:
    """The compile forked from a warm worker of `pool`, held until gdb has attached to it (hold_until)."""
    key = pool.key(job.program, job.env)
    if not pool.usable(key):
        return ()
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
            limit = GDB_SLOWDOWN * job.case.time_limit
            outcome = supervise(functools.partial(launch, worker), job.files, limit, job.case.memory, collect)
    except (WorkerUnavailable, WorkerDied):
        return ()
    finally:
        for debugger in debuggers:
            with contextlib.suppress(OSError):
                debugger.kill()
            debugger.wait()
    return crash_stack.frames(outcome.collected or "") if outcome.signal is not None else ()


def freeze_attrs(case: Case) -> Case:
    """A fused graph with the attrs AKG really compiles it with (its tiling repository and its own additions
    merged in, see effective_attrs.py) and an empty tiling repository, so that shrinking the graph cannot
    silently change them; only the attr and env passes may remove them. `case` itself when it is not a graph,
    AKG splits it into several segments, or the compiler is not MindSpore's."""
    if kind_of(case) is not GRAPH:
        return case
    toolchain = toolchain_of(case)
    command = [toolchain.python, EFFECTIVE_ATTRS_SCRIPT, toolchain.compiler_script, "k.info", json.dumps(case.attrs)]
    env = compile_env(case, akg_build(case))
    outcome = run_sandboxed(command, kernel_files(case, ()), env, 300, case.memory)
    try:
        segments = json.loads(outcome.output.strip().splitlines()[-1])["segments"]
    except (ValueError, IndexError, KeyError, TypeError):
        return case
    if outcome.returncode != 0 or len(segments) != 1:
        return case
    attrs = {k: v for k, v in segments[0].items() if k not in SET_BY_AKG}
    return case.with_(attrs=attrs, env={**case.env, TILING_ENV: FROZEN_TILING})


def mismatch_spec(case: Case, outputs: tuple[TensorSpec, ...]) -> dict[str, Any]:
    """What reducer/compile/mismatch_run.py needs to run `case` (its kernel returning `outputs`) on AKG and
    on its reference."""
    assert case.mismatch is not None
    return {
        **kind_of(case).check_spec(case, outputs),
        "ops": kind_of(case).ops(case),
        "inputs": [t.to_dict() for t in case.inputs],
        "outputs": [t.to_dict() for t in outputs],
        "attrs": case.attrs,
        "against": case.mismatch.against_attrs,
        "tolerance": case.mismatch.tolerance,
        "seed": 0,
    }


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


def cache_key(case: Case, outputs: tuple[TensorSpec, ...]) -> str:
    """The persistent-cache key of compiling `case`: exactly what the compiler is given, and who compiles."""
    toolchain = toolchain_of(case)
    build = akg_build(case)
    compiler_input = {"info": info_text(case, outputs), "attrs": case.attrs, "env": case.env}
    identity = {**compiler_identity(toolchain), "akg_build": build.name if build else ""}
    if case.mismatch is not None:  # the check itself decides the verdict: a new check, new verdicts
        compiler_input["mismatch"] = mismatch_spec(case, outputs)
        identity["check_sha256"] = hashlib.sha256(Path(MISMATCH_SCRIPT).read_bytes()).hexdigest()
        if compiler_input["mismatch"]["kernel"] == "graph":  # and the reference it loads
            identity["reference_sha256"] = hashlib.sha256(Path(GRAPH_REFERENCE).read_bytes()).hexdigest()
    codegen = TARGETS[case.target].codegen
    if codegen == CCEC:  # how far the Ascend pipeline gets depends on CANN's compiler being here
        identity["ccec"] = ccec() or ""
    if codegen == NVCC:  # how far the GPU pipeline gets depends on the machine's GPU and nvcc
        identity["cuda_machine"] = json.dumps(cuda_host().to_dict(), sort_keys=True)
        identity["nvcc"] = STOPPED  # only search compiles are stored, and those stop before nvcc
    return compile_key(identity, compiler_input)


def pipeline_reach(target: Target) -> str:
    """How far a compile for `target` gets on this machine, when its code generator is outside AKG."""
    if target.codegen == NVCC:
        cuda = cuda_host()
        has = f"GPU {'yes' if cuda.has_gpu else 'no'}, nvcc {cuda.nvcc or 'none'}, CUDA {cuda.version or 'none'}"
        return f"this machine: {has}; compiled here: {gpu_pipeline_reach()}"
    if target.codegen == CCEC:
        return f"compiled here: {ascend_pipeline_reach()}"
    return ""


def host_facts(toolchain: Toolchain, build: AkgBuild | None, target: Target) -> dict[str, str]:
    """This machine, the compiler and the AKG build, and how far the pipeline of `target` gets here: the
    Environment section of a bundle."""
    cuda = cuda_host()
    return {
        "os": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "python": toolchain.python_version,
        "mindspore": toolchain.mindspore_version or "not installed",
        "akg_build_name": build.name if build else "",
        "libakg": f"lib/plugin/{build.name}/libakg.so, {build.size} bytes, sha256 {build.sha256}" if build else "",
        "gpu": "yes" if cuda.has_gpu else "no",
        "nvcc": cuda.nvcc or "none",
        "cuda_version": cuda.version or "none",
        "reach": pipeline_reach(target),
    }


@dataclass(frozen=True)
class CheckProgram:
    """A wrong-result check as a standalone script needs it: the runner's source, the case's spec and the
    numpy reference's source ('' when the check has none)."""

    runner: str
    spec: dict[str, Any]
    reference: str


def check_program(case: Case, outputs: tuple[TensorSpec, ...]) -> CheckProgram:
    spec = mismatch_spec(case, outputs)
    reference = Path(GRAPH_REFERENCE).read_text() if spec.get("reference") else ""
    return CheckProgram(Path(MISMATCH_SCRIPT).read_text(), spec, reference)
