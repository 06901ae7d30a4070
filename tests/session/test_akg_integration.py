"""Reductions of shipped corpus cases against the real AKG from the MindSpore wheel: the same signature,
smaller everything, a complete bundle, a repro.py that reproduces in a fresh process; the failing stage
and a workaround verified on the original; a wrong-result case that stays wrong."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS, ROOT, SharedReductions, needs_akg

from reducer.inputs.crash_yaml import load_case
from reducer.kernels.kinds import size_of

pytestmark = [pytest.mark.akg, needs_akg]


def reduce_cli(case: str, out: Path, *extra: str) -> Path:
    run = subprocess.run(
        [sys.executable, "-m", "reducer", str(CORPUS / case / "crash.yaml"), "-o", str(out), "-j", "2", *extra],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return out / case


def assert_a_maintainer_takes_it(issue: str, location: str) -> None:
    """A failed check's ISSUE.md as AKG's maintainer reads it: titled by the check and its place, the hardware as
    MindSpore's bot reads it, the kernel run as its user does and its JSON folded, the check's own line in
    "Related log" (never AKG's every-compile notice, never a traceback cut at its first line), no advice to the
    user, no stage said to be unknown."""
    title = issue.splitlines()[0]
    assert title.startswith("# [AKG][CPU] ") and title.endswith(f" at {location}") and len(title) < 102, title
    assert "\n/device cpu\n" in issue and "ops.Custom(" in issue
    assert "<details><summary>kernel.info: the kernel JSON MindSpore hands to AKG</summary>" in issue
    related = issue.split("## Related log / screenshot", 1)[1].split("\n## ", 1)[0]
    assert f"[{location}]" in related and "Please set tiling repo path" not in related
    assert not related.split("```")[1].rstrip().endswith("Traceback (most recent call last):")
    assert "What to do" not in issue and "unknown" not in issue


def check_bundle(bundle: Path, location: str, scratch: Path) -> dict:
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert reduction["signature"]["location"] == location
    assert reduction["confirmations"] == 3
    assert reduction["edits"] and all(set(e) == {"pass", "edit", "size"} for e in reduction["edits"])
    for name in ("ISSUE.md", "repro.py", "kernel.py", "kernel.info", "crash.yaml", "compile.log", "env.json"):
        assert (bundle / name).is_file(), name
    assert any((bundle / "ir").rglob("*.cc")), "per-pass IR missing"
    issue = (bundle / "ISSUE.md").read_text()
    for section in (
        "## Environment",
        "## Describe the current behavior",
        "## Steps to reproduce the issue",
        "## Related log / screenshot",
        "## Special notes for this issue",
    ):
        assert section in issue
    assert location in issue
    assert_a_maintainer_takes_it(issue, location)
    text = "".join(p.read_text(errors="replace") for p in bundle.rglob("*") if p.is_file())
    assert str(ROOT) not in text and "site-packages/mindspore" not in text.replace("<site-packages>", "")
    # repro.py needs only MindSpore: run it alone, from a fresh directory
    fresh = scratch / f"fresh-{bundle.name}"
    fresh.mkdir()
    shutil.copy(bundle / "repro.py", fresh / "repro.py")
    repro = subprocess.run([sys.executable, "repro.py"], cwd=fresh, capture_output=True, text=True, timeout=300)
    assert repro.returncode == 1, repro.stdout + repro.stderr
    assert "The bug reproduces." in repro.stdout
    return reduction


@pytest.mark.quick
def test_transpose_case_reduces_to_the_same_bug(tmp_path: Path) -> None:
    bundle = reduce_cli("transpose_provide_call", tmp_path, "--no-diagnosis")
    reduction = check_bundle(bundle, "matrix_transpose.cc:71", tmp_path)
    assert reduction["reduced"]["tokens"] < reduction["original"]["tokens"]
    assert reduction["reduced"]["volume"] < reduction["original"]["volume"] / 100
    assert reduction["stage"]["stage"] == "AKG IR passes"
    assert reduction["stage"]["component"] == "MatrixTransposeMutator::CallTransposeInterface"
    assert reduction["stage"]["after_pass"]  # the IR dump says how far the compile got
    assert "Failing stage: **AKG IR passes**" in (bundle / "ISSUE.md").read_text()
    reduced = load_case(bundle / "crash.yaml")
    assert reduced.attrs == {} and reduced.env == {}  # neither is needed for this bug
    check = subprocess.run(
        [sys.executable, "-m", "reducer", "check", str(bundle / "crash.yaml")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert check.returncode == 0 and "matrix_transpose.cc:71" in check.stdout


@pytest.mark.xdist_group("pairwise_dim_realize")
def test_case_that_needs_an_attr_keeps_exactly_that_attr(shared_reduction: SharedReductions, tmp_path: Path) -> None:
    bundle = shared_reduction.bundle("pairwise_dim_realize", "--no-diagnosis")
    check_bundle(bundle, "realize_compress.cc:389", tmp_path)
    reduced = load_case(bundle / "crash.yaml")
    assert list(reduced.attrs) == ["dim"]
    assert size_of(reduced).volume < size_of(load_case(CORPUS / "pairwise_dim_realize" / "crash.yaml")).volume


@pytest.mark.timeout(900)
@pytest.mark.xdist_group("conv3d_gemm_tiling")
def test_tiling_case_names_the_stage_and_a_workaround_verified_on_the_original(
    shared_reduction: SharedReductions, tmp_path: Path
) -> None:
    bundle = shared_reduction.bundle("conv3d_gemm_tiling")
    reduction = check_bundle(bundle, "tiling_utils.cc:193", tmp_path)
    stage = reduction["stage"]
    assert (stage["stage"], stage["component"]) == ("poly auto-tiling", "SpaceAnalyzer::MarkGemmAxes")
    assert stage["after_pass"].endswith("(poly)")
    names = [w["name"] for w in reduction["diagnosis"]["workarounds"]]
    assert "manual tiling, whole loops" in names
    workaround = reduction["diagnosis"]["workarounds"][names.index("manual tiling, whole loops")]
    original = load_case(CORPUS / "conv3d_gemm_tiling" / "crash.yaml")
    assert workaround["attrs"] == {**original.attrs, "dim": workaround["attrs"]["dim"]}
    # re-checked by hand: the original with that dim compiles
    fixed = tmp_path / "fixed"
    shutil.copytree(CORPUS / "conv3d_gemm_tiling", fixed)
    data = yaml.safe_load((fixed / "crash.yaml").read_text())
    data["attrs"] = workaround["attrs"]
    del data["expect"]
    (fixed / "crash.yaml").write_text(yaml.safe_dump(data))
    check = subprocess.run([sys.executable, "-m", "reducer", "check", str(fixed / "crash.yaml")],
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    assert check.returncode == 3 and "compiles without error" in check.stderr
    issue = (bundle / "ISSUE.md").read_text()
    assert "Failing stage: **poly auto-tiling**" in issue and "**manual tiling, whole loops**" in issue
    assert "<details><summary>Crashing-shape map: " in issue and reduction["triage"]["verdict"] == "compiler-bug"


@pytest.mark.timeout(900)  # ~60 MindSpore runs of ~5 s each (issue 19: a warm runner)
def test_wrong_result_case_reduces_and_stays_a_mismatch(tmp_path: Path) -> None:
    bundle = reduce_cli("point_mean_pool_mismatch", tmp_path, "--no-diagnosis")
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert reduction["signature"]["kind"] == "mismatch"  # not a crash, not a compile error
    assert reduction["reduced"]["tokens"] < reduction["original"]["tokens"] / 2
    assert reduction["reduced"]["volume"] < reduction["original"]["volume"]
    reduced = load_case(bundle / "crash.yaml")
    assert reduced.mismatch is not None and reduced.mismatch.tolerance == 0.001
    issue = (bundle / "ISSUE.md").read_text()
    assert issue.startswith("# [AKG][CPU] wrong results: ") and "wrong results" in issue
    related = issue.split("## Related log / screenshot", 1)[1].split("\n## ", 1)[0]
    assert "```text\noutput 0: max " in related  # the check's own output lines
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copy(bundle / "repro.py", fresh / "repro.py")
    repro = subprocess.run([sys.executable, "repro.py"], cwd=fresh, capture_output=True, text=True, timeout=300)
    assert repro.returncode == 1, repro.stdout + repro.stderr
    assert "max abs error" in repro.stdout and "The bug reproduces" in repro.stdout


@pytest.mark.parametrize(
    ("against", "verdict"), [("dim: '0 0 2 1'", "mismatch"), ("enable_vectorization: false", "same")]
)
def test_wrong_result_against_another_attrs_set(tmp_path: Path, against: str, verdict: str) -> None:
    """The minimal mean-pool kernel is right with manual tiling and wrong without: against manual tiling
    it is a mismatch; against another attrs set that is wrong the same way, it is not."""
    (tmp_path / "kernel.py").write_text(
        "def f(x):\n    y = output_tensor((1,), x.dtype)\n    y[0] = 0.0\n"
        "    for n in range(2):\n        y[0] += x[n]\n    return y\n"
    )
    (tmp_path / "crash.yaml").write_text(
        "kernel: kernel.py\ninputs:\n  - {shape: [2], dtype: float32}\n"
        f"expect:\n  kind: mismatch\n  against: {{attrs: {{{against}}}}}\n"
    )
    check = subprocess.run([sys.executable, "-m", "reducer", "check", str(tmp_path / "crash.yaml")],
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    if verdict == "mismatch":
        assert check.returncode == 0 and "mismatch" in check.stdout and "AKG with attrs" in check.stdout
    else:
        assert check.returncode == 3 and "computes the same result as its reference" in check.stderr


SQRT_BELOW_ZERO = """def shifted_root(x):
    y = output_tensor(x.shape, x.dtype)
    for i in range(x.shape[0]):
        y[i] = sqrt(x[i] - 2.0)
    return y
"""


def test_a_check_that_compares_nothing_says_so(tmp_path: Path) -> None:
    """The check's inputs are drawn in [-1, 1): the square root of x - 2 is NaN in the reference everywhere,
    so nothing is compared. That is 'not checked' (exit 3 saying why), never 'computes right'; the same kernel
    with inputs it can compare is right."""
    (tmp_path / "kernel.py").write_text(SQRT_BELOW_ZERO)
    data = {"name": "shifted_root", "kernel": "kernel.py", "inputs": [{"shape": [16], "dtype": "float32"}],
            "expect": {"kind": "mismatch"}}  # fmt: skip
    (tmp_path / "crash.yaml").write_text(yaml.safe_dump(data))
    check = subprocess.run([sys.executable, "-m", "reducer", "check", str(tmp_path / "crash.yaml")],
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    assert check.returncode == 3, check.stdout + check.stderr
    assert "not checked: output 0 (0 of 16) elements compared" in check.stderr and "same result" not in check.stderr
    (tmp_path / "kernel.py").write_text(SQRT_BELOW_ZERO.replace("x[i] - 2.0", "x[i] + 2.0"))
    right = subprocess.run([sys.executable, "-m", "reducer", "check", str(tmp_path / "crash.yaml")],
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    assert right.returncode == 3 and "computes the same result as its reference" in right.stderr, right.stderr
