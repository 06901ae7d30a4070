"""`reduce shapes` against the real AKG: a corpus Hybrid DSL kernel over 51 calls on cpu and cuda (the calls
with an odd query count not 1 mod 8 hit the host/device split's SSA check on cpu), and a corpus TeLang
kernel over 50 calls on Ascend (realize_compress fails for some feature-map sizes) and over 12 on CPU with
auto-fuse off (a batch of one computes wrong). Each plan runs once (a module fixture, its own cache and temp
dir); the tests read it and check it against fresh compiles."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CORPUS, HERE, layout_in_browser, needs_akg, needs_ascend, own_state

from reducer.compile.identity import Kind
from reducer.core.errors import CompilesFine
from reducer.inputs.crash_yaml import load_case
from reducer.inputs.shape_list import read_shape_file
from reducer.session import original_signature
from reducer.shapes.grid import cell_case

# The tests that read the shared plan run on one xdist worker (it is made once per worker that asks).
pytestmark = [pytest.mark.akg, needs_akg, pytest.mark.timeout(900), pytest.mark.xdist_group("shapes_nearest")]
NEAREST = CORPUS / "nearest_distance_odd_points" / "crash.yaml"
CONV2D = CORPUS / "ascend_telang_conv2d_realize_compress" / "crash.yaml"
SHAPES = HERE / "data" / "shapes"


def _plan(root: Path, crash: Path, shapes: Path, *options: str) -> tuple[dict[str, Any], str, Path]:
    out = root / "plan"
    command = [sys.executable, "-m", "reducer", "shapes", str(crash), "--shapes", str(shapes), "-o", str(out)]
    here = root / "work"  # where the user runs it: nothing may be written there
    here.mkdir()
    with own_state(root):
        run = subprocess.run([*command, "-j", "2", *options], capture_output=True, text=True, timeout=900, cwd=here)
    assert run.returncode == 0, run.stderr[-3000:]
    assert not list(here.iterdir()), "the plan wrote into the folder it ran in"
    return json.loads((out / "plan.json").read_text()), run.stdout, out


@pytest.fixture(scope="module")
def nearest(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, Path]:
    root = tmp_path_factory.mktemp("shapes-nearest")
    return _plan(root, NEAREST, SHAPES / "nearest_distance.txt", "--targets", "cpu,cuda", "--no-diagnosis")


def _fails_on_cpu(line: str) -> bool:
    n = int(line.split(",")[1])
    return n % 2 == 1 and n % 8 != 1


def test_each_call_gets_the_verdict_of_its_own_compile(nearest) -> None:
    plan, said, _ = nearest
    cpu = [s for s in plan["shapes"] if s["target"] == "cpu"]
    cuda = [s for s in plan["shapes"] if s["target"] == "cuda"]
    assert len(cpu) == len(cuda) == 51
    assert [s["verdict"] for s in cpu] == ["fails" if _fails_on_cpu(s["line"]) else "compiles" for s in cpu]
    assert {s["verdict"] for s in cuda} == {"compiles"}  # AKG's GPU pipeline to nvcc
    assert {s.get("reach") for s in cuda} == {"up to nvcc (not run)"} and not any("reach" in s for s in cpu)
    assert "cuda: 51 of 51 calls compile up to nvcc (not run) (100 %)" in said
    [bug] = {s["bug"] for s in cpu if s["bug"]}
    assert all(s["checked"].startswith("right") for s in cpu if s["verdict"] == "compiles")
    assert all(s["checked"].startswith("not checked") for s in cuda)
    rates = plan["pass_rates"]
    failing = sum(map(_fails_on_cpu, (s["line"] for s in cpu)))
    assert rates["cpu"]["fails"] == failing and rates["cpu"]["bugs"] == {bug: failing}
    assert rates["cpu"]["pass_rate"] == round((51 - failing) / 51, 4) and rates["cuda"]["pass_rate"] == 1.0
    assert set(plan["seconds_per_target"]) == {"cpu", "cuda"}


def test_verdicts_agree_with_reduce_check(nearest) -> None:
    plan, _, _ = nearest
    case = load_case(NEAREST)
    lines = {line.text: line for line in read_shape_file(SHAPES / "nearest_distance.txt", case)}
    failing = next(s for s in plan["shapes"] if s["target"] == "cpu" and s["verdict"] == "fails")
    passing = next(s for s in plan["shapes"] if s["target"] == "cpu" and s["verdict"] == "compiles")
    sig = original_signature(cell_case(case, lines[failing["line"]].shapes, "cpu").with_(expect=None), runs=1)
    assert sig.signature.bug_id("cpu") == failing["bug"]
    with pytest.raises(CompilesFine):
        original_signature(cell_case(case, lines[passing["line"]].shapes, "cpu").with_(expect=None), runs=1)


def test_buckets_cover_every_failing_call_and_compile(nearest) -> None:
    plan, stdout, _ = nearest
    failing = {s["line"] for s in plan["shapes"] if s["verdict"] == "fails"}
    covered = [line for b in plan["buckets"] for line in b["covers"]]
    assert sorted(covered) == sorted(failing) and not plan["not_covered"]
    assert all(not b["mask_needed"] for b in plan["buckets"])
    dims = {d["dims"]: d for d in plan["dims"]}
    assert dims["query[1]"]["padded_freely"] and not dims["ref[1]"]["padded_freely"]
    assert "needs a mask" in dims["ref[1]"]["padding"]
    case = load_case(NEAREST).with_(expect=None)
    for bucket in plan["buckets"]:
        shapes = tuple(tuple(s) for s in bucket["shapes"])
        for target in ("cpu", "cuda"):
            with pytest.raises(CompilesFine):
                original_signature(cell_case(case, shapes, target), runs=1)
        for call in bucket["covers"]:  # padded up along the query count or the batch, never the reference points
            [(b, n, _), (_, m, _)] = [json.loads(s) for s in call.replace("] [", "]|[").split("|")]
            assert bucket["shapes"][1][1] == m and bucket["shapes"][0][1] >= n and bucket["shapes"][0][0] >= b
    assert len(plan["buckets"]) == 3  # the 64-point calls share one; each other point count needs its own
    assert "bucket [" in stdout and "padding cost" in stdout


def test_the_dispatch_module_runs_every_call_on_mindspore_and_agrees(nearest) -> None:
    plan, _, out = nearest
    check = plan["dispatch"]["check"]
    assert check["ran"] and len(check["calls"]) == 51 and check["same"] == 51
    assert not check["differ"] and not check["not_run"]
    compared = {c["line"]: c["compared_with"] for c in check["calls"]}
    assert set(compared.values()) == {"the kernel run as Python"}  # every call, never AKG's build with itself
    module = (out / "dispatch.py").read_text()
    assert "from mindspore import ops" in module and "reducer" not in module and "akg_reduce" not in module
    namespace: dict[str, Any] = {}
    exec(compile(module, "dispatch.py", "exec"), namespace)  # the user pastes it: it must import as it is
    failing = {tuple(tuple(s) for s in json.loads("[" + s["line"].replace("] [", "],[") + "]"))
               for s in plan["shapes"] if s["verdict"] == "fails"}  # fmt: skip
    assert set(namespace["BUCKETS"]) == failing and not namespace["NO_BUCKET"]
    assert {tuple(map(tuple, b["shapes"])) for b in plan["buckets"]} <= set(namespace["STATIC_SHAPES"])


def test_one_bundle_per_bug_with_the_plans_identity(nearest) -> None:
    plan, stdout, out = nearest
    [bug] = plan["bugs"]
    assert (
        bug["calls"] == plan["pass_rates"]["cpu"]["fails"] and bug["smallest"] == "[1, 45, 3] [1, 64, 3]"
    )  # fewest input elements
    crash = load_case(out / bug["case"])
    assert crash.expect is not None and crash.expect.kind == Kind.ERROR
    reduction = json.loads((out / bug["bundle"] / "reduction.json").read_text())
    assert reduction["bug"] == bug["bug"] == bug["reduced_bug"]
    assert (out / bug["bundle"] / "ISSUE.md").is_file()
    markdown = (out / "plan.md").read_text()
    assert f"({bug['bundle']}/ISSUE.md)" in markdown and "| cpu | 51 |" in markdown
    assert f"bug {bug['bug']}: {bug['calls']} calls" in stdout


@pytest.mark.xdist_group("shapes_telang")
def test_a_telang_kernel_over_fifty_calls_on_ascend_meets_two_bugs(tmp_path: Path) -> None:
    needs_ascend()
    options = ("--targets", "aicore", "--no-reduce", "--bucket-budget", "6")
    plan, _, out = _plan(tmp_path, CONV2D, SHAPES / "conv2d.txt", *options)
    verdicts = {s["line"]: s["verdict"] for s in plan["shapes"]}
    assert len(verdicts) == 50 and set(verdicts.values()) == {"compiles", "fails"}
    bugs = {b["bug"]: b for b in plan["bugs"]}
    assert len(bugs) == 2 and all(b.endswith("@aicore") for b in bugs)  # a list is how a second bug is met
    assert any("realize_compress" in b["signature"] for b in bugs.values())
    assert sum(b["calls"] for b in bugs.values()) == plan["pass_rates"]["aicore"]["fails"]
    for bug in bugs.values():  # each bug's case fails on its own as `reduce check` tells it
        case = load_case(out / bug["case"])
        assert original_signature(case.with_(expect=None), runs=1).signature.bug_id("aicore") == bug["bug"]
    assert all(s["checked"].startswith("not checked") for s in plan["shapes"] if s["verdict"] == "compiles")
    dims = {d["dims"]: d for d in plan["dims"]}
    assert "needs a mask" in dims["x[2]"]["padding"] and dims["x[0]"]["padded_freely"]  # read through the window
    assert (
        plan["dispatch"]["check"]["ran"] is False and "cpu is not among the targets" in plan["dispatch"]["check"]["why"]
    )
    assert len(plan["padded_calls_compiled"]) <= 6
    for entry in plan["not_covered"]:
        assert "padding budget (6 shapes)" in entry["why"] or "no shape padded up to 2 times" in entry["why"]


def test_plan_page_fits_the_screen_in_a_real_browser(nearest, tmp_path: Path) -> None:
    _, _, out = nearest
    layout = layout_in_browser(out / "plan.html", tmp_path)
    assert layout.scroll_width <= layout.inner_width == 1280  # no sideways scrolling
    assert layout.figures == 1 and layout.rows > 51  # the shape map, and a row per call


def test_a_dask_cluster_gives_the_verdicts_of_the_local_run(nearest, tmp_path: Path) -> None:
    plan, _, _ = nearest
    subset = tmp_path / "subset.txt"
    local = {s["line"]: s for s in plan["shapes"] if s["target"] == "cpu"}
    subset.write_text("".join(f"{line}\n" for line in list(local)[:20]))
    options = ("--targets", "cpu", "--no-reduce", "--no-check", "--executor", "dask")
    spread, _, _ = _plan(tmp_path, NEAREST, subset, *options)
    assert spread["compiles"]["on_the_cluster"] >= 20
    assert [(s["line"], s["verdict"], s["bug"]) for s in spread["shapes"]] == [
        (line, local[line]["verdict"], local[line]["bug"]) for line in list(local)[:20]
    ]


RUN = """import numpy as np
import mindspore as ms
from mindspore import Tensor, ops
from kernel import nearest_distance
ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
op = ops.Custom(nearest_distance, func_type="hybrid")
for n in (24, 28, 33):
    op(Tensor(np.ones((2, n, 3), np.float32)), Tensor(np.ones((2, 64, 3), np.float32)))
"""


@pytest.mark.xdist_group("shapes_run")
def test_the_calls_of_a_real_mindspore_run(tmp_path: Path) -> None:
    """A model's script built the Custom op for three shapes: the .info files MindSpore left are the list."""
    (tmp_path / "kernel.py").write_text((NEAREST.parent / "kernel.py").read_text())
    (tmp_path / "run.py").write_text(RUN)
    (tmp_path / "state").mkdir()
    (tmp_path / "state2").mkdir()
    with own_state(tmp_path / "state"):
        run = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    out = tmp_path / "plan"
    command = [sys.executable, "-m", "reducer", "shapes", str(NEAREST), "--from-run", str(tmp_path), "-o", str(out)]
    with own_state(tmp_path / "state2"):
        shapes = subprocess.run(
            [*command, "--targets", "cpu", "--no-reduce", "--no-check"], capture_output=True, text=True, timeout=300
        )
    assert shapes.returncode == 0, shapes.stderr[-2000:]
    plan = json.loads((out / "plan.json").read_text())
    assert sorted(s["line"] for s in plan["shapes"]) == ["[2, 24, 3] [2, 64, 3]", "[2, 28, 3] [2, 64, 3]",
                                                          "[2, 33, 3] [2, 64, 3]"]  # fmt: skip
    assert all(s["where"].endswith(".info") and s["verdict"] == "compiles" for s in plan["shapes"])


@pytest.mark.xdist_group("shapes_graph")
def test_a_fused_graph_that_computes_wrong_for_some_shapes(tmp_path: Path) -> None:
    """corpus/castup_transpose_fp16_mismatch over its rows: a call that compiles but computes wrong is its own
    verdict, with the wrong result's bug; a fused graph has no padding check and no dispatch module check."""
    crash = CORPUS / "castup_transpose_fp16_mismatch" / "crash.yaml"
    out = tmp_path / "plan"
    command = [sys.executable, "-m", "reducer", "shapes", str(crash), "--dims", "input_0[0]=15..18", "-o", str(out)]
    with own_state(tmp_path):
        run = subprocess.run([*command, "--targets", "cpu", "--no-reduce"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    plan = json.loads((out / "plan.json").read_text())
    verdicts = {s["line"]: s["verdict"] for s in plan["shapes"]}
    assert verdicts == {"[15, 16]": "compiles", "[16, 16]": "wrong", "[17, 16]": "wrong", "[18, 16]": "wrong"}
    [bug] = plan["bugs"]
    assert bug["signature"].startswith("mismatch:") and plan["pass_rates"]["cpu"]["wrong"] == 3
    assert all("no dim is known to pad freely" in c["why"] for c in plan["not_covered"])
    assert "dispatch.py is for Custom ops" in plan["dispatch"]["check"]["why"]


@pytest.mark.xdist_group("shapes_telang_cpu")
def test_a_telang_kernel_that_computes_wrong_at_a_batch_of_one_runs_as_a_batch_of_two(tmp_path: Path) -> None:
    """corpus/telang_conv2d_no_autofuse_wrong over 12 calls on cpu: each call that compiles is checked
    against its compute definition evaluated in numpy, the batch-of-one calls compute wrong as one bug, each
    runs as the list's batch-of-two call of its maps (the batch pads freely; channels and maps are read through
    the window), dispatch.py
    gives the same results as the kernel's reference for all 12 under MindSpore, and the bug is reduced."""
    crash = CORPUS / "telang_conv2d_no_autofuse_wrong" / "crash.yaml"
    plan, stdout, out = _plan(tmp_path, crash, SHAPES / "conv2d_cpu.txt", "--targets", "cpu", "--no-diagnosis")
    verdicts = {s["line"]: s for s in plan["shapes"]}
    assert len(verdicts) == 12
    for line, cell in verdicts.items():
        if line.startswith("[1,"):
            assert cell["verdict"] == "wrong" and "against the numpy reference" in cell["said"], cell
        else:
            assert (
                cell["verdict"] == "compiles"
                and "right: every output within tolerance of the numpy reference" in cell["checked"]
            ), cell
    [bug] = plan["bugs"]
    assert bug["calls"] == 5 and bug["signature"].startswith("mismatch: wrong result: wrong values")
    case = load_case(out / bug["case"])  # the bug's own case computes wrong as `reduce check` tells it
    assert original_signature(case.with_(expect=None), runs=1).signature.bug_id("cpu") == bug["bug"]
    dims = {d["dims"]: d for d in plan["dims"]}
    assert dims["x[0]"]["padded_freely"] and all("needs a mask" in dims[d]["padding"] for d in ("x[2]", "x[3]"))
    for bucket in plan["buckets"]:
        [call] = bucket["covers"]
        assert bucket["line"] == call.replace("[1,", "[2,", 1) and not bucket["mask_needed"]
    check = plan["dispatch"]["check"]
    assert check["ran"] and check["same"] == 12 and not check["differ"] and not check["not_run"]
    compared = {c["line"]: c["compared_with"] for c in check["calls"]}
    assert set(compared.values()) == {"its numpy reference"}  # every call, never AKG's build with itself
    reduction = json.loads((out / bug["bundle"] / "reduction.json").read_text())
    # A wrong result's id names its kernel's ops: the bundle's is the reduced kernel's, and the plan says it.
    assert reduction["bug"] == bug["reduced_bug"] != bug["bug"] and reduction["signature"]["kind"] == "mismatch"
    assert f"(its reduced kernel's id: {bug['reduced_bug']})" in (out / "plan.md").read_text()
    assert f"bug {bug['bug']}: 5 calls" in stdout and "12 of 12 calls give the same results" in stdout


SCALED_CONV2D = """def conv2d(x, w, scale):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    pad = tvm.compute((n, c, h + 2, wd + 2),
                      lambda b, ci, i, j: tvm.if_then_else(
                          tvm.all(i >= 1, i < h + 1, j >= 1, j < wd + 1), x[b, ci, i - 1, j - 1],
                          tvm.const(0, x.dtype)), name="pad")
    rc = tvm.reduce_axis((0, c), name="rc")
    ry = tvm.reduce_axis((0, kh), name="ry")
    rx = tvm.reduce_axis((0, kw), name="rx")
    return tvm.compute((n, o, h, wd),
                       lambda b, f, i, j: tvm.sum(pad[b, rc, i + ry, j + rx] * w[f, rc, ry, rx] * scale,
                                                  axis=[rc, ry, rx]), name="conv")
"""


@pytest.mark.xdist_group("shapes_telang_cpu")
def test_the_dispatch_check_runs_a_telang_op_with_its_own_attrs(tmp_path: Path) -> None:
    """The corpus conv2d with an op attr `scale` (reg_info and add_prim_attr, as its user registers it): the
    dispatch check builds the Custom op with it, and the bucketed call agrees with the numpy reference, which
    is handed the same attr."""
    (tmp_path / "kernel.py").write_text(SCALED_CONV2D)
    inputs = [{"shape": [1, 4, 6, 6], "dtype": "float32"}, {"shape": [4, 4, 3, 3], "dtype": "float32"}]
    fields = {"name": "conv2d_scaled", "kernel": "kernel.py", "function": "conv2d", "inputs": inputs,
              "op_attrs": {"scale": 0.5}, "attrs": {"enable_auto_fuse": False}}  # fmt: skip
    (tmp_path / "crash.yaml").write_text(yaml.safe_dump(fields))
    (tmp_path / "calls.txt").write_text("[1, 4, 6, 6] [4, 4, 3, 3]\n[2, 4, 6, 6] [4, 4, 3, 3]\n")
    plan, _, _ = _plan(tmp_path, tmp_path / "crash.yaml", tmp_path / "calls.txt", "--targets", "cpu", "--no-reduce")
    assert [s["verdict"] for s in plan["shapes"]] == ["wrong", "compiles"]
    check = plan["dispatch"]["check"]
    assert check["ran"] and check["same"] == 2 and not check["differ"] and not check["not_run"]
    assert check["calls"][0]["compared_with"] == "its numpy reference"
