"""Which Python a captured kernel is rebuilt with: the one that ran the model, found from the command's words
or from the run's process tree (a `bash -c`, a shell script), or named by --python; a run under another
MindSpore release is checked with that release."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from conftest import needs_ascend
from test_capture import EXAMPLES, LOGS, one_error_line, reduce_cli

from reducer.capture.interpreter import COMMAND, OURS, WATCHED, TreeWatch, command_python, given, of_run
from reducer.compile.user_run import run_command
from reducer.core.targets import AICORE
from reducer.toolchain import releases
from reducer.toolchain.launch import find_toolchain

pytestmark = pytest.mark.timeout(60)

# What `import mindspore` leaves in a process: its _c_expression library mapped. The fake model maps a file
# of that name, so the tree watch finds it without a real MindSpore.
# It trains until told that the watch has seen it (a file), at most 30 s.
FAKE_MODEL = """
import mmap, os, sys, time
with open(sys.argv[1], "rb") as library:
    mapped = mmap.mmap(library.fileno(), 0, access=mmap.ACCESS_READ)
    print("training", flush=True)
    deadline = time.monotonic() + 30
    while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
        time.sleep(0.05)
"""


def _bin_with_python(tmp_path: Path, name: str = "python3") -> Path:
    """A folder for PATH holding `name`, a link to a Python (outside any venv: no MindSpore)."""
    folder = tmp_path / "venv" / "bin"
    folder.mkdir(parents=True)
    (folder / name).symlink_to(sys.executable)
    return folder


def test_the_python_of_the_command_words_is_resolved_on_the_runs_path(tmp_path: Path) -> None:
    folder = _bin_with_python(tmp_path, "python")
    env = {"PATH": f"{folder}{os.pathsep}/usr/bin"}
    assert command_python(["python", "train.py"], env, tmp_path) == str(folder / "python")
    assert command_python(["env", "X=1", "python", "train.py"], env, tmp_path) == str(folder / "python")
    assert command_python(["X=1", "python", "train.py"], env, tmp_path) == str(folder / "python")
    # A path is kept as given, not resolved: a venv's python is a link out of the venv.
    assert command_python(["/abs/venv/bin/python3", "t.py"], env, tmp_path) == "/abs/venv/bin/python3"
    assert command_python(["venv/bin/python3.11", "t.py"], env, tmp_path) == str(tmp_path / "venv/bin/python3.11")
    for words in (["bash", "-c", "python train.py"], ["./train.sh"], ["python3.99", "t.py"], []):
        assert command_python(words, env, tmp_path) is None, words


def test_a_bash_c_run_tells_its_python_by_the_process_that_loaded_mindspore(tmp_path: Path) -> None:
    folder = _bin_with_python(tmp_path)
    library = tmp_path / "site" / "mindspore" / "_c_expression.cpython-311-x86_64-linux-gnu.so"
    library.parent.mkdir(parents=True)
    library.write_bytes(b"\0" * 4096)
    (tmp_path / "model.py").write_text(FAKE_MODEL)
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
    seen = tmp_path / "seen"
    command = ["bash", "-c", f"python3 model.py {library} {seen}; exit 1"]
    with TreeWatch() as watch:
        told = threading.Thread(target=_tell_when_found, args=(watch, seen), daemon=True)
        told.start()
        outcome = run_command(command, tmp_path, env, 60, 4096, tmp_path / "run.log", echo=None)
        told.join()
    assert outcome.returncode == 1 and "training" in outcome.output
    assert watch.found == str(folder / "python3")


def _tell_when_found(watch: TreeWatch, seen: Path) -> None:
    """Let the fake model end once the watch has found it (or after 40 s, when the test then fails)."""
    deadline = time.monotonic() + 40
    while watch.found is None and time.monotonic() < deadline:
        time.sleep(0.05)
    seen.touch()


def test_a_python_without_mindspore_of_its_own_gives_way_and_is_named(tmp_path: Path) -> None:
    folder = _bin_with_python(tmp_path)
    found, said = of_run(None, str(folder / "python3"), ["bash", "train.sh"], dict(os.environ), tmp_path)
    assert found.how == OURS and found.field is None
    assert f"{folder / 'python3'} ({WATCHED}) has no MindSpore of its own" in said and "--python" in said
    found, said = of_run(None, None, [sys.executable, "train.py"], dict(os.environ), tmp_path)
    assert found.how == COMMAND and found.field is None  # akg-reduce's own MindSpore: no python: written
    assert f"at {sys.executable} ({COMMAND})" in said


def test_a_python_option_of_a_bare_name_is_found_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    assert given(Path(Path(sys.executable).name)).path == sys.executable


def test_a_bad_python_option_is_one_line_before_any_work(tmp_path: Path) -> None:
    log = str(LOGS / "voxel_conv3d_custom.log")
    run = reduce_cli("from-log", log, "-o", "out", "--python", str(tmp_path / "nope" / "python"), cwd=tmp_path)
    assert run.returncode == 2 and f"--python: cannot start {tmp_path / 'nope' / 'python'}" in one_error_line(run)
    no_mindspore = _bin_with_python(tmp_path) / "python3"
    run = reduce_cli("from-log", log, "-o", "out", "--python", str(no_mindspore), cwd=tmp_path)
    assert run.returncode == 2 and f"MindSpore is not installed for {no_mindspore}" in one_error_line(run)
    touched = tmp_path / "ran"
    command = [sys.executable, "-c", f"open({str(touched)!r}, 'w')"]
    run = reduce_cli("capture", "-o", "out", "--python", str(no_mindspore), "--", *command, cwd=tmp_path)
    assert run.returncode == 2 and str(no_mindspore) in one_error_line(run)
    assert not touched.exists() and not (tmp_path / "out").exists()


@pytest.mark.akg
@pytest.mark.timeout(600)
def test_a_run_under_another_mindspore_release_is_checked_with_that_release(tmp_path: Path) -> None:
    needs_ascend()
    python = releases.installed(AICORE)
    assert python is not None
    release = find_toolchain(python, None).mindspore_version
    assert release != find_toolchain(None, None).mindspore_version, f"{python} has akg-reduce's own release"
    command = [python, str(EXAMPLES / "voxel_conv3d.py")]
    run = reduce_cli("capture", "-o", "out", "--no-reduce", "--", *command, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert f"rebuilding its kernels with MindSpore {release} at {python}" in run.stderr
    report = json.loads((tmp_path / "out" / "capture.json").read_text())
    assert report["python"] == {"path": python, "found": WATCHED, "mindspore": release}
    [kernel] = report["kernels"]
    assert kernel["status"] == "captured" and "gemm_m.size() <= FormatM.size()" in kernel["signature"]
    assert yaml.safe_load((tmp_path / kernel["crash_yaml"]).read_text())["python"] == python
