"""The failing kernels of a user's run, gathered from what the run printed and what it wrote: each distinct
kernel once, with its build attrs and environment as they change compilation, and written out as a
replayable crash.yaml beside an exact copy of its `.info`."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from reducer.core.case import Expectation
from reducer.core.files import json_digest, write_atomic
from reducer.core.targets import DEFAULT
from reducer.inputs.failure_log import LogFindings
from reducer.inputs.kernel_meta import WrittenKernel

# Build attrs that only steer MindSpore's kernel cache and AKG's logging; they are not part of the bug.
STEERING_ATTRS = ("compile_cache", "log_level")
# MindSpore's graph-kernel flags (`graph_kernel_flags`), as a run sets them in its environment.
FLAGS_ENV = "MS_DEV_GRAPH_KERNEL_FLAGS"
# The flags MindSpore turns into build attrs of every AKG kernel it builds (AkgKernelBuilder::CollectBuildAttrs
# in its kernel/akg/akg_kernel_build.cc): online_tuning when above 0, repository_path when set.
FLAG_ATTRS = {"online_tuning": int, "repository_path": str}
# Variables kept besides MS_* and AKG_*: AKG reads these while it compiles.
COMPILE_VARS = ("OMP_NUM_THREADS", "SYMBOLIC_TILING")
# Variables that only say where MindSpore caches, logs, dumps or how many builders it starts, and akg-reduce's.
STEERING_VARS = (
    "MS_COMPILER_CACHE",
    "MS_DEV_SAVE_GRAPHS",
    "MS_DEV_DUMP",
    "MS_SUBMODULE_LOG",
    "MS_RDR",
    "MS_LOG",
    "MS_ALLOC_CONF",
    "MS_BUILD_PROCESS_NUM",
    "MS_ENABLE_CACHE",
    "AKG_REDUCE_",  # akg-reduce's own (its cache, its sandbox): a run under it is not a different compile
)


@dataclass(frozen=True)
class FoundKernel:
    """One failing kernel of the run."""

    name: str  # the kernel's "op": the name of its bundle
    info: dict[str, Any]
    info_text: str  # the .info exactly as the run wrote it (or as the log printed it)
    attrs: dict[str, Any]
    where: str  # where it was found, for a person: "akg_kernel_meta/X.info", "line 53 of run.log"
    in_log: bool  # the run's output reports it failed (else: written by the run, never built)


def folder_name(name: str) -> str:
    """A kernel name as a folder name: a log may carry any "op"."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).lstrip(".") or "kernel"


def compile_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attrs.items() if k not in STEERING_ATTRS}


def flag_attrs(env: dict[str, str]) -> dict[str, Any]:
    """The build attrs every kernel of a run with `env` was built with, as MindSpore derives them from the
    run's graph-kernel flags (MindSpore logs a kernel's attrs only when its build fails)."""
    attrs: dict[str, Any] = {}
    for flag in env.get(FLAGS_ENV, "").split():
        name, _, value = flag.removeprefix("--").partition("=")
        if name in FLAG_ATTRS and value:
            try:
                attrs[name] = FLAG_ATTRS[name](value)
            except ValueError:
                continue  # MindSpore refuses the flag itself
    if attrs.get("online_tuning", 1) <= 0:
        del attrs["online_tuning"]
    return attrs


def compile_env(env: dict[str, str]) -> dict[str, str]:
    """The variables of a run that change what AKG compiles."""
    return {
        name: value
        for name, value in sorted(env.items())
        if (name.startswith(("MS_", "AKG_")) or name in COMPILE_VARS) and not name.startswith(STEERING_VARS)
    }


def shown_path(path: Path, cwd: Path | None) -> str:
    """`path` as a person in `cwd` names it: relative when it is below, else whole."""
    if cwd is not None and path.is_relative_to(cwd):
        return str(path.relative_to(cwd))
    return str(path)


def gather(findings: LogFindings, written: list[WrittenKernel], log_name: str, cwd: Path | None) -> list[FoundKernel]:
    """The failing kernels: those the log reports (the run's own `.info` when it wrote one with the same
    content), then those the run wrote and never built, which a crashed compile leaves."""
    on_disk = {json_digest(w.info): w for w in written}
    found: list[FoundKernel] = []
    for k in findings.kernels:
        disk = on_disk.pop(json_digest(k.info), None)
        if disk is not None:
            text, where = disk.path.read_text(encoding="utf-8"), f"{shown_path(disk.path, cwd)}, written by the run"
        else:
            text, where = json.dumps(k.info), f"the kernel JSON at line {k.line} of {log_name}"
        found.append(FoundKernel(folder_name(k.name), k.info, text, compile_attrs(k.attrs), where, in_log=True))
    found += [_on_disk(w, findings.attrs(), cwd, "written by the run and never built") for w in on_disk.values()
              if not w.compiled]  # fmt: skip
    return _distinct_names(found)


def built(written: list[WrittenKernel], cwd: Path | None, attrs: dict[str, Any]) -> list[FoundKernel]:
    """The kernels the run wrote and built, with the build attrs it built them with: those whose results a
    wrong-result check looks at."""
    return _distinct_names([_on_disk(w, attrs, cwd, "built by the run") for w in written if w.compiled])


def _on_disk(kernel: WrittenKernel, attrs: dict[str, Any], cwd: Path | None, how: str) -> FoundKernel:
    """A kernel the run wrote, named by its op (else its file), found `how`."""
    name = folder_name(str(kernel.info.get("op") or kernel.path.stem))
    where = f"{shown_path(kernel.path, cwd)}, {how}"
    return FoundKernel(name, kernel.info, kernel.path.read_text(encoding="utf-8"), attrs, where, in_log=False)


def _distinct_names(found: list[FoundKernel]) -> list[FoundKernel]:
    """Each kernel its own folder: names that are equal, or equal once made folder names ('a/b', 'a_b';
    one op name in two runs of a log), get -2, -3, ..."""
    taken: set[str] = set()
    named = []
    for kernel in found:
        name, n = kernel.name, 1
        while name.lower() in taken:  # a case-insensitive file system folds case too
            n += 1
            name = f"{kernel.name}-{n}"
        taken.add(name.lower())
        named.append(replace(kernel, name=name))
    return named


def write_case(
    kernel: FoundKernel,
    env: dict[str, str],
    folder: Path,
    header: str,
    expect: Expectation | None = None,
    python: str | None = None,
) -> Path:
    """crash.yaml for `kernel` in `folder`, compiled by `python` (None: akg-reduce's own), its `.info` beside
    it; returns the crash.yaml's path."""
    info_name = f"{kernel.name}.info"
    write_atomic(folder / info_name, kernel.info_text)
    data: dict[str, Any] = {
        "name": kernel.name,
        "kernel": info_name,
        "attrs": compile_attrs(kernel.attrs),
        "env": env,
        "target": str(kernel.info.get("process", DEFAULT.name)),
        **({"python": python} if python else {}),
    }
    if expect is not None:
        data["expect"] = expect.to_dict()
    comment = "".join(f"# {line}\n" for line in header.splitlines())
    text = comment + yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=110)
    write_atomic(folder / "crash.yaml", text)
    return folder / "crash.yaml"
