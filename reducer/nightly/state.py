"""The corpus state: one SQLite file in OUT, written by the coordinator only. Per case its latest record
(content hash, compiler identity, status, signature, sizes, bundle, timings); per run its start and end;
per run and case what happened (the history the report plots)."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, started REAL NOT NULL, finished REAL, executor TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cases (
    slug TEXT PRIMARY KEY, path TEXT NOT NULL, content_hash TEXT NOT NULL, identity TEXT NOT NULL,
    status TEXT NOT NULL, signature TEXT, bug TEXT, error TEXT NOT NULL, original_size TEXT,
    reduced_size TEXT, bundle TEXT, compiles INTEGER NOT NULL, seconds REAL NOT NULL,
    first_run INTEGER NOT NULL, run INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS history (
    run INTEGER NOT NULL, slug TEXT NOT NULL, action TEXT NOT NULL, status TEXT NOT NULL, bug TEXT,
    compiles INTEGER NOT NULL, seconds REAL NOT NULL, PRIMARY KEY (run, slug));
"""
_JSON_FIELDS = ("signature", "original_size", "reduced_size")


@dataclass
class CaseRecord:
    """The latest we know of one case."""

    slug: str
    path: str
    content_hash: str
    identity: str  # hash of the compiler identity the case was last checked with
    status: str
    signature: dict[str, Any] | None
    bug: str | None  # the bucket: a hash of the signature
    error: str
    original_size: dict[str, int] | None
    reduced_size: dict[str, int] | None
    bundle: str | None  # relative to OUT
    compiles: int
    seconds: float
    first_run: int
    run: int


@dataclass(frozen=True)
class RunRecord:
    id: int
    started: float
    finished: float | None
    executor: str


class CorpusState:
    """Open (or create) OUT/state.sqlite; every write is committed at once, so a killed run loses nothing."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(SCHEMA)

    def start_run(self, executor: str) -> int:
        cursor = self.db.execute("INSERT INTO runs (started, executor) VALUES (?, ?)", (time.time(), executor))
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def finish_run(self, run: int) -> None:
        self.db.execute("UPDATE runs SET finished = ? WHERE id = ?", (time.time(), run))

    def runs(self) -> list[RunRecord]:
        return [RunRecord(*row) for row in self.db.execute("SELECT * FROM runs ORDER BY id")]

    def run_finished(self, run: int) -> bool:
        row = self.db.execute("SELECT finished FROM runs WHERE id = ?", (run,)).fetchone()
        return bool(row and row[0] is not None)

    def case(self, slug: str) -> CaseRecord | None:
        cursor = self.db.execute("SELECT * FROM cases WHERE slug = ?", (slug,))
        row = cursor.fetchone()
        return _record(row) if row else None

    def last_status(self, slug: str, besides: tuple[str, ...]) -> str | None:
        """The case's status of the latest night that gave one other than `besides` (statuses that decided
        nothing of the kernel: a night that could not tell is not the one a later night is compared with)."""
        marks = ", ".join("?" * len(besides))
        row = self.db.execute(
            f"SELECT status FROM history WHERE slug = ? AND status NOT IN ({marks}) ORDER BY run DESC LIMIT 1",
            (slug, *besides),
        ).fetchone()
        return row[0] if row else None

    def save(self, record: CaseRecord, action: str) -> None:
        """The case's new record and this run's history row, in one transaction."""
        values = asdict(record)
        for name in _JSON_FIELDS:
            values[name] = json.dumps(values[name]) if values[name] is not None else None
        columns = [f.name for f in fields(CaseRecord)]
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute(
                f"INSERT OR REPLACE INTO cases ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                [values[c] for c in columns],
            )
            self.db.execute(
                "INSERT OR REPLACE INTO history VALUES (?, ?, ?, ?, ?, ?, ?)",
                (record.run, record.slug, action, record.status, record.bug, record.compiles, record.seconds),
            )

    def history(self) -> list[dict[str, Any]]:
        cursor = self.db.execute("SELECT run, slug, action, status, bug, compiles, seconds FROM history ORDER BY run")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    def close(self) -> None:
        self.db.close()


def _record(row: tuple[Any, ...]) -> CaseRecord:
    values = dict(zip([f.name for f in fields(CaseRecord)], row, strict=True))
    for name in _JSON_FIELDS:
        values[name] = json.loads(values[name]) if values[name] is not None else None
    return CaseRecord(**values)
