"""Does akg-reduce take every kernel AKG and MindSpore take? Given folders of kernel files (AKG's `.info` and
`.json` kernel descriptions, e.g. a checkout of mindspore-ai/akg's tests/st) and crash.yaml files of Hybrid DSL
kernels, it runs each through MindSpore's own path and through `reduce check`, and lists every kernel MindSpore
takes and the tool refuses (exit 2), and every kernel where the two disagree on how the compile ends.

- A kernel file is compiled by MindSpore's compile entry (`compiler.py k.info AKG '{}' dir`, cold) with the AKG
  build of its process (cpu, or the machine's GPU build for cuda); Ascend ones (`aicore`) are counted and left
  aside when the wheel has no Ascend build.
- A crash.yaml's kernel runs through `ops.Custom(func, func_type="hybrid")` on CPU (zero inputs of its shapes):
  MindSpore's checks, its auto-infer and the AKG compile, as a user's script does.
- How it ends, in classes both sides can tell: `compiles`, `codegen` (AKG's passes done; CUDA code generation or
  nvcc, which no GPU here finishes the same way on both sides), `fails` (an AKG error, a crash, a hang),
  `refused` (MindSpore's own input checks, or the tool's exit 2). The tool's `codegen` covers its `compiles`
  too: it hands nvcc an architecture where MindSpore's entry stops without one.

    python bench/conformance.py DIR... [-j 2] [--per-folder N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from reducer.core.errors import InputError
from reducer.toolchain.builds import choose_build, shipped
from reducer.toolchain.launch import compile_env, find_toolchain

TIMEOUT = 300
CUSTOM_RUN = textwrap.dedent(
    """
    import runpy, sys, yaml, numpy as np
    from pathlib import Path
    import mindspore as ms
    from mindspore import ops, Tensor
    from mindspore.ops.operations._ms_kernel import VariableUsage
    crash = Path(sys.argv[1])
    data = yaml.safe_load(crash.read_text())
    namespace = runpy.run_path(str(crash.parent / data["kernel"]))
    func = namespace[data.get("function") or [n for n, v in namespace.items() if callable(v)][-1]]
    ms.set_context(device_target="CPU", mode=ms.GRAPH_MODE)
    arrays = [np.zeros(t["shape"], dtype=t["dtype"]) for t in data["inputs"]]
    if "__wrapped__" in func.__dict__:  # @kernel: func_type "hybrid", MindSpore's checks and auto-infer
        run = ops.Custom(func, func_type="hybrid")
    else:  # a plain function, as MindSpore's own tests pass one: func_type "akg", outputs given
        func.__globals__.update(VariableUsage.intrin_runtime)
        outs = func(*[a.copy() for a in arrays])
        outs = outs if isinstance(outs, tuple) else (outs,)
        shapes = [list(o.shape) for o in outs]
        dtypes = [ms.tensor(np.zeros(1, o.dtype)).dtype for o in outs]
        one = len(outs) == 1
        run = ops.Custom(func, out_shape=shapes[0] if one else tuple(shapes),
                         out_dtype=dtypes[0] if one else tuple(dtypes), func_type="akg")
    run(*[Tensor(a) for a in arrays])
    print("AKG-CONFORMANCE compiled")
    """
)


@dataclass
class Row:
    path: str
    process: str
    mindspore: str  # compiles | codegen | fails | refused | left aside
    tool: str
    mindspore_said: str
    tool_said: str
    seconds: float

    @property
    def refused(self) -> bool:
        return self.tool == "refused" and self.mindspore in ("compiles", "codegen", "fails")

    @property
    def disagrees(self) -> bool:
        if self.refused or "left aside" in (self.mindspore, self.tool):
            return False
        same = {self.mindspore, self.tool} <= {"compiles", "codegen"} if self.process == "cuda" else False
        return self.mindspore != self.tool and not same


def kernel_files(folders: list[Path], per_folder: int | None) -> list[Path]:
    found: list[Path] = []
    for folder in folders:
        by_dir: dict[Path, list[Path]] = {}
        for path in sorted(folder.rglob("*")):
            if path.name == "crash.yaml" or (path.suffix in (".info", ".json") and _is_kernel_json(path)):
                by_dir.setdefault(path.parent, []).append(path)
        for paths in by_dir.values():
            found += paths[:per_folder] if per_folder else paths
    return found


def _is_kernel_json(path: Path) -> bool:
    # Not reducer.inputs.load.is_kernel_file: the bench also measures code from before that existed
    # (PYTHONPATH set to an older checkout), so it picks its kernels the same way for both.
    try:
        return "op_desc" in json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, TypeError, OSError):
        return False


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith(" ")]
    errors = [ln for ln in lines if re.search(r"Check failed|\[ERROR\] AKG|Error:|error:|fatal", ln)]
    return (errors or lines or [""])[-1][:300]


def _ending(returncode: int | None, output: str) -> str:
    if returncode == 0 and "[ERROR] AKG" not in output:
        return "compiles"
    if re.search(r"arch\(sm_xy\)|nvcc|Compilation error", output):
        return "codegen"
    if returncode is None or returncode < 0 or re.search(r"\[ERROR\] AKG|Check failed|Segmentation", output):
        return "fails"
    if re.search(r"KeyError|JSONDecodeError|TypeError: .*(not subscriptable|NoneType)", output):
        return "refused"
    return "fails"


def _run(command: list[str], env: dict[str, str], cwd: str) -> tuple[int | None, str, float]:
    start = time.monotonic()
    try:
        run = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        return None, str(exc.output or ""), time.monotonic() - start
    return run.returncode, run.stdout + run.stderr, time.monotonic() - start


def mindspore_side(path: Path) -> tuple[str, str, str]:
    """(process, ending, what it said) of MindSpore's own path for one kernel."""
    toolchain = find_toolchain(None, None)
    with tempfile.TemporaryDirectory(prefix="conformance-") as work:
        if path.name == "crash.yaml":
            env = {k: v for k, v in os.environ.items() if not k.startswith(("MS_", "AKG_"))}
            code, output, _ = _run([toolchain.python, "-c", CUSTOM_RUN, str(path.resolve())], env, work)
            ending = "compiles" if "AKG-CONFORMANCE compiled" in output else _ending(code or 1, output)
            if ending == "fails" and re.search(r"In the function \[|Hybrid DSL|ValueError|TypeError", output):
                ending = "refused" if "AKG" not in _last_line(output) else ending
            return "cpu", ending, _last_line(output)
        info = json.loads(path.read_text(encoding="utf-8"))
        process = str(info.get("process", "cpu"))
        assert toolchain.mindspore_dir and toolchain.mindspore_version
        if process == "aicore" and not any(b.startswith("ascend") for b in shipped(toolchain.mindspore_dir)):
            return process, "left aside", "no Ascend build in this wheel"
        build = choose_build(toolchain.mindspore_dir, toolchain.mindspore_version, process, None)
        Path(work, "k.info").write_text(path.read_text(encoding="utf-8"))
        env = {k: v for k, v in compile_env(build, {}).items() if not k.startswith("AKG_REDUCE")}
        env["PATH"] = os.environ.get("PATH", os.defpath)  # MindSpore's entry as a user runs it: no nvcc shim
        command = [toolchain.python, toolchain.compiler_script, "k.info", "AKG", "{}", "."]
        code, output, _ = _run(command, env, work)
        return process, _ending(code, output), _last_line(output)


def tool_side(path: Path) -> tuple[str, str]:
    with tempfile.TemporaryDirectory(prefix="conformance-") as work:
        env = {**os.environ, "AKG_REDUCE_CACHE": str(Path(work) / "compiles.sqlite")}
        code, output, _ = _run([sys.executable, "-m", "reducer", "check", str(path.resolve())], env, work)
    said = _last_line(output)
    if code == 2:
        return "refused", said
    if code == 0:
        return "fails", output.strip().splitlines()[-1][:300] if output.strip() else ""
    if code == 3 and "compiles without error" in output:
        return "compiles", said
    if code == 3 and ("code generation" in output or "reaches nvcc" in output):
        return "codegen", said
    return ("left aside" if "aicore needs" in output else "tool error"), said


def check(path: Path) -> Row:
    start = time.monotonic()
    try:
        process, ms_ending, ms_said = mindspore_side(path)
    except (InputError, ValueError, OSError) as exc:
        process, ms_ending, ms_said = "?", "refused", str(exc)[:300]
    tool, tool_said = ("left aside", "") if ms_ending == "left aside" else tool_side(path)
    return Row(str(path), process, ms_ending, tool, ms_said, tool_said, round(time.monotonic() - start, 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--per-folder", type=int, default=None, help="at most N kernels of each folder")
    parser.add_argument("--json", type=Path, default=None, help="write every row here")
    args = parser.parse_args()
    paths = kernel_files(args.folders, args.per_folder)
    print(f"{len(paths)} kernels", flush=True)
    rows: list[Row] = []
    with ThreadPoolExecutor(args.jobs) as pool:
        for row in pool.map(check, paths):
            rows.append(row)
            mark = "REFUSED" if row.refused else "DIFFERS" if row.disagrees else "ok"
            print(f"{mark:8} {row.process:6} mindspore={row.mindspore:10} tool={row.tool:10} {row.path}", flush=True)
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))
    counted = [r for r in rows if "left aside" not in (r.mindspore, r.tool)]
    print(f"\n{len(rows)} kernels, {len(rows) - len(counted)} left aside (Ascend), {len(counted)} compared")
    for process in sorted({r.process for r in counted}):
        mine = [r for r in counted if r.process == process]
        endings = {e: sum(r.mindspore == e for r in mine) for e in ("compiles", "codegen", "fails", "refused")}
        print(f"  {process}: {len(mine)} kernels, MindSpore: {endings}")
    refused = [r for r in counted if r.refused]
    differs = [r for r in counted if r.disagrees]
    print(f"refused by the tool, taken by MindSpore/AKG: {len(refused)}")
    for r in refused:
        print(f"  {r.path}\n    tool: {r.tool_said}")
    print(f"the two end differently: {len(differs)}")
    for r in differs:
        print(f"  {r.path}\n    MindSpore {r.mindspore}: {r.mindspore_said}\n    tool {r.tool}: {r.tool_said}")


if __name__ == "__main__":
    main()
