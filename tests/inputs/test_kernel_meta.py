"""Finding the `.info` files a MindSpore run wrote: in the folders its settings name, only those written
during the run, and whether MindSpore built each."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from reducer.capture.found import gather
from reducer.inputs.failure_log import LogFindings, LoggedKernel
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


def test_a_gpu_build_leaves_ptx_and_counts_as_built(tmp_path: Path) -> None:
    meta = tmp_path / "akg_kernel_meta"
    put(meta, "Fused_Gpu_5").with_suffix(".ptx").write_text("// ptx")
    assert [w.compiled for w in written_kernels([meta], time.time() - 60)] == [True]


def test_kernels_whose_names_fold_to_one_folder_get_one_each(tmp_path: Path) -> None:
    """'a/b' and 'a_b' are both a_b as folder names; the same op name twice in one log (two runs) too."""
    logged = [
        LoggedKernel(name, {**INFO, "op": name, "n": i}, {}, i + 1)
        for i, name in enumerate(["Fused/Add_1", "Fused_Add_1", "Fused_Add_1"])
    ]
    found = gather(LogFindings(kernels=logged), [], "run.log", tmp_path)
    assert [k.name for k in found] == ["Fused_Add_1", "Fused_Add_1-2", "Fused_Add_1-3"]
