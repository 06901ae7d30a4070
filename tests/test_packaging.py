"""akg-reduce installed from its wheel (not editable, not from this checkout) writes a bundle and a corpus
report: the templates and the worker script travel as package data."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import ROOT, write_case

import reducer

# One worker builds the wheel: pip builds it in this checkout's build/, which two builds at once tear apart
# (a module fixture runs once per xdist worker that gets one of these tests).
pytestmark = pytest.mark.xdist_group("wheel_from_checkout")


def run(command: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding only the wheel built from this checkout; the dependencies are this
    environment's (a path entry, so its editable install of akg-reduce is not picked up)."""
    home = tmp_path_factory.mktemp("wheel")
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(home / "dist"), str(ROOT)], home)
    assert built.returncode == 0, built.stderr
    (wheel,) = (home / "dist").glob("akg_reduce-*.whl")
    venv = home / "venv"
    assert run([sys.executable, "-m", "venv", "--without-pip", str(venv)], home).returncode == 0
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-deps", "-q",
               str(wheel)], home)  # fmt: skip
    assert pip.returncode == 0, pip.stderr
    where = run([str(venv / "bin" / "python"), "-c", "import reducer; print(reducer.__file__)"], home)
    assert where.stdout.startswith(str(site)), where  # the wheel's copy, not this checkout
    return venv / "bin"


def test_the_installed_wheel_writes_a_complete_bundle(installed: Path, tmp_path: Path) -> None:
    crash = write_case(tmp_path / "case")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run([str(installed / "reduce"), str(crash), "-o", "out", "-j", "1", "--no-diagnosis"], elsewhere)
    assert done.returncode == 0, done.stderr
    bundle = elsewhere / "out" / "case"
    issue = (bundle / "ISSUE.md").read_text()
    assert "## Environment" in issue and f"akg-reduce {reducer.__version__}" in issue
    assert json.loads((bundle / "reduction.json").read_text())["akg_reduce"] == reducer.__version__
    assert "def main" in (bundle / "repro.py").read_text()
    assert {"kernel.py", "kernel.info", "crash.yaml", "reduction.json"} <= {p.name for p in bundle.iterdir()}


def test_the_installed_wheel_writes_a_corpus_report(installed: Path, tmp_path: Path) -> None:
    write_case(tmp_path / "corpus" / "case")
    done = run([str(installed / "reduce"), "corpus", str(tmp_path / "corpus"), "-o", "night", "-j", "1",
                "--no-diagnosis"], tmp_path)  # fmt: skip
    assert done.returncode == 4, done.stderr  # the first night: its one bug is new
    page = (tmp_path / "night" / "report.html").read_text()
    assert "<html" in page and "fake_tiling.cc:193" in page
