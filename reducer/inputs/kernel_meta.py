"""The `.info` kernels a MindSpore run wrote: where MindSpore puts them (akg_kernel_meta/ and kernel_meta/ in
the run's directory, or under its compile cache path, MS_COMPILER_CACHE_PATH or KERNEL_META_DIR), which
were written during the run, and which of them never got a compiled object next to them (what a compile
that crashed leaves)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

META_DIRS = ("akg_kernel_meta", "kernel_meta")
# What MindSpore leaves beside a .info once AKG has built it: a shared object (CPU), PTX (GPU), an object (Ascend).
COMPILED = (".so", ".ptx", ".o")


@dataclass(frozen=True)
class WrittenKernel:
    """One `.info` the run wrote."""

    path: Path
    info: dict[str, Any]
    compiled: bool  # a built object lies beside it


def meta_dirs(cwd: Path, env: dict[str, str], cache_paths: list[str]) -> list[Path]:
    """The folders a run in `cwd` with environment `env` writes its kernels to; `cache_paths` are the
    `compile_cache` build attrs its compile errors printed (MindSpore's compile_cache_path)."""
    bases = [cwd, *((cwd / p).resolve() for p in cache_paths if p)]
    for name in ("MS_COMPILER_CACHE_PATH", "KERNEL_META_DIR"):
        if env.get(name):
            bases.append((cwd / env[name]).resolve())
    dirs = [base / sub for base in bases for sub in META_DIRS]
    dirs += [base for base in bases[1:] if base.name in META_DIRS]
    return list(dict.fromkeys(dirs))


def written_kernels(dirs: list[Path], since: float) -> list[WrittenKernel]:
    """Every readable kernel `.info` in `dirs` modified at or after `since` (a time.time()), by path."""
    found = []
    for folder in dirs:
        for path in sorted(folder.glob("*.info")) if folder.is_dir() else []:
            try:
                if path.stat().st_mtime < since:
                    continue
                info = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(info, dict) and "op_desc" in info:
                compiled = any(path.with_suffix(suffix).exists() for suffix in COMPILED)
                found.append(WrittenKernel(path, info, compiled))
    return found
