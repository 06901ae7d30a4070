"""Every crash.yaml the tool writes (a bundle's, a corpus case found by the shape map) loads back to the same
kind of kernel and the same case: the same content digest, which is the cache key and the night's case id."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS, IR_BUILDER_COPY

from reducer.core.case import Case, Expectation, Mismatch, TensorSpec
from reducer.core.errors import InputError
from reducer.inputs.crash_yaml import case_to_yaml, load_case
from reducer.kernels.kinds import GRAPH, HYBRID, IR_BUILDER_KIND, TELANG, KernelKind, kind_of

# A Hybrid DSL kernel whose source says "compute": MindSpore reads a Custom op of func_type "akg" with such a
# source as TeLang, so a crash.yaml without its func_type would reload as another language.
HYBRID_SAYING_COMPUTE = """def scale(a):
    computed = output_tensor(a.shape, a.dtype)
    for i in range(a.shape[0]):
        computed[i] = a[i] * 2.0
    return computed
"""

TELANG_IDENTITY = "def same(x):\n    return x\n"


def written_and_loaded(case: Case, folder: Path) -> Case:
    """`case` written as a bundle writes it (crash.yaml and the kind's kernel file), then loaded."""
    kind = kind_of(case)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / kind.kernel_file).write_text(kind.kernel_text(case, ()))
    (folder / "crash.yaml").write_text(case_to_yaml(case, kind.kernel_file, case.expect))
    return load_case(folder / "crash.yaml")


@pytest.mark.parametrize("crash", sorted(CORPUS.glob("*/crash.yaml")), ids=lambda p: p.parent.name)
def test_every_corpus_case_reloads_as_the_same_case(crash: Path, tmp_path: Path) -> None:
    case = load_case(crash)
    again = written_and_loaded(case, tmp_path / "bundle")
    assert kind_of(again) is kind_of(case)
    assert again.key() == case.key()
    assert (again.expect, again.mismatch, again.target) == (case.expect, case.mismatch, case.target)


@pytest.mark.parametrize(
    ("kind", "case"),
    [
        (HYBRID, Case("h", HYBRID_SAYING_COMPUTE, "scale", (TensorSpec((8,), "float32"),))),
        (IR_BUILDER_KIND, Case("i", IR_BUILDER_COPY, "copy_ir", (TensorSpec((8,), "int32"),), func_type="ir_builder")),
        (
            TELANG,
            Case("t", "def neg(x):\n    return x\n", "neg", (TensorSpec((4,), "float32"),), func_type="tvm_compute"),
        ),
    ],
    ids=lambda v: getattr(v, "name", ""),
)
def test_each_kind_reloads_as_itself_whatever_its_source_says(kind: KernelKind, case: Case, tmp_path: Path) -> None:
    """Written with its func_type, a kernel reloads as the language it was, not the one its words suggest."""
    case = case.with_(expect=Expectation("error", "Check failed: x"), attrs={"enable_auto_inline": False})
    again = written_and_loaded(case, tmp_path)
    assert kind_of(again) is kind and again.key() == case.key()
    assert f"func_type: {case.func_type}" in (tmp_path / "crash.yaml").read_text()


def test_a_wrong_result_case_reloads_with_its_check(tmp_path: Path) -> None:
    graph = next(load_case(p) for p in sorted(CORPUS.glob("*/crash.yaml")) if kind_of(load_case(p)) is GRAPH)
    case = graph.with_(expect=Expectation("mismatch"), mismatch=Mismatch(0.01, '{"enable_auto_fuse": false}'))
    again = written_and_loaded(case, tmp_path)
    assert again.mismatch == case.mismatch and again.key() == case.key()


def test_a_target_the_table_does_not_know_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    (tmp_path / "kernel.py").write_text(HYBRID_SAYING_COMPUTE)
    (tmp_path / "crash.yaml").write_text("kernel: kernel.py\ninputs: [{shape: [8], dtype: float32}]\ntarget: npu\n")
    with pytest.raises(InputError) as caught:
        load_case(tmp_path / "crash.yaml")
    assert str(caught.value) == (
        f"{tmp_path / 'crash.yaml'}: field 'target': unknown target 'npu'; expected one of cpu, cuda, aicore"
    )
