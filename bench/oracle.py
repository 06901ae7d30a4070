"""Per-compile wall time of the three ways to compile a case, on the same kernels, runs interleaved:
cold (a new `python compiler.py` process, what repro.py does), warm (forked from a worker that imported
AKG once: the reducer's default) and in-process (`akg.ms.compilewithjson` called again and again in one
process that imported AKG: the physical limit, timed inside that process). Prints medians and ratios.

Usage: python bench/oracle.py [-n ROUNDS] [case ...]   (default: every corpus case, 5 rounds)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus_cases import CORPUS, crash_cases

from reducer.compile.akg import compile_case
from reducer.compile.warm import WorkerPool
from reducer.core.case import Case
from reducer.inputs.crash_yaml import load_case
from reducer.kernels.kinds import info_text, outputs_of
from reducer.toolchain.launch import akg_build, compile_env, find_toolchain

# The in-process side: imports AKG once, then for each request line (a .info path and attrs) compiles in
# a fresh dir and prints the seconds compilewithjson took. Errors are the point, so they are swallowed.
IN_PROCESS = r"""
import json, os, sys, tempfile, time
from reducer.compile.akg_worker import preload
replies = os.fdopen(os.dup(1), "w")
quiet = os.open(os.devnull, os.O_WRONLY)
os.dup2(quiet, 1)  # AKG's C++ log writes to the fds, not to sys.stdout
os.dup2(quiet, 2)
preload(sys.argv[1])  # what a warm worker imports, the same way
import akg.ms
for line in sys.stdin:
    request = json.loads(line)
    with tempfile.TemporaryDirectory() as work:
        os.chdir(work)
        info = open(request["info"]).read()
        start = time.perf_counter()
        try:
            akg.ms.compilewithjson(info, json.dumps(request["attrs"]))
        except Exception:
            pass
        seconds = time.perf_counter() - start
        os.chdir("/")
    print(json.dumps(seconds), file=replies, flush=True)
"""


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*")
    parser.add_argument("-n", "--rounds", type=int, default=5)
    args = parser.parse_args()
    names = args.cases or crash_cases()
    cases: dict[str, Case] = {name: load_case(CORPUS / name / "crash.yaml") for name in names}
    toolchain = find_toolchain(None, None)
    pool = WorkerPool()
    times: dict[str, dict[str, list[float]]] = {name: {"cold": [], "warm": [], "in-process": []} for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        infos = {}
        for name, case in cases.items():
            infos[name] = Path(tmp) / f"{name}.info"
            infos[name].write_text(info_text(case, outputs_of(case)))
        helper = subprocess.Popen(
            [sys.executable, "-c", IN_PROCESS, toolchain.compiler_script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=compile_env(akg_build(next(iter(cases.values()))), {}),
        )
        assert helper.stdin and helper.stdout

        def in_process(name: str) -> float:
            request = {"info": str(infos[name]), "attrs": cases[name].attrs}
            helper.stdin.write(json.dumps(request) + "\n")
            helper.stdin.flush()
            return float(helper.stdout.readline())

        try:
            for name, case in cases.items():  # warm-up: start the worker of each env, import in the helper
                compile_case(case, outputs_of(case), pool=pool)
                in_process(name)
            for round_ in range(args.rounds):
                for name, case in cases.items():
                    outputs = outputs_of(case)
                    ways = {
                        "cold": lambda case=case, outputs=outputs: _timed(lambda: compile_case(case, outputs)),
                        "warm": lambda case=case, outputs=outputs: _timed(
                            lambda: compile_case(case, outputs, pool=pool)
                        ),
                        "in-process": lambda name=name: in_process(name),
                    }
                    order = list(ways)[round_ % 3 :] + list(ways)[: round_ % 3]  # rotate who goes first
                    for way in order:
                        times[name][way].append(ways[way]())
        finally:
            helper.stdin.close()
            helper.wait()
            pool.close()
    print(f"{'case':<24} {'cold s':>7} {'warm s':>7} {'in-proc s':>9} {'cold/warm':>9} {'warm/in-proc':>12}")
    ratios_fast, ratios_limit = [], []
    for name in names:
        cold, warm, limit = (statistics.median(times[name][w]) for w in ("cold", "warm", "in-process"))
        ratios_fast.append(cold / warm)
        ratios_limit.append(warm / limit)
        print(f"{name:<24} {cold:>7.3f} {warm:>7.3f} {limit:>9.3f} {cold / warm:>9.2f} {warm / limit:>12.2f}")
    print(
        f"{'median':<24} {'':>7} {'':>7} {'':>9} {statistics.median(ratios_fast):>9.2f}"
        f" {statistics.median(ratios_limit):>12.2f}"
    )
    print(f"({args.rounds} interleaved rounds; {os.cpu_count()} cores; MindSpore {toolchain.mindspore_version})")


if __name__ == "__main__":
    main()
