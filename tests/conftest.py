"""Shared fixtures: a case on disk compiled by the fake compiler, the real-AKG skip marker, and the
isolation every test gets (its own cache and temp dir; nothing of it left running or on disk)."""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import signal
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
import yaml

from reducer.compile.sandbox import OWNER_ENV, PREFIX

HERE = Path(__file__).resolve().parent

# A suite started in the background by a non-interactive shell (`sh -c 'make test &'`) inherits SIGINT
# ignored, and Python keeps an inherited SIG_IGN, so every reducer a test starts would ignore Ctrl-C and the
# SIGINT tests would fail. A handler here is reset to the default in every child at exec.
signal.signal(signal.SIGINT, signal.default_int_handler)
ROOT = HERE.parent
FAKE_COMPILER = HERE / "fake_compiler.py"
CORPUS = ROOT / "corpus"

MATMUL_KERNEL = textwrap.dedent(
    """
    from mindspore.ops import kernel


    @kernel
    def matmul_bias(a, b, bias):
        # a [M, K] x b [K, N] + bias [N]
        c = output_tensor((a.shape[0], b.shape[1]), a.dtype)
        t = allocate((a.shape[0], b.shape[1]), a.dtype)
        for i in range(a.shape[0]):
            for j in range(b.shape[1]):
                t[i, j] = 0.0
                for k in range(a.shape[1]):
                    t[i, j] = t[i, j] + a[i, k] * b[k, j]
        for i in range(a.shape[0]):
            for j in range(b.shape[1]):
                c[i, j] = t[i, j] + bias[j]
        return c
    """
)

# A kernel AKG compiles: what a case fails on is then its attrs or its environment.
ADD_KERNEL = """def add(a, b):
    c = output_tensor(a.shape, a.dtype)
    for i in range(a.shape[0]):
        c[i] = a[i] + b[i]
    return c
"""

HAS_AKG = importlib.util.find_spec("mindspore") is not None
needs_akg = pytest.mark.skipif(not HAS_AKG, reason="MindSpore (real AKG) is not installed")


def write_case(folder: Path, kernel: str = MATMUL_KERNEL, **fields: object) -> Path:
    """A crash.yaml + kernel.py in `folder`, compiled by the fake compiler unless fields say otherwise."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.py").write_text(kernel)
    shutil.copy(FAKE_COMPILER, folder / "fake_compiler.py")
    data: dict[str, object] = {
        "name": folder.name,
        "kernel": "kernel.py",
        "inputs": [
            {"shape": [16, 8], "dtype": "float32"},
            {"shape": [8, 16], "dtype": "float32"},
            {"shape": [16], "dtype": "float32"},
        ],
        "attrs": {"enable_auto_inline": False, "dim": "0 0 4 4"},
        "env": {"MS_DEV_FAKE": "1"},
        "compiler": "fake_compiler.py",
        "timeout": 20,
    }
    data.update(fields)
    path = folder / "crash.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture
def fake_case(tmp_path: Path) -> Path:
    return write_case(tmp_path / "matmul_bias")


def sandboxed_processes(owner: int | None = None) -> list[psutil.Process]:
    """Live processes the sandbox marked as compiles (or warm workers) of the reducer `owner`; of reducers
    that are gone when None. Found by the mark in their environment, so also after they left the tree."""
    found = []
    for proc in psutil.process_iter():
        try:
            mark = proc.environ().get(OWNER_ENV)
            if mark is None or proc.status() == psutil.STATUS_ZOMBIE:
                continue
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if (owner is None and not psutil.pid_exists(int(mark))) or mark == str(owner):
            found.append(proc)
    return found


def wait_until(condition: Callable[[], object], seconds: float, what: str) -> None:
    """Poll `condition` until it is true; fail naming `what` after `seconds` (a bound, not a pace)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:g} s")
        time.sleep(0.02)


def describe(procs: list[psutil.Process]) -> list[str]:
    """What a process is, for a failure message."""
    facts = []
    for proc in procs:
        try:
            facts.append(f"{proc.pid} (parent {proc.ppid()}, {proc.status()}): {' '.join(proc.cmdline())[:300]}")
        except psutil.NoSuchProcess:
            facts.append(f"{proc.pid} (gone)")
    return facts


@pytest.fixture(autouse=True)
def isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test has its own persistent compile cache and its own temp dir (for itself and every reducer
    it starts); afterwards no process it started is alive, no compile is orphaned and no temp dir of ours
    is left in its temp dir."""
    state = tmp_path_factory.mktemp("state")
    tmp = state / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("AKG_REDUCE_CACHE", str(state / "compiles.sqlite"))
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    yield tmp
    problems = []
    _, alive = psutil.wait_procs(psutil.Process().children(recursive=True), timeout=10)
    if alive:
        problems.append(f"processes still running: {describe(alive)}")
    try:
        wait_until(lambda: not sandboxed_processes(), 10, "orphaned compiles end")
    except AssertionError:
        problems.append(f"compiles outlived their reducer: {describe(sandboxed_processes())}")
    for proc in alive + sandboxed_processes():
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    left = sorted(p.name for p in tmp.glob(f"{PREFIX}*"))
    if left:
        problems.append(f"temp dirs left: {left}")
    assert not problems, problems
