"""The failing stage named from real AKG logs (kept in tests/data/stage/, one per corpus case) and from
the order in which the per-pass IR was written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import HERE

from reducer.compile.sandbox import Outcome
from reducer.compile.signature import signature_of
from reducer.diagnosis.stage import failing_stage, last_pass

LOGS = HERE / "data" / "stage"


@pytest.mark.parametrize(
    ("case", "stage", "component", "source"),
    [
        (
            "conv3d_gemm_tiling",
            "poly auto-tiling",
            "SpaceAnalyzer::MarkGemmAxes",
            "src/poly/tiling/tiling_utils.cc:193",
        ),
        ("outer_band_index", "poly schedule passes", "AnalysisResult::CheckBandIndex", "src/poly/scop_info.h:1355"),
        (
            "pairwise_dim_realize",
            "AKG IR passes",
            "RealizeCompressor::ProcImmIndexRemap",
            "src/pass/realize_compress.cc:389",
        ),
        (
            "transpose_provide_call",
            "AKG IR passes",
            "MatrixTransposeMutator::CallTransposeInterface",
            "src/pass/matrix_transpose.cc:71",
        ),
        ("fp16_buffer_load", "TVM IR passes", "Buffer::vstore", "third_party/incubator-tvm/src/lang/buffer.cc:323"),
    ],
)
def test_stage_and_component_from_the_backtrace(case: str, stage: str, component: str, source: str) -> None:
    log = (LOGS / f"{case}.log").read_text()
    found = failing_stage(log, signature_of(Outcome(1, None, False, False, 1.0, log), 60), None)
    assert (found.stage, found.component, found.source) == (stage, component, source)


def _dump(root: Path, names: list[str]) -> None:
    """IR files written in the order given, a second apart."""
    for i, name in enumerate(names):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("// ir\n")
        os.utime(path, ns=(i * 10**9, i * 10**9))


def test_last_pass_is_the_last_ir_written(tmp_path: Path) -> None:
    _dump(
        tmp_path,
        ["k_composite/11_BroadcastForSSA.cc", "k_0/09_RewriteTensorIndex.cc", "k_0/poly/02_AnalyzeSchedule.cc"],
    )
    assert last_pass(tmp_path) == "AnalyzeSchedule (poly)"
    _dump(tmp_path / "after", ["k_0/poly/05_RealizeManager.cc", "k_0/13_RealizeCompress.cc"])
    assert last_pass(tmp_path / "after") == "RealizeCompress"
    assert last_pass(tmp_path / "none") == ""


def test_the_issue_line_reads_like_a_maintainer_wrote_it(tmp_path: Path) -> None:
    log = (LOGS / "conv3d_gemm_tiling.log").read_text()
    _dump(tmp_path, ["k_0/09_RewriteTensorIndex.cc", "k_0/poly/02_AnalyzeSchedule.cc"])
    found = failing_stage(log, signature_of(Outcome(1, None, False, False, 1.0, log), 60), tmp_path)
    assert found.one_line() == (
        "poly auto-tiling: SpaceAnalyzer::MarkGemmAxes (in ExtractLoopIndicesFromMatrices), "
        "after AnalyzeSchedule (poly)"
    )
