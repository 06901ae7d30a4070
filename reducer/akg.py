"""The AKG compiler driver: finds MindSpore under an interpreter and turns a Case into MindSpore's own
compile command (`compiler.py k.info AKG '<attrs>' <dir>`) run in the sandbox."""

from __future__ import annotations

import functools
import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reducer.case import Case, TensorSpec
from reducer.errors import InputError
from reducer.info import info_text
from reducer.sandbox import Outcome, run_sandboxed

COMPILER_SCRIPT = "_extends/parallel_compile/akg_compiler/compiler.py"
PLUGIN_DIR = "lib/plugin/cpu"

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


def compile_env(toolchain: Toolchain, case_env: dict[str, str], dump_ir: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MS_", "AKG_", "TVM_"))}
    if toolchain.mindspore_dir:
        plugin = str(Path(toolchain.mindspore_dir) / PLUGIN_DIR)
        env["TVM_LIBRARY_PATH"] = plugin
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [plugin, os.environ.get("LD_LIBRARY_PATH")]))
    env.update(case_env)
    if dump_ir:
        env["MS_DEV_DUMP_IR"] = "on"
    return env


def compile_command(toolchain: Toolchain, attrs: dict[str, Any]) -> list[str]:
    return [toolchain.python, toolchain.compiler_script, "k.info", "AKG", json.dumps(attrs), "."]


def compile_case(
    case: Case,
    outputs: tuple[TensorSpec, ...],
    dump_ir: bool = False,
    collect: Callable[[Path], Any] | None = None,
) -> Outcome:
    """One cold compile of `case` by MindSpore's AKG entry, in the sandbox."""
    toolchain = find_toolchain(case.python, case.compiler)
    return run_sandboxed(
        compile_command(toolchain, case.attrs),
        {"k.info": info_text(case, outputs)},
        compile_env(toolchain, case.env, dump_ir),
        case.timeout,
        case.memory,
        collect,
    )


def host_facts(toolchain: Toolchain) -> dict[str, str]:
    return {
        "os": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "python": toolchain.python_version,
        "mindspore": toolchain.mindspore_version or "not installed",
    }
