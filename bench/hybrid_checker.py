"""Does our Hybrid DSL validity check agree with MindSpore's own? Reduces every Hybrid DSL corpus case (or
the ones named; `-j 1`, no persistent cache, no diagnosis), records every candidate the oracle judged, and
runs two static checks on each: ours (`kernels.hybrid.static_check`) and MindSpore's
(`mindspore.ops.operations._ms_kernel.determine_variable_usage`, what `ops.Custom(func_type="hybrid")`
runs on the source before it hands the kernel to AKG). Prints the counts and every disagreement.

Usage: python bench/hybrid_checker.py [case ...]
"""

from __future__ import annotations

import argparse
import ast
import tempfile
from collections import Counter
from pathlib import Path

from corpus_cases import CORPUS

from reducer.core.case import Case
from reducer.core.errors import InvalidKernel
from reducer.inputs.crash_yaml import load_case
from reducer.kernels import kinds
from reducer.kernels.hybrid import infer_outputs, parse_function, static_check
from reducer.session import Settings, reduce_case


def hybrid_cases() -> list[str]:
    folders = sorted(p for p in CORPUS.iterdir() if (p / "crash.yaml").is_file())
    return [p.name for p in folders if kinds.kind_of(load_case(p / "crash.yaml")) is kinds.HYBRID]


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
    """Our static checks alone (a run as Python also refuses kernels that index out of range, which no
    static check can see, and is not compared)."""
    try:
        static_check(parse_function(case.source), case.target)
    except InvalidKernel as exc:
        return f"invalid: {exc}"
    return "valid"


def mindspores(case: Case) -> str:
    from mindspore.ops.operations._ms_kernel import determine_variable_usage

    try:
        determine_variable_usage(ast.parse(case.source), case.function)
    except (ValueError, TypeError, AttributeError) as exc:
        return f"invalid: {type(exc).__name__}: {exc}"
    return "valid"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    totals: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as out:
        for name in args.cases or hybrid_cases():
            verdicts = Counter()
            for case in candidates_of(name, Path(out)).values():
                a, b = ours(case), mindspores(case)
                verdicts[(a == "valid", b == "valid")] += 1
                if (a == "valid") != (b == "valid"):
                    print(f"--- {name}: ours {a}; MindSpore {b}\n{case.source}")
            row = {f"ours {'ok' if x else 'no'} / ms {'ok' if y else 'no'}": n for (x, y), n in verdicts.items()}
            print(f"{name:<26} {sum(verdicts.values()):>5} candidates  {row}", flush=True)
            totals.update(verdicts)
    print("total:", {f"ours {'ok' if x else 'no'} / ms {'ok' if y else 'no'}": n for (x, y), n in totals.items()})


if __name__ == "__main__":
    main()
