"""Finding the `.info` files a MindSpore run wrote: in the folders its settings name, only those written
during the run, and whether MindSpore built each."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from reducer.inputs.kernel_meta import meta_dirs, written_kernels

INFO = {"op": "Fused_Add_1", "op_desc": [{"name": "Add"}], "process": "cpu"}


def put(folder: Path, name: str, built: bool = False, age: float = 0.0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.info"
    path.write_text(json.dumps({**INFO, "op": name}))
    if built:
        path.with_suffix(".so").write_bytes(b"\x7fELF")
    if age:
        os.utime(path, (time.time() - age, time.time() - age))
    return path


def test_the_folders_of_a_run(tmp_path: Path) -> None:
    env = {"MS_COMPILER_CACHE_PATH": "/cache", "KERNEL_META_DIR": "meta/kernel_meta"}
    dirs = meta_dirs(tmp_path, env, ["cc_dir/", ""])
    assert tmp_path / "akg_kernel_meta" in dirs and tmp_path / "kernel_meta" in dirs
    assert tmp_path / "cc_dir" / "akg_kernel_meta" in dirs and Path("/cache/akg_kernel_meta") in dirs
    assert tmp_path / "meta" / "kernel_meta" in dirs and len(dirs) == len(set(dirs))


def test_only_kernels_written_during_the_run_and_whether_built(tmp_path: Path) -> None:
    meta = tmp_path / "akg_kernel_meta"
    put(meta, "Fused_Old_1", age=3600)
    put(meta, "Fused_Built_2", built=True)
    put(meta, "Fused_Failed_3")
    (meta / "Fused_Broken_4.info").write_text("{not json")
    found = written_kernels([meta, tmp_path / "missing"], time.time() - 60)
    assert [(w.path.stem, w.compiled) for w in found] == [("Fused_Built_2", True), ("Fused_Failed_3", False)]
