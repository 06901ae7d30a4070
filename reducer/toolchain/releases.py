"""Toolchains the tool installs itself: a target whose AKG build the running MindSpore does not ship gets a
MindSpore release whose wheel does, in a venv of its own in the tool's cache, installed once (with pip's
progress shown) and reused by every later run, warm worker and process. Today that is aicore: the MindSpore
2.7.x CPU wheels ship AKG's Ascend build (lib/plugin/ascend/libakg.so), which runs AKG's whole Ascend
pipeline on any machine and stops at CCE code generation, which needs CANN; later wheels do not ship it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from reducer.core.errors import EnvironmentBroken
from reducer.core.files import user_cache_dir, write_atomic
from reducer.core.targets import Release, Target

READY = "akg-reduce-toolchain.json"  # written last: a venv without it is an install that did not finish
INSTALL_SECONDS = 1800
# An install that failed is not tried again for this long, by any process on this machine: a night over a
# corpus with many aicore cases tries once, and says why for each case.
RETRY_SECONDS = 3600


def toolchains_dir() -> Path:
    """$AKG_REDUCE_TOOLCHAINS, else $XDG_CACHE_HOME/akg-reduce/toolchains (~/.cache by default)."""
    if os.environ.get("AKG_REDUCE_TOOLCHAINS"):
        return Path(os.environ["AKG_REDUCE_TOOLCHAINS"])
    return user_cache_dir() / "toolchains"


def venv_of(release: Release) -> Path:
    return toolchains_dir() / f"mindspore-{release.mindspore}"


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _release(target: Target) -> Release:
    assert target.toolchain is not None, f"{target.name} has no toolchain"
    return target.toolchain


def installed(target: Target) -> str | None:
    """The interpreter of the toolchain installed for `target`, or None when it is not (or not fully)."""
    venv = venv_of(_release(target))
    return str(_python(venv)) if (venv / READY).is_file() and _python(venv).is_file() else None


def _failure_mark(release: Release) -> Path:
    return toolchains_dir() / f"mindspore-{release.mindspore}.failed"


def _recent_failure(release: Release) -> str | None:
    """Why installing `release` failed, when it did less than RETRY_SECONDS ago."""
    mark = _failure_mark(release)
    try:
        age = time.time() - mark.stat().st_mtime
        said = mark.read_text(encoding="utf-8")
    except OSError:
        return None
    if age >= RETRY_SECONDS:
        return None
    retry = f"tried again after {RETRY_SECONDS // 60} min, or once {mark} is deleted"
    return f"{said} (tried {age / 60:.0f} min ago; {retry})"


@contextlib.contextmanager
def _locked(folder: Path, waiting: str) -> Iterator[None]:
    """One installer at a time: a second process says `waiting`, waits for the first and then finds its
    result."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = (folder / ".lock").open("w")
    except OSError as exc:
        raise EnvironmentBroken(
            f"the toolchain folder {folder} cannot be written ({exc.strerror}): set AKG_REDUCE_TOOLCHAINS to a "
            "writable folder"
        ) from None
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"akg-reduce: {waiting}", file=sys.stderr, flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _base_python(release: Release) -> str:
    if sys.version_info[:2] == release.python:
        return sys.executable
    wanted = f"python{release.python[0]}.{release.python[1]}"
    found = shutil.which(wanted)
    if found is None:
        raise EnvironmentBroken(
            f"field 'target': MindSpore {release.mindspore}'s wheels need {wanted}, which this machine lacks; "
            f"install it, or set python: to an interpreter with MindSpore {release.mindspore}"
        )
    return found


def _failed(target: Target, release: Release, venv: Path, said: str) -> EnvironmentBroken:
    """The error of a failed install, remembered (see RETRY_SECONDS)."""
    message = (
        f"field 'target': {target.name} needs AKG's {release.build} build, and installing MindSpore "
        f"{release.mindspore} (the last wheel that ships it) into {venv} failed: {said}. Install it by hand "
        f"({release.by_hand}) and set python: to that venv's interpreter"
    )
    with contextlib.suppress(OSError):
        write_atomic(_failure_mark(release), message)
    return EnvironmentBroken(message)


def ensure(target: Target, say: bool = True) -> str:
    """The interpreter of `target`'s toolchain, installed first if needed (pip's progress on stderr when
    `say`). EnvironmentBroken, naming what to do by hand, when it cannot be installed, or failed to be
    within the last RETRY_SECONDS."""
    if (python := installed(target)) is not None:
        return python
    release = _release(target)
    venv = venv_of(release)
    if (failure := _recent_failure(release)) is not None:
        raise EnvironmentBroken(failure)
    waiting = f"another akg-reduce is installing MindSpore {release.mindspore} into {venv}; waiting for it"
    with _locked(venv.parent, waiting):
        if (python := installed(target)) is not None:  # another process installed it while this one waited
            return python
        if (failure := _recent_failure(release)) is not None:  # or failed to
            raise EnvironmentBroken(failure)
        shutil.rmtree(venv, ignore_errors=True)  # what an interrupted install left
        if say:
            print(
                f"akg-reduce: target {target.name} needs AKG's {release.build} build: installing MindSpore "
                f"{release.mindspore} (about 2.7 GB, a few minutes, once) into {venv}",
                file=sys.stderr,
                flush=True,
            )
        quiet = [] if say else ["--quiet"]
        steps = [
            [_base_python(release), "-m", "venv", str(venv)],
            [str(_python(venv)), "-m", "pip", "install", *quiet, "--disable-pip-version-check", *release.requirements],
        ]
        for step in steps:
            try:
                run = subprocess.run(
                    step,
                    stdout=sys.stderr if say else subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                    timeout=INSTALL_SECONDS,
                    check=False,
                )
            except (OSError, subprocess.SubprocessError) as exc:
                raise _failed(target, release, venv, str(exc)) from None
            if run.returncode != 0:
                last = (run.stdout or "").strip().splitlines()[-1:] or [f"exit code {run.returncode}"]
                raise _failed(target, release, venv, last[0])
        library = _shipped_library(venv, release)
        if library is None:
            raise _failed(target, release, venv, f"its wheel has no lib/plugin/{release.build}/libakg.so")
        write_atomic(venv / READY, json.dumps({"mindspore": release.mindspore, "target": target.name}))
        _failure_mark(release).unlink(missing_ok=True)
    if say:
        print(f"akg-reduce: MindSpore {release.mindspore} with AKG's {release.build} build is ready", file=sys.stderr)
    return str(_python(venv))


def _shipped_library(venv: Path, release: Release) -> Path | None:
    found = sorted(venv.glob(f"lib/python*/site-packages/mindspore/lib/plugin/{release.build}/libakg.so"))
    return found[0] if found else None
