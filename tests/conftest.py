"""Shared fixtures: a case on disk compiled by the fake compiler, and the real-AKG skip marker."""

from __future__ import annotations

import importlib.util
import os
import shutil
import textwrap
from pathlib import Path

import psutil
import pytest
import yaml

HERE = Path(__file__).resolve().parent
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


def processes_mentioning(text: str) -> list[psutil.Process]:
    """Running processes whose command line contains `text`."""
    return [p for p in psutil.process_iter(["cmdline"]) if text in " ".join(p.info["cmdline"] or [])]


@pytest.fixture
def fake_case(tmp_path: Path) -> Path:
    return write_case(tmp_path / "matmul_bias")


@pytest.fixture(scope="session", autouse=True)
def private_compile_cache(tmp_path_factory: pytest.TempPathFactory):
    """Every `reduce` the suite runs uses a fresh persistent cache, never the user's."""
    os.environ["AKG_REDUCE_CACHE"] = str(tmp_path_factory.mktemp("cache") / "compiles.sqlite")
    yield
    del os.environ["AKG_REDUCE_CACHE"]


@pytest.fixture(scope="session", autouse=True)
def nothing_left_behind():
    """After the whole suite: no compile process still running and no sandbox temp dir left."""
    import tempfile

    tmp = Path(tempfile.gettempdir())
    before = set(tmp.glob("akg-reduce-*"))
    yield
    children = psutil.Process().children(recursive=True)
    assert not children, [c.cmdline() for c in children]

    def ours(path: Path) -> bool:  # made by this suite: by this process or by a reducer it ran (now gone)
        pid = path.name.removeprefix("akg-reduce-").split("-")[0]
        return pid.isdigit() and (int(pid) == os.getpid() or not psutil.pid_exists(int(pid)))

    assert not [p for p in set(tmp.glob("akg-reduce-*")) - before if ours(p)]
