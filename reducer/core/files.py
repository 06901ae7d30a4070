"""Writing files so a reader never sees half of one, the digest of a JSON value that keys caches and
names things, and where the tool keeps what it caches for the user."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path


def json_digest(value: object) -> str:
    """sha256 (hex) of `value` as canonical JSON: keys sorted, anything not JSON as its str()."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def write_atomic(path: Path, data: str | bytes, mode: int = 0o644) -> None:
    """Write `path` through a temp file in its folder and a rename: it holds the old or the new content."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def user_cache_dir() -> Path:
    """$XDG_CACHE_HOME/akg-reduce (~/.cache by default): the compile cache and the installed toolchains."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "akg-reduce"
