"""What a stored compile result depends on is in its key: the wrong-result check's own code and, for a
graph, the numpy reference it loads (a changed check gives new verdicts), and, for the GPU pipeline, the
machine's GPU and nvcc and whether the compile was let run nvcc (how far it gets)."""

from __future__ import annotations

import pytest
from conftest import ADD_KERNEL, CORPUS, FAKE_COMPILER

from reducer.compile import akg
from reducer.core.case import Case, Mismatch, TensorSpec
from reducer.kernels import graph as graphs
from reducer.toolchain.builds import CudaHost

pytestmark = pytest.mark.timeout(120)
INPUTS = (TensorSpec((16,), "float32"), TensorSpec((16,), "float32"))


def key(case: Case, stop_at_codegen: bool = True) -> str:
    return akg.cache_key(case, (TensorSpec((16,), "float32"),), stop_at_codegen)


def test_a_changed_wrong_result_check_is_not_answered_from_the_cache(tmp_path, monkeypatch) -> None:
    case = Case("add", ADD_KERNEL, "add", INPUTS, compiler=str(FAKE_COMPILER), mismatch=Mismatch())
    check = tmp_path / "mismatch_run.py"
    check.write_text("# the check\n")
    monkeypatch.setattr(akg, "MISMATCH_SCRIPT", str(check))
    before = key(case)
    check.write_text("# the check, now poisoning outputs first\n")
    assert key(case) != before


def test_a_changed_graph_reference_is_not_answered_from_the_cache(tmp_path, monkeypatch) -> None:
    info = (CORPUS / "castup_transpose_fp16_mismatch" / "Fused_Transpose_split.info").read_text()
    graph = graphs.dumps(graphs.loads(info))
    case = Case("t", "", "", (TensorSpec((16, 16), "float16"),), graph=graph, mismatch=Mismatch())
    reference, bounds = tmp_path / "graph_numpy.py", tmp_path / "graph_bounds.py"
    reference.write_text("# the reference\n")
    bounds.write_text("# its error model\n")
    modules = {"graph_numpy": str(reference), "graph_bounds": str(bounds)}
    monkeypatch.setitem(akg.REFERENCE_MODULES, "graph_numpy", modules)
    outputs = (TensorSpec((16, 16), "float16"),)
    before = akg.cache_key(case, outputs, True)
    reference.write_text("# the reference, now with a rule for Gather\n")
    with_gather = akg.cache_key(case, outputs, True)
    bounds.write_text("# its error model, now for long float16 sums\n")
    assert len({before, with_gather, akg.cache_key(case, outputs, True)}) == 3


def test_how_far_the_gpu_pipeline_gets_depends_on_the_machine(monkeypatch) -> None:
    case = Case("add", ADD_KERNEL, "add", INPUTS, compiler=str(FAKE_COMPILER), target="cuda")
    cpu = case.with_(target="cpu")
    monkeypatch.setattr(akg, "cuda_host", lambda: CudaHost(False, None, None))
    without = key(case), key(cpu)
    monkeypatch.setattr(akg, "cuda_host", lambda: CudaHost(True, "/usr/bin/nvcc", "11.6"))
    assert key(case) != without[0]
    assert key(cpu) == without[1], "a CPU compile's stored result stays valid"


def test_a_compile_stopped_before_nvcc_never_answers_one_that_ran_it() -> None:
    """A candidate of an AKG error stops before nvcc, one of an invalid-cuda bug runs it: stored, the first
    would pass for the second (a `codegen` result where nvcc would have failed)."""
    case = Case("add", ADD_KERNEL, "add", INPUTS, compiler=str(FAKE_COMPILER), target="cuda")
    assert key(case, stop_at_codegen=True) != key(case, stop_at_codegen=False)


def test_a_crash_whose_frames_no_tool_read_is_not_a_final_answer(tmp_path) -> None:
    """Read without gdb (missing, or failing to attach), a crash has no place: stored, it would stay placeless
    after gdb is installed. The cache keeps what read a crash's frames and answers only with placed ones."""
    from reducer.compile.cache import CompileCache
    from reducer.compile.identity import Kind, Signature

    cache = CompileCache(tmp_path / "compiles.sqlite")
    unplaced = Signature(Kind.SIGNAL, "SIGSEGV", "", ())
    cache.put("a", unplaced, 1.0)
    assert cache.get("a") is None
    placed = Signature(Kind.SIGNAL, "SIGSEGV", "", ("akg::ir::CPULocalReconstruction::GetNewArgs",), read_by="gdb")
    cache.put("b", placed, 1.0)
    assert cache.get("b") == placed and cache.get("b").read_by == "gdb"
    cache.close()
