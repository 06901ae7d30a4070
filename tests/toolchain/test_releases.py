"""The toolchain the tool installs for a target its MindSpore has no AKG build for: found once installed,
never half-installed, and a clear error naming what to do by hand when pip cannot install it."""

from __future__ import annotations

import fcntl
import json
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import wait_until

from reducer.core.errors import EnvironmentBroken
from reducer.core.targets import AICORE, Release
from reducer.toolchain import releases
from reducer.toolchain.releases import READY

# No such MindSpore release exists: pip fails the way it does without a network or an index that has it.
MISSING = Release("0.0.0.dev9", "ascend", (3, 11))


@pytest.fixture
def own_toolchains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AKG_REDUCE_TOOLCHAINS", str(tmp_path / "toolchains"))
    return tmp_path / "toolchains"


@pytest.mark.timeout(300)
def test_a_release_pip_cannot_install_is_a_clear_error_and_leaves_nothing_ready(
    own_toolchains: Path,
) -> None:
    """An environment error, one line; and tried once: the next case of a night (another process) is told at
    once why, with no second install."""
    unreleased = replace(AICORE, toolchain=MISSING)
    with pytest.raises(EnvironmentBroken) as caught:
        releases.ensure(unreleased, say=False)
    said = str(caught.value)
    assert said.startswith("field 'target': aicore needs AKG's ascend build, and installing MindSpore 0.0.0.dev9")
    assert "(`pip install mindspore==0.0.0.dev9 decorator` into a Python 3.11 venv)" in said and "set python:" in said
    assert releases.installed(unreleased) is None
    assert not (own_toolchains / "mindspore-0.0.0.dev9" / READY).exists()
    left = own_toolchains / "mindspore-0.0.0.dev9" / "left"
    left.write_text("")  # an install that started again would remove it
    with pytest.raises(EnvironmentBroken) as again:
        releases.ensure(unreleased, say=False)
    assert str(again.value).startswith(said) and "(tried 0 min ago; tried again after 60 min" in str(again.value)
    assert left.exists()


def test_an_unwritable_toolchain_folder_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AKG_REDUCE_TOOLCHAINS", "/proc/version/toolchains")  # under a file: not even root writes
    with pytest.raises(EnvironmentBroken, match=r"^the toolchain folder /proc/version/toolchains cannot be written"):
        releases.ensure(replace(AICORE, toolchain=MISSING), say=False)


def test_a_second_installer_says_it_waits_for_the_first(own_toolchains: Path, capsys: pytest.CaptureFixture) -> None:
    """It says so, then finds what the first installed."""
    unreleased = replace(AICORE, toolchain=MISSING)
    own_toolchains.mkdir()
    found: list[str] = []
    with (own_toolchains / ".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        waiter = threading.Thread(target=lambda: found.append(releases.ensure(unreleased, say=False)))
        waiter.start()
        wait_until(lambda: "waiting for it" in capsys.readouterr().err, 30, "the waiter says it waits")
        venv = releases.venv_of(MISSING)  # the first installer finishes
        (venv / "bin").mkdir(parents=True)
        (venv / "bin" / "python").write_text("")
        (venv / READY).write_text("{}")
        fcntl.flock(held, fcntl.LOCK_UN)
    waiter.join(30)
    assert found == [str(venv / "bin" / "python")]


def test_a_venv_without_its_ready_mark_is_not_installed(own_toolchains: Path) -> None:
    """An install that was interrupted (the mark is written last) is redone, not used."""
    venv = releases.venv_of(AICORE.toolchain)
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    assert releases.installed(AICORE) is None
    (venv / READY).write_text(json.dumps({"mindspore": "2.7.2", "target": "aicore"}))
    assert releases.installed(AICORE) == str(venv / "bin" / "python")


def test_the_toolchains_live_in_the_cache_unless_told(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("AKG_REDUCE_TOOLCHAINS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert releases.toolchains_dir() == tmp_path / "akg-reduce" / "toolchains"
    assert releases.venv_of(AICORE.toolchain).name == "mindspore-2.7.2"
