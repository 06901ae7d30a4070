"""The corpus cases the benchmarks measure: by default the compiler failures that end in an error or a
crash. Wrong results (`expect: {kind: mismatch}`, a MindSpore run per check) and hangs (`expect: {kind:
timeout}`, seconds per check) are the expensive ones, measured by bench/expensive.py; name them to include
them elsewhere."""

from __future__ import annotations

from pathlib import Path

from reducer.inputs.crash_yaml import load_case

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
EXPENSIVE = ("mismatch", "timeout")


def _expected_kinds() -> dict[str, str]:
    folders = sorted(p for p in CORPUS.iterdir() if (p / "crash.yaml").is_file())
    expects = {p.name: load_case(p / "crash.yaml").expect for p in folders}
    return {name: expect.kind if expect else "error" for name, expect in expects.items()}


def crash_cases() -> list[str]:
    return [name for name, kind in _expected_kinds().items() if kind not in EXPENSIVE]


def expensive_cases() -> list[str]:
    return [name for name, kind in _expected_kinds().items() if kind in EXPENSIVE]
