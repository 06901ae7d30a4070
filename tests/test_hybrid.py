"""The cheap validity check: MindSpore's static rules and output shape inference, no compile spent."""

from __future__ import annotations

import pytest

from reducer.case import Case, TensorSpec
from reducer.hybrid import InvalidKernel, infer_outputs
from reducer.info import build_info


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


def test_info_json_has_mindspores_layout() -> None:
    c = case(ADD, (4, 8), (4, 8))
    info = build_info(c, infer_outputs(c))
    assert info["composite"] is True and info["process"] == "cpu" and info["platform"] == "AKG"
    op = info["op_desc"][0]
    assert op["name"] == "Custom"
    attrs = {a["name"]: a["value"] for a in op["attr"]}
    assert attrs["func_type"] == "hybrid" and attrs["func_name"] == "add" and attrs["inputs_num"] == 2
    assert attrs["func_source_str"] == ADD
    assert [d[0]["tensor_name"] for d in info["input_desc"]] == ["input_0", "input_1"]
    assert info["output_desc"][0]["shape"] == [4, 8]
