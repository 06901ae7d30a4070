"""Diagnosis in the bundle, against the fake compiler (whose bug needs a dim >= 3 and goes away with
`enable_vectorization: false`; a dim of 13 is another bug): the workaround is found and verified on the
original, the shape map agrees with compiles re-checked by hand, and the other bug is kept as a case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import write_case

from reducer.core.case import Expectation, TensorSpec
from reducer.inputs.crash_yaml import load_case
from reducer.search.oracle import Oracle
from reducer.session import Settings, reduce_case

BUG = Expectation("error", "Check failed: gemm_m.size() <= FormatM.size()", "fake_tiling.cc:193")


@pytest.fixture(scope="module")
def reduced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the bundle, the original crash.yaml)"""
    root = tmp_path_factory.mktemp("diagnosis")
    crash = write_case(root / "matmul_bias")
    files = {"crash.yaml": crash.read_text(), "kernel.py": (crash.parent / "kernel.py").read_text()}
    folder, _ = reduce_case(load_case(crash), files, root / "out", Settings(jobs=2))
    return folder, crash


def test_workaround_is_verified_on_the_original(reduced: tuple[Path, Path]) -> None:
    bundle, crash = reduced
    diagnosis = json.loads((bundle / "reduction.json").read_text())["diagnosis"]
    (found,) = diagnosis["workarounds"]
    assert found["name"] == "vectorisation off" and found["attrs"]["enable_vectorization"] is False
    assert found["attrs"]["dim"] == "0 0 4 4"  # the original's own attrs are kept
    tiling = next(t for t in diagnosis["workaround_tries"] if t["name"] == "manual tiling, whole loops")
    assert tiling["minimal"] == "fails the same way" and "original" not in tiling
    original = load_case(crash)
    assert not Oracle(BUG).interesting(original.with_(attrs=found["attrs"]))  # re-checked by hand
    issue = (bundle / "ISSUE.md").read_text()
    assert "Changes that avoid the bug" in issue and "**vectorisation off**" in issue
    assert "- **vectorisation off** (" in (bundle / "README.md").read_text()  # the user's workaround


def test_shape_boundary_matches_compiles_checked_by_hand(reduced: tuple[Path, Path]) -> None:
    bundle, crash = reduced
    diagnosis = json.loads((bundle / "reduction.json").read_text())["diagnosis"]
    # the bundle's crash.yaml replays with MindSpore's own entry: point it at the fake again
    minimal = load_case(bundle / "crash.yaml").with_(compiler=load_case(crash).compiler)
    (carrier,) = [b for b in diagnosis["shape_boundary"] if b["value"] >= 3]  # the fake needs a dim >= 3
    assert carrier["fails_for"][0] == 3
    assert carrier["fails_for"][1] == 12  # 13 is the fake's bug C
    assert [n["value"] for n in carrier["nearest_not_failing"]] == [2, 13]
    assert carrier["nearest_not_failing"][0]["outcome"] == "passes"
    name, axis = carrier["dims"].split(" = ")[0].removesuffix("]").split(".shape[")
    index = [p.strip() for p in minimal.source.split("(", 1)[1].split(")", 1)[0].split(",")].index(name)
    oracle = Oracle(BUG)
    for value, fails in ((2, False), (3, True), (carrier["fails_for"][1], True)):
        shapes = [list(t.shape) for t in minimal.inputs]
        shapes[index][int(axis)] = value
        case = minimal.with_(
            inputs=tuple(TensorSpec(tuple(s), t.dtype) for s, t in zip(shapes, minimal.inputs, strict=True))
        )
        assert oracle.interesting(case) is fails, value
    rows = diagnosis["original_shapes"]
    assert rows[0]["outcome"] == "fails the same way (the original)" and len(rows) > 2
    issue = (bundle / "ISSUE.md").read_text()
    assert "<details><summary>Crashing-shape map: " in issue and "fails for 3 and above" in issue
    assert carrier["rule"]["kind"] == "from" and carrier["rule"]["k"] == 3


def test_no_diagnosis_when_turned_off(tmp_path: Path) -> None:
    crash = write_case(tmp_path / "matmul_bias")
    files = {"crash.yaml": crash.read_text()}
    folder, stats = reduce_case(load_case(crash), files, tmp_path / "out", Settings(diagnose=False))
    assert json.loads((folder / "reduction.json").read_text())["diagnosis"] is None
    assert stats["diagnosis_compiles"] == 0 and "### Workarounds" not in (folder / "ISSUE.md").read_text()


@pytest.mark.slow
def test_another_bug_met_by_the_shape_map_is_kept_ready_for_the_corpus(reduced: tuple[Path, Path]) -> None:
    bundle, crash = reduced
    diagnosis = json.loads((bundle / "reduction.json").read_text())["diagnosis"]
    [other] = diagnosis["other_bugs"]  # the fake's bug C: an input dim of exactly 13
    assert other["signature"]["location"] == "fake_split.cc:45" and other["found_at"].endswith("= 13")
    case = load_case(bundle / other["case"] / "crash.yaml").with_(compiler=load_case(crash).compiler)
    assert 13 in [d for t in case.inputs for d in t.shape]
    assert case.expect is not None and Oracle(case.expect).interesting(case)  # replays: that bug, not bug A
    assert not Oracle(BUG).interesting(case)
    assert f"`{other['case']}/`" in (bundle / "ISSUE.md").read_text()
