"""The night's report groups bugs by triage verdict, and only compiler bugs count in the plot's "bugs"
line; a bug never triaged counts as a compiler bug."""

from __future__ import annotations

from pathlib import Path

from reducer.nightly.report import report_data, write_reports
from reducer.nightly.state import CaseRecord, CorpusState


def record(slug: str, bug: str, verdict: str | None, run: int) -> CaseRecord:
    signature = {"kind": "error", "message": f"message of {bug}", "location": "x.cc:1", "frames": [], "raw": ""}
    if verdict:
        signature["verdict"] = verdict
    size = {"tokens": 10, "volume": 4}
    return CaseRecord(slug, f"{slug}/crash.yaml", "h", "i", "new", signature, bug, "", size, size,
                      None, 3, 1.0, run, run)  # fmt: skip


def test_bugs_are_grouped_by_verdict_and_only_compiler_bugs_are_counted(tmp_path: Path) -> None:
    state = CorpusState(tmp_path / "state.sqlite")
    run = state.start_run("local")
    cases = [
        record("tiling", "b1", "compiler-bug", run),
        record("old", "b2", None, run),
        record("dim_list", "u1", "usage-error", run),
        record("auto_tune", "e1", "environment", run),
    ]
    for case in cases:
        state.save(case, "reduced")
    state.finish_run(run)
    data = report_data(state, [c.slug for c in cases], run)
    groups = {g["verdict"]: [b["key"] for b in g["bugs"]] for g in data["groups"]}
    assert groups == {"compiler-bug": ["b1", "b2"], "usage-error": ["u1"], "environment": ["e1"]}
    [night] = data["nights"]
    assert (night["bugs"], night["not_bugs"], night["failing"]) == (2, 2, 4)
    write_reports(tmp_path, state, [c.slug for c in cases], run)
    page = (tmp_path / "report.md").read_text()
    assert "2 compiler-bug, 1 usage-error, 1 environment in 4 cases" in page
    assert page.index("## Compiler bugs") < page.index("## Usage errors") < page.index("## Environment problems")
    html = (tmp_path / "report.html").read_text()
    assert "<h2>Usage errors" in html
    assert "<svg" not in html and "the plot starts with the second" in html  # one point draws no line
    assert "| 10 → 10 |" in page and "| - | 10 → 10 |" in page  # a Hybrid DSL kernel has no ops column value
    state.close()
