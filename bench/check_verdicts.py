"""The wrong-result check judged on kernels whose truth is known: the fused graphs MindSpore 2.10 wrote from its
own graph-kernel test nets (tests/data/graphs, each net passing on CPU), the corpus's wrong kernels, the
TeLang kernels of tests/data/telang_right and tests/data/telang_fp16_overflow, the TeLang and ir_builder .info
files MindSpore wrote (tests/data/custom_attrs) and the graphs of tests/data/exact_right (at integer ties, and
a divisor that is a product), all right on CPU, and any .info or crash.yaml named. Each is checked once by
`reduce check` (the real AKG, seed 0); the table gives the verdict, what it compared and what was expected of
it, and the counts of false alarms, misses and "not checked" at the end.

Expected: a corpus case with `expect: {kind: mismatch}` is wrong; a TeLang kernel is right; a graph of
tests/data/graphs is right, but for those with a float32 Exp or Tanh, which AKG computes many times less
accurately than MindSpore (docs/wrong-results.md): imprecise.

Usage: python bench/check_verdicts.py [path ...]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
RIGHT_TELANG = ROOT / "tests" / "data" / "telang_right"
# Right TeLang kernels whose float16 run overflows where the float32 run does not: compared where it does not.
OVERFLOWING = ROOT / "tests" / "data" / "telang_fp16_overflow" / "crash.yaml"
APPROXIMATED = {"Exp", "Tanh"}  # AKG 2.10's float32 kernels of these are far less accurate than MindSpore's


def cases() -> list[Path]:
    graphs = sorted((ROOT / "tests" / "data" / "graphs").glob("*.info"))
    graphs += sorted((ROOT / "tests" / "data" / "exact_right").glob("*.info"))  # at integer ties, through products
    mindspore_wrote = sorted((ROOT / "tests" / "data" / "custom_attrs").glob("*.info"))
    telang = [*sorted(RIGHT_TELANG.glob("*/crash.yaml")), OVERFLOWING, *mindspore_wrote]
    wrong = [p for p in sorted((ROOT / "corpus").glob("*/crash.yaml")) if "mismatch" in p.read_text()]
    return graphs + telang + wrong


def expected(path: Path) -> str:
    if path.suffix == ".yaml":
        return "right" if path.is_relative_to(RIGHT_TELANG) or path == OVERFLOWING else "wrong"
    ops = {op["name"] for op in json.loads(path.read_text())["op_desc"]}
    dtypes = {t["data_type"] for op in json.loads(path.read_text())["op_desc"] for t in op["output_desc"]}
    return "imprecise" if ops & APPROXIMATED and "float32" in dtypes else "right"


def as_case(path: Path, folder: Path) -> Path:
    """A crash.yaml that asks for the wrong-result check of `path`."""
    if path.suffix == ".yaml":
        return path
    (folder / path.name).write_text(path.read_text())
    data = {"name": path.stem[:40], "kernel": path.name, "expect": {"kind": "mismatch"}}
    (folder / "crash.yaml").write_text(yaml.safe_dump(data))
    return folder / "crash.yaml"


def verdict(output: str) -> tuple[str, str]:
    """(right | imprecise | wrong | not checked | error, what it compared)."""
    compared = re.search(r"\(?(\d+) elements compared\)?|\((\d+ of \d+)\) elements compared", output)
    said = next((g for g in compared.groups() if g), "") if compared else ""
    if "computes the same result" in output:
        return "right", said
    if "not checked" in output:
        return "not checked", said
    if "imprecise values" in output:
        return "imprecise", said
    if "mismatch: wrong result" in output:
        return "wrong", said
    return "error", output.strip().splitlines()[-1][:80] if output.strip() else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path)
    args = parser.parse_args()
    print("| kernel | expected | verdict | compared |")
    print("|---|---|---|---|")
    tally = {"false alarms": 0, "misses": 0, "not checked": 0}
    for path in args.paths or cases():
        with tempfile.TemporaryDirectory(prefix="akg-verdicts-") as tmp:
            crash = as_case(path, Path(tmp))
            run = subprocess.run([sys.executable, "-m", "reducer", "check", str(crash)], capture_output=True,
                                 text=True, timeout=600, cwd=tmp)  # fmt: skip
        got, compared = verdict(run.stdout + run.stderr)
        want = expected(path)
        tally["false alarms"] += want == "right" and got in ("wrong", "imprecise")
        tally["misses"] += want in ("wrong", "imprecise") and got == "right"
        tally["not checked"] += got == "not checked"
        name = path.parent.name if path.suffix == ".yaml" else path.stem[:48]
        print(f"| {name} | {want} | {got} | {compared} |", flush=True)
    print()
    print(", ".join(f"{k}: {v}" for k, v in tally.items()))


if __name__ == "__main__":
    main()
