"""Where a compile was when it was killed at its deadline: its native stack sampled with py-spy (the
symbols of AKG's frames, innermost first; for a compile hanging in Python code, its Python frames), or,
when py-spy is missing or may not attach, the kernel's view of the process (/proc/<pid>/wchan and
/proc/<pid>/stack), which tells a wait from a busy loop."""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import psutil

SAMPLE_SECONDS = 20.0  # py-spy reads the symbols of libakg.so first; on this machine it takes ~1 s
KEEP_FRAMES = 8
_PY_SPY_FRAME = re.compile(r"^\s+(?P<symbol>.+?) \((?P<where>[^()]*)\)$")
_OURS = re.compile(r"^(?:akg|air|tvm|llvm)::")
_PY_WHERE = re.compile(r"^(?P<file>.+\.py):\d+$")
_STDLIB = re.compile(r"/lib/python3\.\d+/(?!site-packages/)")  # a file of the interpreter's standard library
_BORING = ("PassMgr::Run", "_M_invoke", "TVMFuncCall", "AssignTypedLambda")


def py_spy() -> str | None:
    """The py-spy beside this interpreter (installed with akg-reduce), else one on PATH."""
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.is_file() else shutil.which("py-spy")


def _native_frames(text: str) -> list[str]:
    """The frames of py-spy's dump of the busiest thread, innermost first: native symbols with their C++
    arguments cut off; a Python frame of the compiler's own code (not the standard library's) as
    `file.py::function`."""
    frames: list[str] = []
    for line in text.splitlines():
        if line.startswith("Thread ") and frames:
            break
        match = _PY_SPY_FRAME.match(line)
        if match is None:
            continue
        python = _PY_WHERE.match(match["where"])
        if python is None:
            frames.append(match["symbol"].split("(")[0].strip())
        elif not _STDLIB.search(python["file"]):
            frames.append(f"{Path(python['file']).name}::{match['symbol'].strip()}")
    return frames


def _kernel_view(pid: int) -> tuple[str, ...]:
    frames = []
    with contextlib.suppress(OSError):
        frames.append(f"wchan: {Path(f'/proc/{pid}/wchan').read_text().strip() or 'running'}")
    with contextlib.suppress(OSError):
        frames += [line.split("] ", 1)[-1] for line in Path(f"/proc/{pid}/stack").read_text().splitlines()[:3]]
    return tuple(frames)


def sample(pids: list[int]) -> tuple[tuple[str, ...], str]:
    """The AKG frames (innermost first) of the first of `pids` that is in AKG, else the kernel's view of
    the first, and what read them ("py-spy", "kernel"); ((), "") when none can be read."""
    tool = py_spy()
    for pid in pids:
        if tool is None:
            break
        command = [tool, "dump", "--native", "--full-filenames", "--pid", str(pid)]
        try:
            dump = subprocess.run(command, capture_output=True, text=True, timeout=SAMPLE_SECONDS)
        except (OSError, subprocess.SubprocessError):
            break
        frames = _native_frames(dump.stdout)
        # AKG's native frames; a compile hanging in Python code (AKG's driver) has none: its Python frames.
        ours = [f for f in frames if _OURS.match(f)] or [f for f in frames if ".py::" in f]
        if ours:
            return tuple(ours[:KEEP_FRAMES]), "py-spy"
    view = _kernel_view(pids[0]) if pids else ()
    return view, "kernel" if view else ""


def hang_place(frames: tuple[str, ...]) -> str:
    """The frame that names where a compile hangs: the innermost AKG frame that is a pass or an analysis
    (`akg::ir::poly::ComputeTransferCopyin::Run`), not the isl or helper code below it, nor a pass manager."""
    runs = [f for f in frames if f.endswith("::Run") and not f.endswith(_BORING)]
    named = [f for f in frames if f.startswith("akg::") and not f.endswith(_BORING)]
    python = [f for f in frames if ".py::" in f]
    return (runs or named or python or [""])[0]


def tree_pids(pid: int) -> list[int]:
    """`pid` and its descendants, the compile's process first."""
    try:
        root = psutil.Process(pid)
        return [pid, *(p.pid for p in root.children(recursive=True))]
    except psutil.NoSuchProcess:
        return []
