"""Atomic writes: a reader sees the old file or the new one, never half of one, and nothing is left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from reducer.core import files
from reducer.core.files import json_digest, write_atomic


def test_write_atomic_replaces_the_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "report.json"
    write_atomic(target, "old")
    write_atomic(target, b"new")
    assert target.read_text() == "new" and sorted(p.name for p in target.parent.iterdir()) == ["report.json"]
    assert target.stat().st_mode & 0o777 == 0o644


def test_a_failed_write_keeps_the_old_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "checkpoint.json"
    write_atomic(target, "whole", mode=0o600)

    def disk_full(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", disk_full)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, "half")
    assert target.read_text() == "whole" and [p.name for p in tmp_path.iterdir()] == ["checkpoint.json"]
    assert target.stat().st_mode & 0o777 == 0o600


def test_json_digest_does_not_depend_on_key_order() -> None:
    assert json_digest({"a": 1, "b": [2]}) == json_digest({"b": [2], "a": 1}) != json_digest({"a": 1})
