"""Cases into bugs: cases whose minimal signature is equal are one bug, represented by its smallest
reduced case; a bug's status is the liveliest of its cases' statuses."""

from __future__ import annotations

from dataclasses import dataclass

from reducer.diagnosis.triage import COMPILER_BUG
from reducer.nightly.job import CHANGED, FIXED, FLAKY, NEW, REPRODUCES
from reducer.nightly.state import CaseRecord

# A bug with any reproducing case reproduces; one whose only live cases are new is new; ...
STATUS_ORDER = [REPRODUCES, NEW, CHANGED, FLAKY, FIXED]


@dataclass(frozen=True)
class Bug:
    """One bug: its signature's key and status, its cases, and the smallest reduced one of them."""

    key: str
    signature: dict
    status: str
    cases: tuple[CaseRecord, ...]
    representative: CaseRecord

    @property
    def verdict(self) -> str:
        """compiler-bug, usage-error or environment, as the reduction's triage said (compiler-bug when a
        case was never triaged)."""
        return verdict_of(self.signature)


def verdict_of(signature: dict | None) -> str:
    return (signature or {}).get("verdict") or COMPILER_BUG


def _smallest(case: CaseRecord) -> tuple[int, ...]:
    size = case.reduced_size or case.original_size or {}
    return (case.reduced_size is None, size.get("ops", 1), size.get("tokens", 0), size.get("volume", 0))


def buckets(records: list[CaseRecord]) -> list[Bug]:
    """The bugs among `records`, new and reproducing first, then by number of cases."""
    groups: dict[str, list[CaseRecord]] = {}
    for record in records:
        if record.bug and record.status in STATUS_ORDER:
            groups.setdefault(record.bug, []).append(record)
    bugs = []
    for key, cases in groups.items():
        status = min((c.status for c in cases), key=STATUS_ORDER.index)
        best = min(cases, key=_smallest)
        signature = best.signature or {}
        bugs.append(Bug(key, signature, status, tuple(sorted(cases, key=lambda c: c.slug)), best))
    return sorted(bugs, key=lambda b: (STATUS_ORDER.index(b.status), -len(b.cases), b.key))
