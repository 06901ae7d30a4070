"""The one launcher: where a case's compile and every program of reducer/in_mindspore run. The interpreter
(the case's `python:`; else, for a target whose AKG build this interpreter's MindSpore lacks, the toolchain
installed for it; else this one), the AKG build of the target in it, and the environment of that build (its
library path, the nvcc stand-in for a GPU build, the case's own variables). A TeLang probe, a warm worker, a
wrong-result check and a compile of one case all run with the same three."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reducer.core.case import Case
from reducer.core.errors import EnvironmentBroken, InputError
from reducer.core.targets import NVCC, TARGETS, Target
from reducer.in_mindspore import script
from reducer.toolchain import releases
from reducer.toolchain.builds import AkgBuild, choose_build, shipped
from reducer.toolchain.nvcc import nvcc_env

COMPILER_SCRIPT = "_extends/parallel_compile/akg_compiler/compiler.py"
TILING_ENV = "MS_GRAPH_KERNEL_TILING"
WHITELIST_ENV = "AKG_WHITE_LIST_PATH"
FROZEN_TILING = "akg_reduce_frozen_tiling.json"  # an empty tiling repository, written next to the .info
PROBE_SECONDS = 120  # finding MindSpore under an interpreter takes a second


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
    """Probe `python` (default: this interpreter) for MindSpore; `compiler` replaces its entry script.
    EnvironmentBroken, naming the interpreter, when it does not start or has no MindSpore to compile with."""
    interpreter = python or sys.executable
    try:
        probe = subprocess.run([interpreter, "-c", _PROBE], capture_output=True, text=True, timeout=PROBE_SECONDS)
    except OSError as exc:
        raise EnvironmentBroken(f"field 'python': cannot start {interpreter}: {exc.strerror}") from None
    except subprocess.TimeoutExpired:
        raise EnvironmentBroken(f"field 'python': {interpreter} did not answer within {PROBE_SECONDS} s") from None
    if probe.returncode < 0:
        name = signal.Signals(-probe.returncode).name
        raise EnvironmentBroken(f"field 'python': {interpreter} died of {name} as it started")
    try:
        facts = json.loads(probe.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise EnvironmentBroken(
            f"field 'python': {interpreter} exited with code {probe.returncode} as it started, saying nothing of "
            "MindSpore"
        ) from None
    site = facts["site"]
    if compiler is None:
        if site is None:
            raise EnvironmentBroken(
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
    if not install and releases.installed(target) is None:
        raise InputError(
            f"field 'target': the toolchain of {target.name} is not installed (reduce toolchain {target.name})"
        )
    return releases.ensure(target)


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


def compile_env(
    case: Case, build: AkgBuild | None, dump_ir: bool = False, stop_at_codegen: bool = False
) -> dict[str, str]:
    """The environment of a compile of `case` by `build`: ours without MindSpore's, AKG's and TVM's variables,
    the build's library path (one whose code goes to nvcc: with the nvcc shim, see nvcc.py), then the case's own
    variables (case_env)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MS_", "AKG_", "TVM_"))}
    if build is not None:
        env["TVM_LIBRARY_PATH"] = build.plugin_dir
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [build.plugin_dir, os.environ.get("LD_LIBRARY_PATH")]))
        if TARGETS[case.target].codegen == NVCC:
            env.update(nvcc_env(env.get("PATH", os.defpath), run=not stop_at_codegen))
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


@dataclass(frozen=True)
class Launch:
    """A program started for a case: its command line and its environment."""

    argv: list[str]
    env: dict[str, str]

    def beside(self, program: str, *args: str) -> Launch:
        """Another in_mindspore `program`, in the same interpreter and environment."""
        return Launch([self.argv[0], script(program), *args], self.env)


def launch(case: Case, program: str, *args: str, dump_ir: bool = False, stop_at_codegen: bool = False) -> Launch:
    """The in_mindspore `program` run for `case`: under its toolchain's interpreter, with its build's
    environment (compile_env). InputError when this machine has no build for the case's target."""
    return Launch(
        [toolchain_of(case).python, script(program), *args],
        compile_env(case, akg_build(case), dump_ir, stop_at_codegen),
    )
