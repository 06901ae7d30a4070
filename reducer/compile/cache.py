"""The persistent compile cache: what a compiler did with exactly this input (the `.info` text, attrs and
environment it was given), keyed together with the compiler's identity, in one SQLite file shared by
reruns, other cases and the nightly corpus. It stores signatures, not verdicts, so any expectation can
reuse them; results that depend on the machine (timeouts, memory caps) are never stored, nor a check that
failed itself (its reference or our code: no verdict, and the next check may not fail), nor a crash whose
frames no tool read (Signature.final: installing gdb must change the verdict). Each stored signature keeps
what read its frames."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path

from reducer.compile.identity import SIGNATURE_FORMAT, Kind, Signature
from reducer.core.errors import EnvironmentBroken
from reducer.core.files import user_cache_dir

SCHEMA = """
CREATE TABLE IF NOT EXISTS signatures (
    key TEXT PRIMARY KEY,
    signature TEXT NOT NULL,
    seconds REAL NOT NULL
)
"""
NEVER_STORED = (Kind.TIMEOUT, Kind.MEMORY, Kind.ENVIRONMENT, Kind.HARNESS)


def default_cache_path() -> Path:
    """$AKG_REDUCE_CACHE, else $XDG_CACHE_HOME/akg-reduce/compiles.sqlite (~/.cache by default)."""
    if os.environ.get("AKG_REDUCE_CACHE"):
        return Path(os.environ["AKG_REDUCE_CACHE"])
    return user_cache_dir() / "compiles.sqlite"


def compile_key(identity: dict[str, str], compiler_input: dict[str, object]) -> str:
    blob = json.dumps(
        {"compiler": identity, "input": compiler_input, "signature_format": SIGNATURE_FORMAT},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


class CompileCache:
    """Thread-safe; several processes may share the file (SQLite locking, WAL journal)."""

    def __init__(self, path: Path) -> None:
        """EnvironmentBroken, naming the file and the way out, when it cannot be created or written."""
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise EnvironmentBroken(
                f"the compile cache {path} cannot be written ({why}): set AKG_REDUCE_CACHE to a file in a "
                "writable folder, or run with --no-cache"
            ) from None
        self._lock = threading.Lock()

    def get(self, key: str) -> Signature | None:
        with self._lock:
            row = self._db.execute("SELECT signature FROM signatures WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return Signature.from_dict(json.loads(row[0]))

    def put(self, key: str, signature: Signature, seconds: float) -> None:
        if signature.kind in NEVER_STORED or not signature.final:
            return
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO signatures VALUES (?, ?, ?)",
                (key, json.dumps(signature.to_dict()), round(seconds, 3)),
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()
