"""The toolchain the tool installs for a target its MindSpore has no AKG build for: found once installed,
never half-installed, and a clear error naming what to do by hand when pip cannot install it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from reducer.core.errors import InputError
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
    unreleased = replace(AICORE, toolchain=MISSING)
    with pytest.raises(InputError) as caught:
        releases.ensure(unreleased, say=False)
    said = str(caught.value)
    assert said.startswith("field 'target': aicore needs AKG's ascend build, and installing MindSpore 0.0.0.dev9")
    assert "(`pip install mindspore==0.0.0.dev9 decorator` into a Python 3.11 venv)" in said and "set python:" in said
    assert releases.installed(unreleased) is None
    assert not (own_toolchains / "mindspore-0.0.0.dev9" / READY).exists()


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
