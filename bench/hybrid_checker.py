"""Does our Hybrid DSL validity check agree with MindSpore's own? Reduces every Hybrid DSL corpus case (or
the ones named; `-j 1`, no persistent cache, no diagnosis), records every candidate the oracle judged, and
judges each twice:

- ours: `kernels.hybrid.infer_outputs` (our static checks, then a run as Python on zero inputs);
- MindSpore's: what `ops.Custom(func_type="hybrid")` does before it hands the kernel to AKG, its static
  check (`mindspore.ops.operations._ms_kernel.determine_variable_usage`), then, as its auto-infer does, a
  run of the function through MindSpore's own `@kernel` runtime on zero inputs whose result must be
  tensors (cut after RUN_SECONDS: "undecided").

Prints the counts per case and every disagreement.

Usage: python bench/hybrid_checker.py [case ...]
"""

from __future__ import annotations

import argparse
import ast
import signal
import tempfile
from collections import Counter
from pathlib import Path

from corpus_cases import CORPUS, crash_cases

from reducer.core.case import Case
from reducer.core.errors import InvalidKernel
from reducer.inputs.crash_yaml import load_case
from reducer.kernels import kinds
from reducer.kernels.hybrid import infer_outputs
from reducer.session import Settings, reduce_case

RUN_SECONDS = 5.0


def hybrid_cases() -> list[str]:
    """The Hybrid DSL compiler failures of the corpus (a wrong-result case runs each candidate for ~5 s;
    name it to include it)."""
    return [name for name in crash_cases() if kinds.kind_of(load_case(CORPUS / name / "crash.yaml")) is kinds.HYBRID]


def candidates_of(name: str, out: Path) -> dict[str, Case]:
    """Every distinct case the reduction of `name` asked the kernel kind for its outputs."""
    seen: dict[str, Case] = {}

    def recording(case: Case):
        seen.setdefault(case.key(), case)
        return infer_outputs(case)

    kinds.infer_outputs = recording  # HybridKernel.outputs looks the name up here
    try:
        crash = CORPUS / name / "crash.yaml"
        reduce_case(load_case(crash), {"crash.yaml": crash.read_text()}, out, Settings(diagnose=False))
    finally:
        kinds.infer_outputs = infer_outputs
    return seen


def ours(case: Case) -> str:
    try:
        infer_outputs(case)
    except InvalidKernel as exc:
        return f"invalid: {exc}"
    return "valid"


class _Undecided(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Undecided


def mindspores(case: Case) -> str:
    import numpy as np
    from mindspore.ops import kernel
    from mindspore.ops.operations._ms_kernel import determine_variable_usage

    try:
        determine_variable_usage(ast.parse(case.source), case.function)
    except (ValueError, TypeError, AttributeError) as exc:
        return f"invalid (static check): {type(exc).__name__}: {exc}"
    namespace: dict = {}
    exec(compile(case.source, "<kernel>", "exec"), namespace)
    arrays = [np.zeros(t.shape, dtype=t.dtype) for t in case.inputs]
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, RUN_SECONDS)
    try:
        result = kernel(namespace[case.function])(*arrays)
        if not all(hasattr(r, "dtype") for r in (result if isinstance(result, tuple) else [result])):
            return "invalid (run): returns no tensor (ops.Custom's auto-infer reads the result's dtype)"
    except _Undecided:
        return "undecided"
    except Exception as exc:  # whatever the user's kernel raises when MindSpore runs it
        return f"invalid (run): {type(exc).__name__}: {exc}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return "valid"


def _verdict(text: str) -> str:
    return text.split(" ")[0].rstrip(":")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    totals: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as out:
        for name in args.cases or hybrid_cases():
            verdicts: Counter[str] = Counter()
            for case in candidates_of(name, Path(out)).values():
                a, b = ours(case), mindspores(case)
                verdicts[f"ours {_verdict(a)} / MindSpore {_verdict(b)}"] += 1
                if "undecided" not in b and (a == "valid") != (b == "valid"):
                    print(f"--- {name}: ours {a}; MindSpore {b}\n{case.source}")
            print(f"{name:<26} {sum(verdicts.values()):>5} candidates  {dict(verdicts)}", flush=True)
            totals.update(verdicts)
    print("total:", dict(totals))


if __name__ == "__main__":
    main()
