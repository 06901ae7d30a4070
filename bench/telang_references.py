"""How the TeLang reference computed in numpy from the compute definition (reducer/in_mindspore/telang_numpy.py)
agrees with the one it replaced, plain TVM's build of the same function (telang_plain.py: AKG's `tvm` without
AKG's passes), on every TeLang and ir_builder kernel of the repository (corpus/, bench/held_out/, tests/data/ but
the truth set, whose kernels kill TVM's constant folder), on the inputs the wrong-result check draws (seed 0):
numpy as the check runs it (the function at its own dtypes, every float computed in float64), plain TVM on the
inputs widened, or as drawn for a function that fixes its own dtypes (plain TVM cannot widen it). Per kernel:
elements, the largest difference in units of the output dtype's tolerance (mismatch_run.TOLERANCE, times
1 + |plain TVM|), and how many elements differ by more than one such unit (disagreements, each to be
explained), or why numpy could not evaluate it (then the check uses plain TVM).

Usage: python bench/telang_references.py [crash.yaml or .info ...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "reducer" / "in_mindspore"))  # as the check loads them: beside mismatch_run.py

import telang_numpy  # noqa: E402
import telang_plain  # noqa: E402
from wire import import_akg  # noqa: E402

from reducer.compile.akg import mismatch_spec  # noqa: E402
from reducer.core.case import Mismatch  # noqa: E402
from reducer.in_mindspore.mismatch_run import TOLERANCE, WIDER, make_inputs  # noqa: E402
from reducer.inputs.load import load_input  # noqa: E402
from reducer.kernels.kinds import IR_BUILDER_KIND, TELANG, kind_of, outputs_of  # noqa: E402


def kernels() -> list[Path]:
    found = [*ROOT.glob("corpus/*/crash.yaml"), *ROOT.glob("bench/held_out/*/crash.yaml")]
    found += [p for p in ROOT.glob("tests/data/**/crash.yaml") if "truth" not in p.parts]
    found += sorted(ROOT.glob("tests/data/custom_attrs/*.info"))
    return sorted(found)


def row(path: Path, tvm) -> str | None:
    case = load_input(path)
    if kind_of(case) not in (TELANG, IR_BUILDER_KIND):
        return None
    case = case.with_(mismatch=case.mismatch or Mismatch(), target="cpu")
    spec = mismatch_spec(case, outputs_of(case))
    arrays = make_inputs(spec["inputs"], 0)
    function = (spec["source"], spec["function"], spec["func_type"])
    name = path.parent.name if path.name == "crash.yaml" else path.name
    values, how = [a.astype(WIDER.get(str(a.dtype), a.dtype)) for a in arrays], "widened"
    try:
        plain = telang_plain.run_plain(tvm, *function, spec.get("op_attrs", {}), values, spec["run_target"])
    except Exception:  # a function that fixes its own dtypes does not build widened: both as declared
        values, how = arrays, "as declared"
        plain = telang_plain.run_plain(tvm, *function, spec.get("op_attrs", {}), values, spec["run_target"])
    # numpy as the check runs it: the function at its own dtypes, evaluated wide
    shapes = [(a.shape, str(a.dtype)) for a in arrays]
    placeholders, results = telang_plain.called(tvm, *function, shapes, spec.get("op_attrs", {}))
    try:
        ours = telang_numpy.evaluate(tvm, placeholders, results, arrays, wide=True)
    except telang_numpy.Unsupported as exc:
        return f"| {name} | {spec['func_type']} | {how} | - | - | - | numpy: {exc} |"
    elements, worst, off = 0, 0.0, 0
    for mine, theirs, out in zip(ours, plain, spec["outputs"], strict=True):
        a, b = np.asarray(mine, np.float64), np.asarray(theirs, np.float64)
        unit = TOLERANCE.get(out["dtype"], 0.0) * (1 + np.abs(b))
        with np.errstate(invalid="ignore", divide="ignore"):
            gap = np.where((a == b) | (np.isnan(a) & np.isnan(b)), 0.0, np.abs(a - b))
            ratio = np.where(unit > 0, gap / unit, np.where(gap > 0, np.inf, 0.0))
        elements += a.size
        worst = max(worst, float(np.nanmax(ratio)) if ratio.size else 0.0)
        off += int(np.count_nonzero(~(ratio <= 1)))
    return f"| {name} | {spec['func_type']} | {how} | {elements} | {worst:.3g} | {off} | |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # one kernel, in a process of its own
    args = parser.parse_args()
    if args.one:
        import_akg("cpu")
        from akg import tvm

        print(row(args.one, tvm) or "", flush=True)
        return
    print("| kernel | kind | inputs | elements | largest gap (tolerances) | elements apart | not compared because |")
    print("|---|---|---|---|---|---|---|")
    for path in args.paths or kernels():  # each alone: a kernel 8000 expressions deep kills plain TVM's build
        one = [sys.executable, __file__, "--one", str(path)]
        run = subprocess.run(one, capture_output=True, text=True, check=False)
        line = next((ln for ln in run.stdout.splitlines() if ln.startswith("| ")), "")
        if line:
            print(line, flush=True)
        elif run.returncode != 0:
            died = f"plain TVM's build died (exit {run.returncode})"
            print(f"| {path.parent.name} | | | - | - | - | {died} |", flush=True)


if __name__ == "__main__":
    main()
