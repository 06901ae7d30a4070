"""Reading failing AKG compiles out of MindSpore logs: the two real logs in tests/data/logs (a Custom hybrid
op and a graph-kernel fusion, both written by MindSpore 2.10 on CPU), and the ways a pasted log differs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st

from reducer.inputs.failure_log import read_log

LOGS = Path(__file__).resolve().parent.parent / "data" / "logs"
CUSTOM = (LOGS / "voxel_conv3d_custom.log").read_text()
FUSION = (CORPUS / "pointnet_head_fusion_dst_type" / "run.log").read_text()
CUSTOM_OP = "Fused_Custom_11918899741854471392"
FUSION_OP = "Fused_MatMul_split_18201626413234529928"


def test_a_real_log_gives_its_kernel_once_with_attrs_and_final_error() -> None:
    found = read_log(CUSTOM)
    assert [k.name for k in found.kernels] == [CUSTOM_OP]  # printed twice by MindSpore, read once
    kernel = found.kernels[0]
    assert kernel.attrs == {"compile_cache": "./", "log_level": "ERROR"}
    assert kernel.info["process"] == "cpu" and kernel.info["op_desc"][0]["name"] == "Custom"
    assert found.final_error == "RuntimeError: Response is empty."
    assert any("gemm_m.size() <= FormatM.size()" in e for e in found.akg_errors)
    assert not found.cut


def test_several_kernels_in_one_log_in_order() -> None:
    found = read_log(CUSTOM + FUSION)
    assert [k.name for k in found.kernels] == [CUSTOM_OP, FUSION_OP]
    assert found.kernels[1].info["op_desc"][0]["name"] == "MatMul"


def test_older_wording_crlf_and_colours() -> None:
    old = CUSTOM.replace("Compile error, args:", "Compile error, json str:")
    coloured = "\r\n".join(f"\x1b[1;31m{line}\x1b[0m" if "ERROR" in line else line for line in old.splitlines())
    found = read_log(coloured)
    assert [k.name for k in found.kernels] == [CUSTOM_OP]
    assert found.kernels[0].info == read_log(CUSTOM).kernels[0].info
    assert found.kernels[0].attrs["log_level"] == "ERROR"


def test_logger_prefix_before_the_message() -> None:
    kernel = read_log(FUSION).kernels[0]
    line = (
        "[ERROR] KERNEL(1234,7f00,python):2026-12-03-10:00:00.000.000 [akg_kernel_build.cc:321] Build] "
        f"Compile error, json str: {json.dumps(kernel.info)}! build attrs: {json.dumps(kernel.attrs)}"
    )
    found = read_log(f"some output\n{line}\nRuntimeError: Response is empty.\n")
    assert [k.info for k in found.kernels] == [kernel.info]


@settings(max_examples=25, deadline=None)
@given(width=st.integers(min_value=30, max_value=400))
def test_hard_wrapped_lines_at_any_width(width: int) -> None:
    wrapped = "\n".join(
        "\n".join(textwrap.wrap(line, width, drop_whitespace=False, replace_whitespace=False)) or line
        for line in FUSION.splitlines()
    )
    found = read_log(wrapped)
    assert [k.info for k in found.kernels] == [k.info for k in read_log(FUSION).kernels]


def test_a_json_cut_by_a_line_limit_is_named() -> None:
    cut = "\n".join(line[:1500] for line in CUSTOM.splitlines())
    found = read_log(cut)
    assert not found.kernels
    assert [c.name for c in found.cut] == [CUSTOM_OP]
    assert "cut off" in found.cut[0].reason


def test_a_kernel_cut_once_but_whole_elsewhere_is_not_cut() -> None:
    lines = CUSTOM.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("ValueError: Compile error, args: {"))
    lines[first] = lines[first][:500]
    found = read_log("\n".join(lines))
    assert [k.name for k in found.kernels] == [CUSTOM_OP] and not found.cut


def test_a_log_without_an_akg_failure() -> None:
    found = read_log("epoch 1 loss 0.31\nTraceback (most recent call last):\nKeyError: 'points'\n")
    assert not found.kernels and not found.cut and found.final_error == "KeyError: 'points'"


PIECES = ["Compile error, args: ", "Compile error, json str: ", "! build attrs: ", "{", "}", '"op": "K"', "\n", "\r"]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=20)), max_size=30))
def test_any_text_is_read_without_an_exception(parts: list[str]) -> None:
    found = read_log("".join(parts))
    assert all(k.info.get("op_desc") is not None for k in found.kernels)
