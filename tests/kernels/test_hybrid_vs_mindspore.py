"""Our Hybrid DSL validity check (kernels/hybrid_check.py and the run as Python) says what MindSpore's own
says: one kernel per rule of MindSpore's static checker (VariableUsage in _ms_kernel.py) and every corpus
kernel, judged by MindSpore 2.10 itself in a child process the way ops.Custom(func_type="hybrid") judges
them: its static check, then its auto-infer (the kernel run on zero inputs must return tensors)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import CORPUS, needs_akg

from reducer.core.case import Case, TensorSpec
from reducer.core.errors import InvalidKernel
from reducer.inputs.crash_yaml import load_case
from reducer.kernels.hybrid import infer_outputs, parse_function
from reducer.kernels.hybrid_check import static_check
from reducer.kernels.kinds import HYBRID, kind_of

pytestmark = needs_akg

MINDSPORE_VERDICT = textwrap.dedent(
    """
    import ast, json, sys
    import numpy as np
    from mindspore.ops import kernel
    from mindspore.ops.operations._ms_kernel import determine_variable_usage

    verdicts = []
    for source, function, shapes in json.load(sys.stdin):
        try:
            determine_variable_usage(ast.parse(source), function)
            namespace = {}
            exec(compile(source, "<kernel>", "exec"), namespace)
            result = kernel(namespace[function])(*[np.zeros(s, dtype="float32") for s in shapes])
            results = result if isinstance(result, tuple) else (result,)
            [r.dtype for r in results]  # what MindSpore's auto-infer reads
            verdicts.append("valid")
        except Exception as exc:
            verdicts.append(f"{type(exc).__name__}: {exc}")
    print(json.dumps(verdicts))
    """
)

OK = "    b = output_tensor(a.shape, a.dtype)\n"
KERNELS = {
    "valid": OK + "    for i in range(a.shape[0]):\n        b[i] = a[i] * 2.0\n    return b\n",
    "undeclared variable": OK + "    for i in range(a.shape[0]):\n        t[i] = a[i]\n    return b\n",
    "variable used outside its loop": OK
    + "    for i in range(a.shape[0]):\n        t = a[i]\n    b[0] = t\n    return b\n",
    "loop variable assigned": OK
    + "    for i in range(a.shape[0]):\n        i = 0\n        b[i] = a[i]\n    return b\n",
    "not an intrinsic": OK + "    b[0] = foo(a[0])\n    return b\n",
    "attribute call": OK + "    b[0] = np.sqrt(a[0])\n    return b\n",
    "unary with two args": OK + "    b[0] = sqrt(a[0], a[1])\n    return b\n",
    "binary with one arg": OK + "    b[0] = power(a[0])\n    return b\n",
    "cpu unsupported": OK + "    b[0] = expm1(a[0])\n    return b\n",
    "while": OK + "    while a[0] > 0.0:\n        b[0] = a[0]\n    return b\n",
    "break": OK + "    for i in range(a.shape[0]):\n        break\n    return b\n",
    "with attr": OK + "    with attr('pragma', 1):\n        b[0] = a[0]\n    return b\n",
    "with attr non-constant": OK + "    with attr('pragma', a):\n        b[0] = a[0]\n    return b\n",
    "with other scope": OK + "    with open('x'):\n        b[0] = a[0]\n    return b\n",
    "block_realize": OK + "    with block_realize(b):\n        b[0] = a[0]\n    return b\n",
    "tensor redefined": OK + "    b = output_tensor(a.shape, a.dtype)\n    return b\n",
    "multiple targets": OK + "    x = y = 1.0\n    b[0] = x\n    return b\n",
    "attribute of undeclared": OK + "    b[0] = c.shape[0]\n    return b\n",
    "attribute not shape": OK + "    b[0] = a.size\n    return b\n",
    "return not a name": OK + "    return b + 1.0\n",
    "return an allocate": OK + "    c = allocate(a.shape, a.dtype)\n    return c\n",
    "output not returned": OK + "    c = output_tensor(a.shape, a.dtype)\n    return b\n",
    "input returned": OK + "    return b, a\n",
    "no return": OK + "    b[0] = a[0]\n",
    "ceil_div": OK + "    b[0] = ceil_div(4, 3)\n    return b\n",
}


def ours(source: str, function: str, inputs: tuple[TensorSpec, ...]) -> str:
    """Our validity verdict; well-formedness is a requirement of ours on top of MindSpore's, left out here."""
    try:
        infer_outputs(Case("k", source, function, inputs, allow_ill_formed=True))
    except InvalidKernel as exc:
        return str(exc)
    return "valid"


def mindspore(kernels: list[tuple[str, str, list[list[int]]]]) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-c", MINDSPORE_VERDICT],
        input=json.dumps(kernels),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_one_kernel_per_rule_gets_mindspores_verdict() -> None:
    sources = {name: "def k(a):\n" + body for name, body in KERNELS.items()}
    theirs = mindspore([(source, "k", [[4]]) for source in sources.values()])
    disagree = {
        name: (mine, their)
        for (name, source), their in zip(sources.items(), theirs, strict=True)
        if ((mine := ours(source, "k", (TensorSpec((4,), "float32"),))) == "valid") != (their == "valid")
    }
    assert disagree == {}
    assert ours(sources["variable used outside its loop"], "k", (TensorSpec((4,), "float32"),)) != "valid"


@pytest.mark.slow
def test_every_corpus_kernel_gets_mindspores_verdict() -> None:
    cases = [load_case(p) for p in sorted(CORPUS.glob("*/crash.yaml"))]
    cases = [c for c in cases if kind_of(c) is HYBRID and all(t.dtype == "float32" for t in c.inputs)]
    assert len(cases) >= 4
    theirs = mindspore([(c.source, c.function, [list(t.shape) for t in c.inputs]) for c in cases])
    assert [ours(c.source, c.function, c.inputs) for c in cases] == theirs == ["valid"] * len(cases)


@pytest.mark.parametrize(
    "name", ["variable used outside its loop", "loop variable assigned", "attribute of undeclared"]
)
def test_rules_python_itself_would_not_catch_are_refused(name: str) -> None:
    """A run as Python accepts these; only the static rules refuse them, as MindSpore does."""
    assert ours("def k(a):\n" + KERNELS[name], "k", (TensorSpec((4,), "float32"),)) != "valid"


def test_the_one_known_difference_is_a_tensor_with_no_elements() -> None:
    """Documented in kernels/hybrid_check.py: MindSpore accepts a zero-size output, we refuse it."""
    source = "def k(a):\n    b = output_tensor((a.shape[0] - 4,), a.dtype)\n    return b\n"
    assert mindspore([(source, "k", [[4]])]) == ["valid"]
    assert "non-positive tensor shape" in ours(source, "k", (TensorSpec((4,), "float32"),))


MINDSPORE_CALL_VERDICTS = textwrap.dedent(
    """
    import ast, inspect, json
    from mindspore.ops.operations._ms_kernel import VariableUsage, determine_variable_usage

    def accepts(name, count):
        if name in VariableUsage.intrin_buffer:  # checked by its Python signature (see hybrid_check.BUFFERS)
            args = ["a.shape", "a.dtype", "'local'", "0"][:count]
            try:
                inspect.signature(VariableUsage.intrin_buffer[name]).bind(*args)
            except TypeError:
                return False
            return True
        call = f"{name}({', '.join(['a[0]'] * count)})"
        source = f"def k(a):\\n    b = output_tensor(a.shape, a.dtype)\\n    b[0] = {call}\\n    return b\\n"
        try:
            determine_variable_usage(ast.parse(source), "k")
        except (TypeError, ValueError):
            return False
        return True

    names = sorted(VariableUsage.intrin_runtime) + ["max", "min", "len"]
    print(json.dumps({f"{n}/{c}": accepts(n, c) for n in names for c in range(5)}))
    """
)


def test_every_intrinsic_takes_the_arguments_mindspore_defines() -> None:
    """Every intrinsic MindSpore 2.10 knows (read from MindSpore, so a new one shows up here), called with 0 to
    4 arguments: we accept the call exactly when MindSpore does; `allocate`/`output_tensor` by the signature
    MindSpore gives them (shape, dtype, scope), which plain functions passed to ops.Custom are held to."""
    run = subprocess.run([sys.executable, "-c", MINDSPORE_CALL_VERDICTS], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    theirs: dict[str, bool] = json.loads(run.stdout.strip().splitlines()[-1])
    mine = {}
    for key in theirs:
        name, count = key.split("/")
        if name in ("allocate", "output_tensor"):
            args = ["a.shape", "a.dtype", "'local'", "0"][: int(count)]
            returned = "b" if name == "output_tensor" else "a"
            body = f"    b = {name}({', '.join(args)})\n    b[0] = a[0]\n    return {returned}\n"
        else:
            call = f"{name}({', '.join(['a[0]'] * int(count))})"
            body = f"{OK}    b[0] = {call}\n    return b\n"
        mine[key] = _statically_valid("def k(a):\n" + body)
    assert {k for k in theirs if mine[k] != theirs[k]} == set()
    assert theirs["allocate/3"] and not theirs["allocate/4"] and not theirs["sqrt/2"]


def _statically_valid(source: str) -> bool:
    try:
        static_check(parse_function(source), "cpu")  # MindSpore checks for its device_target, CPU here
    except InvalidKernel:
        return False
    return True
