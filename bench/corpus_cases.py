"""The corpus cases the benchmarks measure by default: the compiler failures. Wrong-result cases (`expect:
{kind: mismatch}`) run the kernel inside MindSpore, about 5 s a test with no warm worker; name them to
include them."""

from __future__ import annotations

from pathlib import Path

from reducer.inputs.crash_yaml import load_case

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def crash_cases() -> list[str]:
    folders = sorted(p for p in CORPUS.iterdir() if (p / "crash.yaml").is_file())
    return [p.name for p in folders if load_case(p / "crash.yaml").mismatch is None]
