"""TeLang kernels (func_type tvm_compute) and ir_builder kernels: told apart from Hybrid DSL as MindSpore
does, evaluated with AKG's own tvm (outputs, validity) without a compile, read from crash.yaml and .info,
written back, and edited by the passes that know TeLang into kernels that still evaluate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS, IR_BUILDER_COPY, needs_akg

from reducer.core.case import Case, TensorSpec
from reducer.core.errors import InputError, InvalidKernel
from reducer.inputs.crash_yaml import case_to_yaml, load_case
from reducer.inputs.load import load_input
from reducer.kernels.kinds import IR_BUILDER_KIND, TELANG, kind_of, outputs_of
from reducer.kernels.telang import akg_func_type
from reducer.search.passes.telang import (
    DropKeywords,
    DropReduceAxis,
    DropStage,
    DropStageAxes,
    ShrinkDimsWithConstants,
    TeLangToOperand,
)
from reducer.search.passes.variables import InlineScalars

pytestmark = needs_akg

CONV1D = """def te_conv1d(x, w):
    k = tvm.reduce_axis((0, w.shape[0]), name="k")
    return tvm.compute((x.shape[0], x.shape[1] - w.shape[0] + 1),
                       lambda n, i: tvm.sum(x[n, i + k] * w[k], axis=k))
"""

STAGES = """def chain(x):
    e = tvm.compute((16, 8), lambda i, j: tvm.exp(x[i, j]), name="e")
    r = tvm.reduce_axis((0, 8), name="r")
    q = tvm.reduce_axis((0, 16), name="q")
    s = tvm.compute((1,), lambda i: tvm.sum(e[q, r].astype("float32"), axis=[q, r]), name="s")
    return tvm.compute((16, 8), lambda i, j: tvm.if_then_else(e[i, j] > s[0], e[i, j] / s[0], 0.0), name="o")
"""


def telang(source: str, *shapes: tuple[int, ...], dtype: str = "float32") -> Case:
    function = source.split("(")[0].removeprefix("def ")
    return Case("t", source, function, tuple(TensorSpec(s, dtype) for s in shapes), func_type="tvm_compute")


def test_the_language_is_told_as_mindspore_tells_it() -> None:
    assert akg_func_type(CONV1D) == "tvm_compute"
    assert akg_func_type(IR_BUILDER_COPY) == "ir_builder"  # it has "compute" nowhere, "ir_builder" wins anyway
    assert akg_func_type("def f(a):\n    c = output_tensor(a.shape, a.dtype)\n    return c\n") == "hybrid"


def test_outputs_come_from_akgs_tvm() -> None:
    assert outputs_of(telang(CONV1D, (2, 32), (3,))) == (TensorSpec((2, 30), "float32"),)
    assert outputs_of(telang(STAGES, (16, 8))) == (TensorSpec((16, 8), "float32"),)
    two = "def f(a):\n    return [tvm.compute(a.shape, lambda i: a[i] + a[i]), tvm.compute((1,), lambda i: a[0])]\n"
    assert outputs_of(telang(two, (5,), dtype="float16")) == (TensorSpec((5,), "float16"), TensorSpec((1,), "float16"))


@pytest.mark.parametrize(
    ("source", "shapes", "reason"),
    [
        (CONV1D, [(2, 2), (3,)], "non-positive shape"),
        ("def f(a):\n    return tvm.compute(a.shape, lambda i: undefined[i])\n", [(4,)], "NameError"),
        ("def f(a):\n    return tvm.compute(a.shape, lambda i, j: a[i])\n", [(4,)], "missing 1 required positional"),
        ("def f(a):\n    return a.shape[0]\n", [(4,)], "must return its output tensors"),
        ("def f(a):\n    return a\n", [(4,)], "an output is an input"),
        (
            "def f(a):\n    k = tvm.reduce_axis((0, 4))\n"
            "    return tvm.compute((1,), lambda i: tvm.sum(a[k], axis=k) + 1)\n",
            [(4,)],
            "Reductions are only allowed at the top level",
        ),
        (
            "def f(a):\n    k = tvm.reduce_axis((0, 4))\n    return tvm.compute((4,), lambda i: a[k])\n",
            [(4,)],
            "neither its axis nor reduced over",
        ),
        (
            "def f(a):\n    b = tvm.placeholder((4,), name='b')\n    return tvm.compute((4,), lambda i: b[i])\n",
            [(4,)],
            "not one of its inputs",
        ),
    ],
)
def test_invalid_telang_is_refused_without_a_compile(source: str, shapes: list, reason: str) -> None:
    with pytest.raises(InvalidKernel, match=reason):
        outputs_of(telang(source, *shapes))


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("kernel", "inputs", "said"),
    [
        (CONV1D, "[{shape: [2, 32], dtype: float32}]", "te_conv1d takes 2 inputs, 1 are listed"),
        (
            "def f(a):\n    return tvm.compute(a.shape, lambda i: b[i])\n",
            "[{shape: [4], dtype: float32}]",
            "not a valid TeLang kernel: NameError: name 'b' is not defined",
        ),
        (CONV1D, "[{shape: [2, 2], dtype: float32}, {shape: [3], dtype: float32}]", "non-positive shape [2, 0]"),
        (CONV1D, "[{shape: [2, 32], dtype: float32}, {shape: [3, 2], dtype: float32}]", "Need to provide 2 index"),
        (
            "def f(a, b):\n    return tvm.compute(a.shape, lambda i: a[i] + b[i])\n",
            "[{shape: [8], dtype: float32}, {shape: [4], dtype: float32}]",
            "reads input_1 at i in [0, 7], outside its shape [4]",
        ),
    ],
)
def test_a_telang_function_that_does_not_build_is_one_clear_line(
    tmp_path: Path, kernel: str, inputs: str, said: str
) -> None:
    (tmp_path / "k.py").write_text(kernel)
    (tmp_path / "crash.yaml").write_text(f"kernel: k.py\ninputs: {inputs}\n")
    run = subprocess.run(
        [sys.executable, "-m", "reducer", "check", str(tmp_path / "crash.yaml")],
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert said in run.stderr


def _interpreter(tmp_path: Path, kind: str) -> str:
    """An interpreter a user may name in `python:` that cannot evaluate TeLang, of each kind."""
    if kind == "missing":
        return str(tmp_path / "no-such-python")
    if kind == "crashing":
        script = tmp_path / "segv-python"
        script.write_text("#!/bin/sh\nkill -SEGV $$\n")
        script.chmod(0o755)
        return str(script)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True, timeout=120)
    return str(tmp_path / "bare" / "bin" / "python")


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("missing", "cannot start {python}: No such file or directory"),
        ("crashing", "{python} died of SIGSEGV as it started"),
        ("without_mindspore", "MindSpore is not installed for {python}"),
    ],
)
def test_an_interpreter_that_cannot_evaluate_telang_is_the_environment(tmp_path: Path, kind: str, said: str) -> None:
    """The interpreter TeLang is evaluated with fails to start: one line naming it and what is wrong with it,
    exit 2; never a verdict on the kernel (a valid corpus kernel), never a traceback."""
    python = _interpreter(tmp_path, kind)
    (tmp_path / "k.py").write_text((CORPUS / "telang_softmax_reduction_factor" / "kernel.py").read_text())
    (tmp_path / "crash.yaml").write_text(
        f"kernel: k.py\npython: {python}\ninputs: [{{shape: [8, 4], dtype: float32}}]\n"
    )
    run = subprocess.run([sys.executable, "-m", "reducer", "check", str(tmp_path / "crash.yaml")],
                         capture_output=True, text=True, timeout=200)  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr and "not a valid" not in run.stderr
    assert f"field 'python': {said.format(python=python)}" in run.stderr


def test_crash_yaml_tells_telang_and_writes_it_back(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(CONV1D)
    (tmp_path / "crash.yaml").write_text(
        "kernel: k.py\ninputs: [{shape: [2, 32], dtype: float32}, {shape: [3], dtype: float32}]\n"
    )
    case = load_input(tmp_path / "crash.yaml")
    assert kind_of(case) is TELANG and case.func_type == "tvm_compute"
    written = yaml.safe_load(case_to_yaml(case, "kernel.py", None))
    assert written["func_type"] == "tvm_compute"
    (tmp_path / "kernel.py").write_text(case.source)
    (tmp_path / "again.yaml").write_text(case_to_yaml(case, "kernel.py", None))
    assert load_case(tmp_path / "again.yaml").key() == case.key()


def test_a_stated_func_type_wins_and_a_hybrid_kernel_read_as_telang_says_how(tmp_path: Path) -> None:
    hybrid = "def f(a):\n    compute = output_tensor(a.shape, a.dtype)\n    compute[0] = a[0]\n    return compute\n"
    (tmp_path / "k.py").write_text(hybrid)
    (tmp_path / "crash.yaml").write_text("kernel: k.py\ninputs: [{shape: [1], dtype: float32}]\n")
    with pytest.raises(InputError, match="read as func_type 'tvm_compute', as MindSpore reads"):
        load_input(tmp_path / "crash.yaml")
    (tmp_path / "crash.yaml").write_text("kernel: k.py\nfunc_type: hybrid\ninputs: [{shape: [1], dtype: float32}]\n")
    assert load_input(tmp_path / "crash.yaml").func_type == "hybrid"


def test_ir_builder_kernels_are_read_and_checked(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(IR_BUILDER_COPY)
    (tmp_path / "crash.yaml").write_text("kernel: k.py\ninputs: [{shape: [64], dtype: float32}]\n")
    case = load_input(tmp_path / "crash.yaml")
    assert kind_of(case) is IR_BUILDER_KIND
    assert outputs_of(case) == (TensorSpec((64,), "float32"),)
    assert IR_BUILDER_KIND.input_names(case) == ["ins[0]"]


@pytest.mark.slow
def test_every_telang_corpus_case_loads_as_telang() -> None:
    cases = [load_case(p) for p in sorted(CORPUS.glob("*/crash.yaml")) if "telang" in p.parent.name]
    assert len(cases) >= 4 and all(kind_of(c) is TELANG for c in cases)
    assert all(outputs_of(c) for c in cases)


def _sources(p, case: Case) -> list[str]:
    return [e.after.source for e in p.edits(case)]


def test_stage_pass_inlines_replaces_and_drops_outputs() -> None:
    case = telang(STAGES, (16, 8))
    found = _sources(DropStage(), case)
    assert any("tvm.exp(x[i, j]) > s[0]" in s for s in found)  # e inlined into its readers
    assert any("e = " not in s and "x[q, r]" in s for s in found)  # e replaced by the input of its shape
    assert any(s.rstrip().endswith("return s") for s in found)  # the output becomes a stage it reads
    for source in found:
        outputs_of(telang(source, (16, 8)))


def test_reduce_axis_pass_drops_one_axis_then_the_reduction() -> None:
    found = _sources(DropReduceAxis(), telang(STAGES, (16, 8)))
    assert any("tvm.sum(e[0, r].astype('float32'), axis=r)" in s for s in found)
    single = _sources(DropReduceAxis(), telang(CONV1D, (2, 32), (3,)))
    assert single == [CONV1D.replace("tvm.sum(x[n, i + k] * w[k], axis=k)", "x[n, i + 0] * w[0]")] or any(
        "tvm.sum" not in s.split("k = ")[-1] for s in single
    )
    for source in found:
        outputs_of(telang(source, (16, 8)))


def test_expression_pass_takes_branches_operands_and_drops_casts() -> None:
    found = _sources(TeLangToOperand(), telang(STAGES, (16, 8)))
    assert any("lambda i, j: e[i, j] / s[0]" in s for s in found)  # a branch of if_then_else
    assert any("lambda i, j: x[i, j]" in s for s in found)  # the argument of tvm.exp
    assert any("tvm.sum(e[q, r], axis" in s for s in found)  # the cast dropped
    assert not any("tvm.sum" not in s for s in found)  # a reduction is not an elementwise call


def test_dims_shrink_with_the_literals_that_restate_them() -> None:
    sixteen = ShrinkDimsWithConstants().numbers(telang(STAGES, (16, 8)))[0]
    assert (sixteen.label, sixteen.value) == ("dim 0[0] and literals", 16)
    first = sixteen.at(1)
    assert first.inputs[0].shape == (1, 8) and "(1, 8)" in first.source and "(0, 1)" in first.source
    assert outputs_of(first) == (TensorSpec((1, 8), "float32"),)


PADDED = """def pad_sum(a):
    p = tvm.compute((10,), lambda i: tvm.if_then_else(tvm.all(i >= 1, i < 9), a[i - 1], 0.0), name="p")
    return tvm.compute((8,), lambda i: p[i] + p[i + 2], name="s")
"""


def test_a_read_outside_a_tensor_is_refused_unless_a_condition_guards_it() -> None:
    """Padding reads out of range under its condition (as does a reduction's `where`), which is fine; a read
    past an input is no kernel AKG can be asked to compile."""
    padded = telang(PADDED, (8,))
    assert outputs_of(padded) == (TensorSpec((8,), "float32"),)
    where = (
        "def f(a):\n    k = tvm.reduce_axis((0, 8))\n"
        "    return tvm.compute((1,), lambda i: tvm.sum(a[k], axis=k, where=k < 4))\n"
    )
    assert outputs_of(telang(where, (4,))) == (TensorSpec((1,), "float32"),)
    past = telang("def f(a, b):\n    return tvm.compute(a.shape, lambda i: a[i] + b[i])\n", (8,), (4,))
    with pytest.raises(InvalidKernel, match=r"reads input_1 at i in \[0, 7\], outside its shape \[4\]"):
        outputs_of(past)


def test_a_condition_guards_only_the_reads_it_keeps_in_range() -> None:
    """Padding that kept one side of its condition (a reduction dropped `i < 9`) reads past the input's end:
    refused, as the reduced case of ascend_telang_conv2d_realize_compress once was. Reads in the `else`
    branch are checked under the negated condition; a condition that is not a comparison of an axis with a
    constant guards its reads unchecked."""
    one_sided = telang(PADDED.replace("tvm.all(i >= 1, i < 9)", "i >= 1"), (8,))
    with pytest.raises(InvalidKernel, match=r"stage p reads input_0 at \(i - 1\) in \[0, 8\], outside its shape \[8\]"):
        outputs_of(one_sided)
    other_branch = PADDED.replace("a[i - 1], 0.0)", "0.0, a[i])").replace("tvm.all(i >= 1, i < 9)", "i >= 8")
    assert outputs_of(telang(other_branch, (8,))) == (TensorSpec((8,), "float32"),)
    on_data = telang(PADDED.replace("tvm.all(i >= 1, i < 9)", "a[0] > 0.0"), (8,))
    assert outputs_of(on_data) == (TensorSpec((8,), "float32"),)
    assert TELANG.undecided(on_data) == ("stage p reads input_0 at [(i - 1)] under ((input_0(0) > 0f))",)
    assert TELANG.undecided(telang(PADDED, (8,))) == ()


CAUSAL = """def causal_sum(x):
    k = tvm.reduce_axis((0, 4))
    return tvm.compute((16,), lambda i: tvm.sum(tvm.if_then_else(i - k >= 0, x[i - k], 0.0), axis=k))
"""


def test_a_read_under_a_condition_of_several_axes_is_checked_at_every_point() -> None:
    """A causal window reads `x[i - k]` only where `i - k >= 0`: valid. The same read under a condition that
    does not keep it in range, or a `where=` one past the end, is refused; a data condition beside an axis
    condition that suffices leaves the read decided."""
    assert outputs_of(telang(CAUSAL, (16,))) == (TensorSpec((16,), "float32"),)
    assert TELANG.undecided(telang(CAUSAL, (16,))) == ()
    with pytest.raises(InvalidKernel, match=r"reads input_0 at \(i - rv\) in \[-3, 15\] where its condition holds"):
        outputs_of(telang(CAUSAL.replace("i - k >= 0", "i + k >= 0"), (16,)))
    where = (
        "def f(x):\n    k = tvm.reduce_axis((0, 16))\n"
        "    return tvm.compute((16,), lambda i: tvm.sum(x[i + k], axis=k, where=i + k < 16))\n"
    )
    assert outputs_of(telang(where, (16,))) == (TensorSpec((16,), "float32"),)
    with pytest.raises(InvalidKernel, match=r"in \[0, 16\] where its condition holds, outside its shape \[16\]"):
        outputs_of(telang(where.replace("i + k < 16", "i + k < 17"), (16,)))
    with_data = telang(CAUSAL.replace("i - k >= 0", "tvm.all(x[i] > 0.0, i - k >= 0)"), (16,))
    assert TELANG.undecided(with_data) == ()


TWO_SUMS = """def pair_energy(p, q):
    n, c = p.shape
    a = tvm.reduce_axis((0, n))
    b = tvm.reduce_axis((0, c))
    return tvm.compute((q.shape[0],), lambda i: tvm.sum(p[a, b] * q[i, b], axis=[a, b]))
"""


def test_reduce_axes_made_without_a_name_are_told_apart() -> None:
    """Every reduce axis made without name= is called `rv`: two of them are two axes, each bound by its own
    extent, and a read past a tensor through one is still refused."""
    assert outputs_of(telang(TWO_SUMS, (8, 3), (5, 3))) == (TensorSpec((5,), "float32"),)
    with pytest.raises(InvalidKernel, match=r"reads input_0 at rv in \[0, 3\], outside its shape \[8, 3\]"):
        outputs_of(telang(TWO_SUMS.replace("(0, c)", "(0, 4)"), (8, 3), (5, 3)))
    named = TWO_SUMS.replace("(0, n))", "(0, n), name='a')").replace("(0, c))", "(0, c), name='b')")
    dropped = [e.after for e in DropKeywords().edits(telang(named, (8, 3), (5, 3)))]
    assert dropped and all(outputs_of(c) == (TensorSpec((5,), "float32"),) for c in dropped)


def test_an_elementwise_max_is_simplified_and_a_max_reduction_is_not() -> None:
    relu = (
        "def f(a):\n    k = tvm.reduce_axis((0, 4), name='k')\n"
        "    m = tvm.compute((1,), lambda i: tvm.max(a[k], axis=k), name='m')\n"
        "    return tvm.compute((4,), lambda i: tvm.max(a[i] - m[0], tvm.const(0.0, 'float32')), name='r')\n"
    )
    found = _sources(TeLangToOperand(), telang(relu, (4,)))
    assert any("lambda i: a[i] - m[0]" in s for s in found)
    assert not any("lambda i: a[k]" in s for s in found)
    assert [e.description for e in DropReduceAxis().edits(telang(relu, (4,)))] == [
        "line 3: drop reduce axis k of `tvm.max(a[k], axis=k)`"
    ]


def test_unit_axes_of_a_compute_and_tvm_keywords_go() -> None:
    source = (
        "def f(a):\n    t = tvm.compute((1, 4), lambda i, j: a[j] + i, name='t')\n"
        "    return tvm.compute((4,), lambda j: t[0, j], name='o')\n"
    )
    [axis] = [e.after.source for e in DropStageAxes().edits(telang(source, (4,)))]
    assert "tvm.compute((4,), lambda j: a[j] + 0, name='t')" in axis and "t[j]" in axis
    assert outputs_of(telang(axis, (4,))) == (TensorSpec((4,), "float32"),)
    keywords = [e.after.source for e in DropKeywords().edits(telang(source, (4,)))]
    assert len(keywords) == 2 and all(s.count("name=") == 1 for s in keywords)


def test_every_stage_is_checked_also_when_none_is_named() -> None:
    """Stages made without name= are all called "compute"; the one reading past another is still found."""
    source = (
        "def f(x):\n    e = tvm.compute((1, 1), lambda i, j: x[i, j])\n    r = tvm.reduce_axis((0, 2))\n"
        "    return tvm.compute((2,), lambda i: tvm.sum(e[i, r], axis=r))\n"
    )
    with pytest.raises(InvalidKernel, match=r"outside its shape \[1, 1\]"):
        outputs_of(telang(source, (2, 2)))


def test_shape_unpacking_and_a_returned_stage_are_inlined() -> None:
    source = (
        "def f(x):\n    n, c = x.shape\n    r = tvm.reduce_axis((0, c))\n"
        "    t = tvm.compute((n,), lambda i: tvm.sum(x[i, r], axis=r))\n    return t\n"
    )
    found = [e.after.source for e in InlineScalars().edits(telang(source, (3, 5)))]
    assert any("return tvm.compute((n,)" in s for s in found)  # the stage read once, by the return
    assert not any("tvm.sum(x[i, tvm.reduce_axis" in s for s in found)  # r is read twice: one axis stays one
    assert any("tvm.reduce_axis((0, 5))" in s and "tvm.compute((3,)" in s and "x.shape" not in s for s in found)
    for s in found:
        outputs_of(telang(s, (3, 5)))
