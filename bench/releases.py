"""One bug across MindSpore releases: every corpus case (errors and crashes, bare .info ones too) is
compiled once by this environment's MindSpore, its expectation learned as a reduction learns it, and then
compiled by each other interpreter given (a venv with another MindSpore release); prints, per case and
release, whether that compile matches the learned expectation and has the same bug id, and the signature
where it does not.

Usage: python bench/releases.py PYTHON [PYTHON ...] [--case NAME ...]
  e.g. python bench/releases.py ~/ms27/bin/python ~/ms29/bin/python
"""

from __future__ import annotations

import argparse

from corpus_cases import CORPUS, crash_cases

from reducer.compile.akg import compile_case
from reducer.compile.identity import Signature, matches
from reducer.compile.signature import signature_of
from reducer.core.case import Case
from reducer.core.errors import InputError
from reducer.inputs.load import load_input
from reducer.kernels.kinds import outputs_of
from reducer.toolchain.launch import find_toolchain


def signature(case: Case) -> Signature:
    return signature_of(compile_case(case, outputs_of(case)), case.time_limit)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pythons", nargs="+")
    parser.add_argument("--case", action="append", dest="cases")
    args = parser.parse_args()
    releases = {p: find_toolchain(p, None).mindspore_version for p in args.pythons}
    print(f"{'case':32} {'release':8} {'same bug':9} {'bug id':13} signature")
    bare = [p.name for p in CORPUS.iterdir() if not (p / "crash.yaml").exists() and any(p.glob("*.info"))]
    for name in args.cases or crash_cases() + sorted(bare):
        folder = CORPUS / name
        case = load_input(folder / "crash.yaml" if (folder / "crash.yaml").is_file() else next(folder.glob("*.info")))
        here = signature(case)
        mine = find_toolchain(case.python, case.compiler).mindspore_version
        print(f"{name:32} {mine:8} {'-':9} {here.key():13} {here.one_line()[:90]}")
        for python, version in releases.items():
            try:
                there = signature(case.with_(python=python))
            except InputError as exc:  # a release without the case's AKG build (aicore after 2.7)
                print(f"{'':32} {version:8} {'-':9} {'-':13} {str(exc)[:90]}")
                continue
            same = matches(there, here.expectation()) and there.key() == here.key()
            print(f"{'':32} {version:8} {'yes' if same else 'NO':9} {there.key():13} {there.one_line()[:90]}")


if __name__ == "__main__":
    main()
