"""Which Python, and so which MindSpore, ran the user's model: its kernels are rebuilt with that one, not with
akg-reduce's own, or a run under another MindSpore release is "not reproduced alone" or judged by the wrong AKG.

The rule: `--python` when given; else the first process of the run (by start time) that loaded MindSpore's
`_c_expression` library, watched while it runs (a shell script, `bash -c`, a launcher: whatever started it);
else the command's first word after `env VAR=value ...` when it names a Python; else akg-reduce's own. A
process's interpreter is its argv[0] resolved as Python resolves sys.executable: with a slash, against the
process's working dir; else on its PATH. Never its resolved executable: a venv's python is a symlink out of
the venv, whose MindSpore that would lose."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from reducer.compile.user_run import USER_RUN_ENV
from reducer.core.errors import EnvironmentBroken, InputError
from reducer.toolchain.launch import Toolchain, find_toolchain

MINDSPORE_LIBRARY = f"{os.sep}mindspore{os.sep}_c_expression"  # what `import mindspore` maps into a process
PYTHON_WORD = re.compile(r"python[0-9.]*")
WATCH_SECONDS = 0.5
GIVEN, WATCHED, COMMAND, OURS = (
    "--python",
    "the run's process that loaded MindSpore",
    "the command's first word",
    "akg-reduce's own",
)


@dataclass(frozen=True)
class RunPython:
    """The interpreter a run's kernels are rebuilt with, how it was found, and its MindSpore."""

    path: str
    how: str  # GIVEN, WATCHED, COMMAND or OURS
    toolchain: Toolchain
    ours: bool  # its MindSpore is akg-reduce's own: the crash.yaml files name no `python:`

    @property
    def field(self) -> str | None:
        """The crash.yaml's `python:`: the interpreter, unless its MindSpore is akg-reduce's own (the
        crash.yaml then compiles anywhere akg-reduce does, and an aicore case finds its toolchain itself)."""
        return None if self.ours else self.path

    def said(self) -> str:
        return f"MindSpore {self.toolchain.mindspore_version} at {self.path} ({self.how})"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "found": self.how, "mindspore": self.toolchain.mindspore_version}


def _run_python(path: str, how: str) -> RunPython:
    """`path` probed for its MindSpore (EnvironmentBroken naming it when it has none)."""
    toolchain = find_toolchain(path, None)
    return RunPython(path, how, toolchain, toolchain.mindspore_dir == find_toolchain(None, None).mindspore_dir)


def given(path: Path) -> RunPython:
    """The interpreter of `--python`, checked before any work as a crash.yaml's `python:` is; InputError,
    naming it, when it does not start or has no MindSpore."""
    found = shutil.which(str(path)) if path.name == str(path) else None  # a bare name: on PATH, as a shell does
    try:
        return _run_python(found or str(path.absolute()), GIVEN)
    except EnvironmentBroken as exc:
        raise InputError(str(exc).replace("field 'python'", "--python", 1)) from None


def ours() -> RunPython:
    return _run_python(sys.executable, OURS)


def resolve(word: str, path_env: str | None, cwd: Path) -> str | None:
    """A program's argv[0] as an absolute path, as Python finds sys.executable: with a slash, against `cwd`
    (not following symlinks); else the first on `path_env`. None when it is not found."""
    if os.sep in word:
        return os.path.normpath(cwd / word)
    found = shutil.which(word, path=path_env if path_env is not None else os.defpath)
    return None if found is None else os.path.normpath(cwd / found)


def command_python(command: list[str], env: dict[str, str], cwd: Path) -> str | None:
    """The interpreter the command's own words name: its first word after `env` and `VAR=value` words, when
    that is a Python (`python`, `python3.11`, `/venv/bin/python3`), resolved on the run's PATH."""
    words = list(command)
    if words and Path(words[0]).name == "env":
        words = words[1:]
    while words and "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]
    if not words or not PYTHON_WORD.fullmatch(Path(words[0]).name):
        return None
    return resolve(words[0], env.get("PATH"), cwd)


def _loaded_mindspore(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
            return any(MINDSPORE_LIBRARY in line for line in maps)
    except OSError:
        return False


def _interpreter(proc: psutil.Process) -> str | None:
    with contextlib.suppress(psutil.Error, IndexError):
        return resolve(proc.cmdline()[0], proc.environ().get("PATH"), Path(proc.cwd()))
    return None


class TreeWatch:
    """While the user's command runs (its processes carry USER_RUN_ENV), find the first of them that
    loaded MindSpore, and its interpreter: `found`, None until then."""

    def __init__(self) -> None:
        self.mark = str(os.getpid())  # what user_run sets USER_RUN_ENV to
        self.found: str | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> TreeWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        while self.found is None and not self._done.wait(WATCH_SECONDS):
            self.found = self.look()

    def look(self) -> str | None:
        """The interpreter of the earliest started process of the run that has MindSpore loaded now."""
        runs = []
        for proc in psutil.process_iter(["create_time"]):
            with contextlib.suppress(psutil.Error):
                if proc.environ().get(USER_RUN_ENV) == self.mark and _loaded_mindspore(proc.pid):
                    runs.append(proc)
        for proc in sorted(runs, key=lambda p: p.info["create_time"]):
            if (path := _interpreter(proc)) is not None:
                return path
        return None


def of_run(
    given_python: RunPython | None, watched: str | None, command: list[str], env: dict[str, str], cwd: Path
) -> tuple[RunPython, str]:
    """The interpreter a run's kernels are rebuilt with (the module's rule), and a line saying so; one found
    that has no MindSpore of its own (PYTHONPATH, an embedded Python) gives way to the next rule."""
    if given_python is not None:
        return given_python, f"rebuilding its kernels with {given_python.said()}"
    passed_over = []
    for path, how in ((watched, WATCHED), (command_python(command, env, cwd), COMMAND)):
        if path is None:
            continue
        try:
            found = _run_python(path, how)
        except EnvironmentBroken:
            passed_over.append(f"{path} ({how}) has no MindSpore of its own")
            continue
        return found, f"rebuilding its kernels with {found.said()}"
    own = ours()
    why = "; ".join(passed_over) or "the run's Python was not found"
    return own, f"rebuilding its kernels with {own.said()}: {why} (--python names it)"
