"""`reduce corpus` against the real AKG: shipped cases, a same-bug variant with other shapes, the same bug
dumped as a bare Custom `.info`, and a kernel that compiles. Buckets, a quiet second night, and the same
night on a Dask LocalCluster of 2 workers."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ADD_KERNEL, CORPUS, SharedReductions, needs_akg, own_state

from reducer.inputs.load import load_input
from reducer.kernels.hybrid import infer_outputs
from reducer.kernels.kinds import info_text

pytestmark = [pytest.mark.akg, needs_akg]

UNPACK_BUG = ("dumps__Fused_Custom_1", "hybrid_tuple_unpack", "hybrid_tuple_unpack_small")


def real_corpus(root: Path) -> Path:
    for name in ("hybrid_tuple_unpack", "fp16_buffer_load"):
        shutil.copytree(CORPUS / name, root / name)
    variant = root / "hybrid_tuple_unpack_small"
    shutil.copytree(CORPUS / "hybrid_tuple_unpack", variant)
    data = yaml.safe_load((variant / "crash.yaml").read_text())
    data["inputs"] = [{"shape": [1, 2, 6, 6, 6], "dtype": "float32"}, {"shape": [4, 2, 3, 3, 3], "dtype": "float32"}]
    (variant / "crash.yaml").write_text(yaml.safe_dump(data))
    (root / "dumps").mkdir()
    case = load_input(CORPUS / "hybrid_tuple_unpack" / "crash.yaml")
    (root / "dumps" / "Fused_Custom_1.info").write_text(info_text(case, infer_outputs(case)))
    (root / "add").mkdir()
    (root / "add" / "kernel.py").write_text(ADD_KERNEL)
    (root / "add" / "crash.yaml").write_text(
        "name: add\nkernel: kernel.py\ninputs:\n  - {shape: [16], dtype: float32}\n  - {shape: [16], dtype: float32}\n"
    )
    return root


def night(folder: Path, out: Path, *extra: str) -> dict:
    command = [sys.executable, "-m", "reducer", "corpus", str(folder), "-o", str(out), "-j", "2", *extra]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    report = json.loads((out / "report.json").read_text())
    news = any(c["status"] in {"new", "no-longer-same-bug"} for c in report["cases"])
    assert done.returncode == (4 if news else 0), done.stderr[-3000:]  # 4: a nightly job is told of a new bug
    return report


def summary(report: dict) -> tuple[list, dict]:
    bugs = [(b["status"], tuple(b["cases"]), b["signature"]["location"]) for b in report["bugs"]]
    return bugs, {c["slug"]: c["status"] for c in report["cases"]}


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return real_corpus(tmp_path_factory.mktemp("real-corpus"))


@pytest.fixture(scope="session")
def first_night(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    """The first night of the real corpus, once for the tests of this module: (its output folder, its compile
    cache, its report), with a fresh cache of its own; session-scoped, as xdist may run another module's tests
    between the two that share it. Tests copy the folder before running on it."""
    state = tmp_path_factory.mktemp("first-night")
    with own_state(state):
        report = night(corpus_dir, state / "out", "--no-diagnosis")
    return state / "out", state / "compiles.sqlite", report


@pytest.mark.xdist_group("real_corpus_night")
def test_real_corpus_buckets_and_quiet_second_night(
    corpus_dir: Path, first_night: tuple[Path, Path, dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, cache, report = first_night
    bugs, statuses = summary(report)
    assert bugs == [
        ("new", UNPACK_BUG, "scop_make_schedule_tree.cc:559"),
        ("new", ("fp16_buffer_load",), "buffer.cc:323"),
    ]
    assert statuses["add"] == "passes"
    for bug in report["bugs"]:
        representative = bug["representative"]
        assert representative["reduced_size"]["tokens"] < representative["original_size"]["tokens"]
        assert (out / representative["bundle"] / "ISSUE.md").is_file()
    shutil.copytree(out, tmp_path / "out")
    shutil.copy(cache, tmp_path / "compiles.sqlite")
    monkeypatch.setenv("AKG_REDUCE_CACHE", str(tmp_path / "compiles.sqlite"))
    second = night(corpus_dir, tmp_path / "out", "--no-diagnosis")
    assert summary(second)[0] == [(s.replace("new", "reproduces"), c, loc) for s, c, loc in bugs]
    with sqlite3.connect(tmp_path / "out" / "state.sqlite") as db:
        rows = db.execute("SELECT action, compiles FROM history WHERE run = 2").fetchall()
    assert len(rows) == 5 and all(compiles <= 1 for _, compiles in rows)
    assert not [action for action, _ in rows if "reduced" in action]


@pytest.mark.xdist_group("real_corpus_night")
def test_dask_local_cluster_night_equals_the_local_one(
    corpus_dir: Path, first_night: tuple[Path, Path, dict], tmp_path: Path
) -> None:
    local = first_night[2]  # a fresh cache: every compile of that night was run, as --no-cache runs them here
    dask = night(corpus_dir, tmp_path / "dask", "--executor", "dask", "--no-cache", "--no-diagnosis")
    assert summary(dask) == summary(local)
    sizes = [[b["representative"]["reduced_size"] for b in r["bugs"]] for r in (local, dask)]
    assert sizes[0] == sizes[1]


def test_a_corpus_log_becomes_the_kernels_it_holds(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS / "pointnet_head_fusion_dst_type", corpus / "pointnet_head_fusion_dst_type")
    log = (CORPUS / "pointnet_head_fusion_dst_type" / "run.log").read_text()
    (corpus / "cut.log").write_text("\n".join(line[:1000] for line in log.splitlines()))
    (corpus / "training.log").write_text("epoch 1 loss 0.3\n")
    before = {p: p.read_bytes() for p in corpus.rglob("*") if p.is_file()}
    report = night(corpus, tmp_path / "out", "--no-diagnosis")
    bugs, statuses = summary(report)
    whole = "pointnet_head_fusion_dst_type__run__Fused_MatMul_split_18201626413234529928"
    assert bugs == [("new", (whole,), "composite_topi.cc:730")]
    assert statuses == {
        whole: "new",
        "cut__Fused_MatMul_split_18201626413234529928": "broken input",
        "training": "broken input",
    }
    errors = {c["slug"]: c["error"] for c in report["cases"]}
    assert "cut off" in errors["cut__Fused_MatMul_split_18201626413234529928"]
    assert "no failing AKG compile" in errors["training"]
    assert {p: p.read_bytes() for p in corpus.rglob("*") if p.is_file()} == before  # read, never written


@pytest.mark.xdist_group("conv3d_gemm_tiling")
def test_the_same_failure_on_cpu_and_cuda_is_two_bugs(
    shared_reduction: SharedReductions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS / "conv3d_gemm_tiling", corpus / "conv3d_cpu")
    shutil.copytree(CORPUS / "conv3d_gemm_tiling", corpus / "conv3d_cuda")
    crash = corpus / "conv3d_cuda" / "crash.yaml"
    crash.write_text(yaml.safe_dump({**yaml.safe_load(crash.read_text()), "target": "cuda"}))
    # The cpu case's compiles are those of the shared reduction of the same case: its cache answers them.
    shutil.copy(shared_reduction.cache("conv3d_gemm_tiling"), tmp_path / "compiles.sqlite")
    monkeypatch.setenv("AKG_REDUCE_CACHE", str(tmp_path / "compiles.sqlite"))
    report = night(corpus, tmp_path / "out", "--no-diagnosis")
    bugs, _ = summary(report)
    # One check at one place, but AKG's GPU pipeline and its CPU one are two things to fix.
    assert sorted(bugs) == [
        ("new", ("conv3d_cpu",), "tiling_utils.cc:193"),
        ("new", ("conv3d_cuda",), "tiling_utils.cc:193"),
    ]
    assert {b["key"].endswith("@cuda") for b in report["bugs"]} == {True, False}


def test_crashes_are_bugs_by_where_they_died(tmp_path: Path) -> None:
    """Two aborts at two places are two bugs, though both die by SIGABRT and print no AKG error; one
    segfault met in a fused graph and in a Hybrid DSL kernel is one bug."""
    corpus = tmp_path / "corpus"
    for name in ("pointnet_head_segv", "hybrid_head_attention_segv", "farthest_point_sampling_isl_abort"):
        shutil.copytree(CORPUS / name, corpus / name)
    shutil.copytree(CORPUS / "pointnet_matmul_isl_abort", corpus / "dumped")
    report = night(corpus, tmp_path / "out", "--no-diagnosis")
    bugs = sorted((b["signature"]["message"], b["signature"]["frames"][0], tuple(b["cases"])) for b in report["bugs"])
    dumped = "dumped__Fused_MatMul_split_785238241113303400"
    assert bugs == [
        ("SIGABRT", "akg::ir::poly::CpuMemoryManager::InsertMarkerForGemm(isl::schedule_node&)", (dumped,)),
        ("SIGABRT", "akg::ir::poly::TileOuterBand::ReverseTraverseChild(isl::schedule_node, "
         "std::function<isl::schedule_node(isl::schedule_node)>&)", ("farthest_point_sampling_isl_abort",)),
        ("SIGSEGV", "akg::ir::CPULocalReconstruction::GetNewArgs<air::ir::Call>(air::ir::Call*)",
         ("hybrid_head_attention_segv", "pointnet_head_segv")),
    ]  # fmt: skip
    for bug in report["bugs"]:
        issue = (tmp_path / "out" / bug["representative"]["bundle"] / "ISSUE.md").read_text()
        assert "AKG **crashes** compiling" in issue and f"in `{bug['signature']['frames'][0]}`" in issue
        # The title names the signal and the place (cut when long); "Related log" is gdb's backtrace.
        title = issue.splitlines()[0].removesuffix("…")
        assert f"# [AKG][CPU] {bug['signature']['message']} in {bug['signature']['frames'][0]}".startswith(title)
        assert len(title) > len(f"# [AKG][CPU] {bug['signature']['message']} in akg::")
        related = issue.split("## Related log / screenshot", 1)[1].split("\n## ", 1)[0]
        assert "backtrace by gdb" in related and f"  {bug['signature']['frames'][0]}\n" in related
        assert "Please set tiling repo path" not in related and str(tmp_path) not in issue
