"""The night's reports in OUT: report.json (everything, for machines), report.md and report.html (Jinja2,
one page: the bugs with status, sizes before/after and links to their bundles, the cases, and a plot of
the corpus over the nights)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from reducer.core.files import write_atomic
from reducer.core.templates import templates
from reducer.diagnosis.triage import COMPILER_BUG, ENVIRONMENT, USAGE_ERROR
from reducer.nightly.buckets import Bug, buckets, verdict_of
from reducer.nightly.job import FAILING
from reducer.nightly.state import CorpusState

PLOT_WIDTH, PLOT_HEIGHT = 640, 180
VERDICTS = {
    COMPILER_BUG: "Compiler bugs",
    USAGE_ERROR: "Usage errors (not AKG bugs: the input is wrong)",
    ENVIRONMENT: "Environment problems (not AKG bugs: something is missing on the machine)",
}


def _nights(state: CorpusState, verdicts: dict[str, str]) -> list[dict[str, Any]]:
    """Per run: cases seen, failing cases, distinct compiler bugs failing (`verdicts`: bug -> verdict; a bug
    not in it counts as a compiler bug), other distinct failures, compiles spent."""
    per_run: dict[int, dict[str, Any]] = {
        r.id: {
            "run": r.id,
            "started": r.started,
            "finished": r.finished,
            "cases": 0,
            "failing": 0,
            "bugs": set(),
            "not_bugs": set(),
            "compiles": 0,
        }
        for r in state.runs()
    }
    for row in state.history():
        night = per_run[row["run"]]
        night["cases"] += 1
        night["compiles"] += row["compiles"]
        if row["status"] in FAILING:
            night["failing"] += 1
            is_bug = verdicts.get(row["bug"], COMPILER_BUG) == COMPILER_BUG
            night["bugs" if is_bug else "not_bugs"].add(row["bug"])
    return [{**n, "bugs": len(n["bugs"]), "not_bugs": len(n["not_bugs"])} for n in per_run.values() if n["cases"]]


def _bug_data(bug: Bug) -> dict[str, Any]:
    return {
        "key": bug.key,
        "status": bug.status,
        "verdict": bug.verdict,
        "signature": bug.signature,
        "cases": [c.slug for c in bug.cases],
        "representative": asdict(bug.representative),
    }


def _plot(nights: list[dict[str, Any]]) -> dict[str, Any]:
    """Polylines (SVG coordinates) of cases, failing cases and bugs per night."""
    top = max([n["cases"] for n in nights] + [1])
    step = PLOT_WIDTH / max(len(nights) - 1, 1)

    def line(key: str) -> str:
        return " ".join(f"{i * step:.1f},{PLOT_HEIGHT - n[key] / top * PLOT_HEIGHT:.1f}" for i, n in enumerate(nights))

    return {
        "width": PLOT_WIDTH,
        "height": PLOT_HEIGHT,
        "top": top,
        "lines": {k: line(k) for k in ("cases", "failing", "bugs")},
    }


def report_data(state: CorpusState, slugs: list[str], run: int) -> dict[str, Any]:
    records = [r for r in (state.case(s) for s in slugs) if r is not None]
    bugs = [_bug_data(b) for b in buckets(records)]
    nights = _nights(state, {r.bug: verdict_of(r.signature) for r in records if r.bug})
    return {
        "run": run,
        "generated": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "bugs": bugs,
        "groups": [
            {"verdict": verdict, "title": title, "bugs": [b for b in bugs if b["verdict"] == verdict]}
            for verdict, title in VERDICTS.items()
        ],
        "cases": [asdict(r) for r in records],
        "nights": nights,
        "plot": _plot(nights),
    }


def write_reports(out: Path, state: CorpusState, slugs: list[str], run: int) -> list[Path]:
    data = report_data(state, slugs, run)
    env = templates("reducer.nightly")
    written = {
        out / "report.json": json.dumps(data, indent=2, default=str) + "\n",
        out / "report.md": env.get_template("report.md.j2").render(**data),
        out / "report.html": env.get_template("report.html.j2").render(**data),
    }
    for path, text in written.items():
        write_atomic(path, text)
    return list(written)
