"""The AKG builds a MindSpore wheel ships (lib/plugin/<build>/libakg.so: cpu, gpu11.6, gpu11.1, ascend) and
which one compiles a case: cpu for target cpu; for cuda the GPU build matching this machine's CUDA, else the
newest shipped; for aicore the Ascend build, which a CPU wheel does not have. Also what this machine has for
CUDA (a GPU, nvcc), for the bundle's Environment section."""

from __future__ import annotations

import functools
import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from reducer.core.errors import InputError
from reducer.core.targets import CCEC, NVCC, Target

PLUGINS = "lib/plugin"
LIBRARY = "libakg.so"


@dataclass(frozen=True)
class AkgBuild:
    """One AKG build of the wheel: its name (the plugin folder), where it is, and which library exactly."""

    name: str
    plugin_dir: str
    size: int
    sha256: str

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "plugin_dir": self.plugin_dir,
            "libakg_size": self.size,
            "libakg_sha256": self.sha256,
        }


@functools.cache
def _digest(path: str, size: int, mtime_ns: int) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            sha.update(chunk)
    return sha.hexdigest()


def shipped(mindspore_dir: str) -> list[str]:
    """The names of the AKG builds under `mindspore_dir`, sorted."""
    return sorted(p.parent.name for p in (Path(mindspore_dir) / PLUGINS).glob(f"*/{LIBRARY}"))


def build_of(mindspore_dir: str, name: str) -> AkgBuild:
    library = Path(mindspore_dir) / PLUGINS / name / LIBRARY
    stat = library.stat()
    return AkgBuild(name, str(library.parent), stat.st_size, _digest(str(library), stat.st_size, stat.st_mtime_ns))


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", name))


@functools.cache
def machine_cuda() -> str | None:
    """This machine's CUDA version (from nvcc, else nvidia-smi), or None without CUDA."""
    for command, pattern in (
        (["nvcc", "--version"], r"release (\d+\.\d+)"),
        (["nvidia-smi"], r"CUDA Version: (\d+\.\d+)"),
    ):
        if shutil.which(command[0]) is None:
            continue
        try:
            text = subprocess.run(command, capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        if found := re.search(pattern, text):
            return found.group(1)
    return None


@dataclass(frozen=True)
class CudaHost:
    """What this machine has for the GPU pipeline: a GPU (nvidia-smi), nvcc, and its CUDA version."""

    has_gpu: bool
    nvcc: str | None
    version: str | None

    def to_dict(self) -> dict[str, object]:
        return {"has_gpu": self.has_gpu, "nvcc": self.nvcc, "version": self.version}

    def said(self) -> str:
        """'GPU no, nvcc /usr/bin/nvcc, CUDA 13.0': how a report names it."""
        return f"GPU {'yes' if self.has_gpu else 'no'}, nvcc {self.nvcc or 'none'}, CUDA {self.version or 'none'}"


def cuda_host() -> CudaHost:
    return CudaHost(shutil.which("nvidia-smi") is not None, shutil.which("nvcc"), machine_cuda())


def ccec() -> str | None:
    """CANN's CCE compiler, which takes an aicore compile on past AKG's passes, when it is on PATH."""
    return shutil.which("ccec")


def codegen_facts(target: Target) -> tuple[str, str]:
    """For a kernel that passes AKG's pipeline of `target` and stops where its code generator would take over:
    what this machine has of that code generator, and what the step is."""
    if target.codegen == CCEC:
        found = ccec()
        return f"ccec at {found}" if found else "no ccec on PATH", "CANN's code generation"
    return cuda_host().said(), "CUDA code generation and the CUDA toolkit"


def ascend_pipeline_reach() -> str:
    """How far an aicore compile gets on this machine, for the bundle."""
    found = ccec()
    if found:
        return f"AKG's whole Ascend pipeline and CCE compilation by CANN's ccec ({found}); no NPU runs the kernel"
    return "AKG's whole Ascend pipeline up to CCE code generation (no CANN here: its ccec would go on)"


def _cuda_build(builds: list[str]) -> str:
    """The build of the machine's CUDA major version, the newest not newer than it; else the newest."""
    gpus = sorted(builds, key=_version)
    cuda = machine_cuda()
    if cuda is not None:
        fitting = [b for b in gpus if _version(b)[:1] == _version(cuda)[:1] and _version(b) <= _version(cuda)]
        if fitting:
            return fitting[-1]
    return gpus[-1]


def choose_build(mindspore_dir: str, mindspore_version: str | None, target: Target, requested: str | None) -> AkgBuild:
    """The AKG build that compiles `target` (or the `requested` one); InputError when the wheel has none."""
    builds = shipped(mindspore_dir)
    prefix = target.build_prefix
    if requested is not None:
        if requested not in builds:
            raise InputError(
                f"field 'akg_build': no AKG build {requested!r} in {mindspore_dir}/{PLUGINS} "
                f"(shipped: {', '.join(builds) or 'none'})"
            )
        if not requested.startswith(prefix):
            raise InputError(
                f"field 'akg_build': {requested} does not compile target {target.name} (a {prefix}* build does)"
            )
        return build_of(mindspore_dir, requested)
    candidates = [b for b in builds if b.startswith(prefix)]
    if not candidates:
        where = f"MindSpore {mindspore_version or ''} at {mindspore_dir}".replace("  ", " ")
        raise InputError(
            f"field 'target': {target.name} needs AKG's {prefix} build ({PLUGINS}/{prefix}*/{LIBRARY}), and {where} "
            f"ships only {', '.join(builds) or 'none'}; set python: to an interpreter whose MindSpore has it "
            "(MindSpore 2.7's CPU wheels do, and for aicore without python: akg-reduce installs MindSpore 2.7.2 "
            "itself), or on a machine with MindSpore for Ascend to that environment's"
        )
    return build_of(mindspore_dir, _cuda_build(candidates) if target.codegen == NVCC else candidates[0])
