"""The cheap validity check: MindSpore's static rules and output shape inference, no compile spent."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from conftest import HERE

from reducer.core.case import Case, TensorSpec
from reducer.inputs.info_file import case_from_info
from reducer.kernels.hybrid import InvalidKernel, infer_outputs
from reducer.kernels.info import custom_info
from reducer.kernels.kinds import kind_of, outputs_of


def case(source: str, *shapes: tuple[int, ...], dtype: str = "float32") -> Case:
    name = source.split("(")[0].removeprefix("def ").strip()
    return Case("t", source, name, tuple(TensorSpec(s, dtype) for s in shapes))


ADD = """def add(a, b):
    c = output_tensor((a.shape[0], b.shape[1]), a.dtype)
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            c[i, j] = a[i, j] + b[i, j]
    return c
"""


def test_output_shapes_are_inferred_like_mindspore() -> None:
    assert infer_outputs(case(ADD, (4, 8), (4, 8))) == (TensorSpec((4, 8), "float32"),)


def test_big_shapes_fall_back_to_shape_only_run() -> None:
    assert infer_outputs(case(ADD, (4096, 4096), (4096, 4096)))[0].shape == (4096, 4096)


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (
            "def f(a):\n    c = output_tensor(a.shape, a.dtype)\n    while True:\n        c[0] = 1.0\n    return c\n",
            "while",
        ),
        (
            "def f(a):\n    c = output_tensor(a.shape, a.dtype)\n    c[0] = foo(a[0])\n    return c\n",
            "intrinsic",
        ),
        ("def f(a):\n    c = output_tensor(a.shape, a.dtype)\n    return a\n", "not returned"),
        ("def f(a):\n    c = output_tensor(a.shape, a.dtype)\n    c[5] = a[0]\n    return c\n", "IndexError"),
        ("def f(a):\n    c = output_tensor((a.shape[0] - 4,), a.dtype)\n    return c\n", "non-positive"),
        ("def f(a):\n    c = output_tensor(a.shape, a.dtype)\n    c[0] = expm1(a[0])\n    return c\n", "CPU"),
    ],
)
def test_invalid_kernels_are_rejected_with_a_reason(source: str, reason: str) -> None:
    with pytest.raises(InvalidKernel, match=reason):
        infer_outputs(case(source, (4,)))


DUMPED = HERE / "data" / "custom"  # written by MindSpore itself: see dump_custom_info.py there


def _comparable(info: dict) -> dict:
    """`info` without what names the machine or MindSpore's graph: the kernel name (a hash MindSpore takes of
    its graph) and the graph's number in its process, imply_path (the path of MindSpore's _ms_kernel.py, or of
    the user's script) and uniq_name (a hash of that path)."""
    info = copy.deepcopy(info)
    del info["op"]
    del info["composite_graph"]
    for attr in info["op_desc"][0]["attr"]:
        if attr["name"] in ("imply_path", "uniq_name"):
            attr["value"] = "<machine>"
    return info


@pytest.mark.parametrize("path", sorted(DUMPED.glob("*.info")), ids=lambda p: p.name)
def test_info_json_is_the_one_mindspore_writes(path: Path) -> None:
    """Read back as a Case and written again, a Custom .info MindSpore dumped (Hybrid DSL or TeLang) is the
    same, field by field and in order (the kernel JSON AKG is given is the one MindSpore would give it)."""
    theirs = json.loads(path.read_text())
    case = case_from_info(path, path.read_text())
    ours = custom_info(case, outputs_of(case))
    if not any(a["name"] == "autodiff" for a in theirs["op_desc"][0]["attr"]):
        # MindSpore leaves autodiff out when the user gives out_shape; ours is the form without it
        ours["op_desc"][0]["attr"] = [a for a in ours["op_desc"][0]["attr"] if a["name"] != "autodiff"]
    assert _comparable(ours) == _comparable(theirs)
    assert list(ours) == list(theirs)  # same key order: MindSpore sorts them


@pytest.mark.parametrize("path", sorted(DUMPED.glob("*.info")), ids=lambda p: p.name)
def test_on_ascend_the_info_is_the_cpu_one_with_process_aicore_and_no_target_info(path: Path) -> None:
    """MindSpore's kernel JSON generator writes `target_info` for CPU and GPU devices only: for Ascend the
    .info differs from a CPU one in `process` alone (AKG then takes Ascend 910A)."""
    case = case_from_info(path, path.read_text())
    cpu = custom_info(case, outputs_of(case))
    ascend = kind_of(case).on_target(case, "aicore")
    ours = custom_info(ascend, outputs_of(ascend))
    assert ours["process"] == "aicore" and "target_info" not in ours
    assert {k: v for k, v in cpu.items() if k not in ("process", "target_info", "op")} == {
        k: v for k, v in ours.items() if k not in ("process", "op")
    }
