"""`reduce corpus DIR` against the fake compiler: buckets, statuses and reports; a second night that
compiles nothing; a new compiler rechecks everything; Dask gives the same answers; kill -9 and rerun;
one run per OUT."""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CORPUS, FAKE_COMPILER, layout_in_browser, own_state, write_case

from reducer.nightly.discover import discover

SMALL = [
    {"shape": [4, 3], "dtype": "float32"},
    {"shape": [3, 4], "dtype": "float32"},
    {"shape": [4], "dtype": "float32"},
]
PASSING = [
    {"shape": [2, 2], "dtype": "float32"},
    {"shape": [2, 2], "dtype": "float32"},
    {"shape": [2], "dtype": "float32"},
]


def corpus(root: Path) -> Path:
    """Three cases of one bug (two with identical content, one with other shapes), one that compiles,
    one broken crash.yaml; all share one compiler script."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(FAKE_COMPILER, root / "fake_compiler.py")
    shared = {"compiler": "../fake_compiler.py"}
    write_case(root / "matmul", **shared)
    write_case(root / "matmul_copy", **shared)
    write_case(root / "matmul_small", inputs=SMALL, **shared)
    write_case(root / "passes", inputs=PASSING, **shared)
    (root / "broken").mkdir()
    (root / "broken" / "crash.yaml").write_text(
        "name: broken\nkernel: missing.py\ninputs:\n  - {shape: [2], dtype: float32}\n"
    )
    return root


def night(folder: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "reducer", "corpus", str(folder), "-o", str(out), "-j", "2", *extra]
    return subprocess.run(command, capture_output=True, text=True)


def history(out: Path, run: int) -> dict[str, tuple[str, str, int]]:
    """case -> (action, status, compiles) in run `run`."""
    with contextlib.closing(sqlite3.connect(out / "state.sqlite")) as db:  # closed now, not when collected
        rows = db.execute("SELECT slug, action, status, compiles FROM history WHERE run = ?", (run,))
        return {slug: (action, status, compiles) for slug, action, status, compiles in rows}


def verdict(out: Path) -> tuple[list[tuple[str, tuple[str, ...]]], dict[str, str]]:
    """The report's bugs (status, cases) and each case's status."""
    report = json.loads((out / "report.json").read_text())
    bugs = [(b["status"], tuple(b["cases"])) for b in report["bugs"]]
    return bugs, {c["slug"]: c["status"] for c in report["cases"]}


@pytest.fixture(scope="module")
def first_night(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("corpus")
    with own_state(root):
        done = night(corpus(root / "cases"), root / "out")
    assert done.returncode == 4, done.stderr  # a new bug: a nightly job is told
    assert "new or changed: 3 cases" in done.stdout
    return root / "cases", root / "out"


@pytest.mark.slow
def test_cases_are_bucketed_into_bugs_and_reported(first_night: tuple[Path, Path]) -> None:
    _, out = first_night
    bugs, statuses = verdict(out)
    assert bugs == [("new", ("matmul", "matmul_copy", "matmul_small"))]
    assert statuses == {
        "broken": "broken input",
        "matmul": "new",
        "matmul_copy": "new",
        "matmul_small": "new",
        "passes": "passes",
    }
    report = json.loads((out / "report.json").read_text())
    (bug,) = report["bugs"]
    representative = bug["representative"]
    assert representative["reduced_size"]["tokens"] < representative["original_size"]["tokens"]
    assert (out / representative["bundle"] / "repro.py").is_file()
    runs = history(out, 1)
    assert runs["matmul_copy"][0] == "duplicate" and runs["matmul_copy"][2] == 0  # identical: reduced once
    assert runs["matmul"][0] == runs["matmul_small"][0] == "reduced"
    assert "missing.py" in next(c["error"] for c in report["cases"] if c["slug"] == "broken")
    html = (out / "report.html").read_text()
    assert bug["key"] in html and representative["bundle"] in html
    assert "<polyline" not in html and "the plot starts with the second" in html  # one night: no line to draw
    assert bug["key"] in (out / "report.md").read_text()


def next_night(first_night: tuple[Path, Path], tmp_path: Path, compiler_change: str = "") -> Path:
    """A copy of the first night's corpus and OUT, the copy's compiler script changed, and a night on it."""
    cases, first = first_night
    out, moved = tmp_path / "out", tmp_path / "cases"
    shutil.copytree(first, out)
    shutil.copytree(cases, moved)
    script = moved / "fake_compiler.py"
    if compiler_change == "fix":
        script.write_text(script.read_text().replace('attrs.get("needed", True)', "False"))
    elif compiler_change == "rebuild":
        script.write_text(script.read_text() + "# a new compiler build\n")
    done = night(moved, out)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.slow
def test_unchanged_second_night_compiles_nothing(first_night: tuple[Path, Path], tmp_path: Path) -> None:
    out = next_night(first_night, tmp_path)  # the corpus moved to another folder: still the same cases
    runs = history(out, 2)
    assert all(action in {"skipped", "checked"} and compiles == 0 for action, _, compiles in runs.values())
    bugs, statuses = verdict(out)
    assert bugs == [("reproduces", ("matmul", "matmul_copy", "matmul_small"))]
    assert statuses["passes"] == "passes"
    assert (out / "report.html").read_text().count("<polyline") == 3  # cases, failing cases, compiler bugs
    layout = layout_in_browser(out / "report.html", tmp_path)  # the night's page, as people open it
    assert layout.scroll_width <= layout.inner_width == 1280 and layout.figures == 1 and layout.rows > 3


@pytest.mark.slow
def test_new_compiler_rechecks_every_case(first_night: tuple[Path, Path], tmp_path: Path) -> None:
    out = next_night(first_night, tmp_path, "rebuild")
    runs = history(out, 2)
    for slug in ("matmul", "matmul_small", "passes"):
        action, _, compiles = runs[slug]
        assert action.startswith("rechecked") and compiles >= 1, (slug, runs[slug])
    assert runs["passes"][2] == 1  # one compile: still compiles
    assert runs["matmul"][0] == "rechecked and reduced"  # the bug still reproduces: reduced again
    assert verdict(out)[0] == [("reproduces", ("matmul", "matmul_copy", "matmul_small"))]


@pytest.mark.slow
def test_fixed_bug_is_noticed(first_night: tuple[Path, Path], tmp_path: Path) -> None:
    out = next_night(first_night, tmp_path, "fix")
    bugs, statuses = verdict(out)
    assert bugs == [("fixed", ("matmul", "matmul_copy", "matmul_small"))]
    assert statuses["matmul"] == statuses["matmul_small"] == "fixed"
    assert all(compiles <= 1 for _, _, compiles in history(out, 2).values())


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_night(first_night: tuple[Path, Path], tmp_path: Path) -> None:
    cases, local = first_night
    done = night(cases, tmp_path / "out", "--executor", "dask")
    assert done.returncode == 4, done.stderr
    assert verdict(tmp_path / "out") == verdict(local)
    ours, theirs = (json.loads((o / "report.json").read_text()) for o in (tmp_path / "out", local))
    assert [b["representative"]["reduced_size"] for b in ours["bugs"]] == [
        b["representative"]["reduced_size"] for b in theirs["bugs"]
    ]


@pytest.mark.slow
def test_kill_9_midway_then_rerun_completes_without_redoing(tmp_path: Path) -> None:
    cases = corpus(tmp_path / "cases")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "reducer", "corpus", str(cases), "-o", str(out), "-j", "1"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not any(action == "reduced" for action, _, _ in _safe_history(out).values()):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    reduced_before = {slug for slug, (action, _, _) in _safe_history(out).items() if action == "reduced"}
    done = night(cases, out)
    assert done.returncode == 4, done.stderr  # the unfinished first night's bug is still new
    second = history(out, 2)
    assert set(second) == {"broken", "matmul", "matmul_copy", "matmul_small", "passes"}
    for slug in reduced_before:
        assert second[slug][0] == "skipped" and second[slug][2] == 0
        assert second[slug][1] == "new"  # its first night never finished: still new
    assert verdict(out)[0] == [("new", ("matmul", "matmul_copy", "matmul_small"))]


def _safe_history(out: Path) -> dict[str, tuple[str, str, int]]:
    try:
        return history(out, 1)
    except sqlite3.Error:  # not created yet
        return {}


def test_second_run_on_the_same_out_is_refused(tmp_path: Path) -> None:
    cases = corpus(tmp_path / "cases")
    out = tmp_path / "out"
    out.mkdir()
    with open(out / ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write("4242")
        lock.flush()
        done = night(cases, out)
    assert done.returncode == 2
    assert "another 'reduce corpus' run (pid 4242) is using this folder" in done.stderr
    assert "Traceback" not in done.stderr and not (out / "state.sqlite").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--executor", "ray"], "Invalid value for '--executor': Value error, 'ray' is not one of 'local', 'dask'"),
        (["--scheduler", "tcp://127.0.0.1:1"], "option '--scheduler' needs '--executor dask'"),
    ],
)
def test_bad_options_are_clear_errors(tmp_path: Path, args: list[str], expected: str) -> None:
    cases = corpus(tmp_path / "cases")
    done = night(cases, tmp_path / "out", *args)
    assert done.returncode == 2 and expected in done.stderr and "Traceback" not in done.stderr


def test_missing_corpus_folder(tmp_path: Path) -> None:
    done = night(tmp_path / "nope", tmp_path / "out")
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_a_crash_yaml_and_the_info_it_names_are_one_case(tmp_path: Path) -> None:
    """corpus/pointnet_bn_stats_ssa holds a crash.yaml and the `.info` it names: one case, not two; a
    `.info` beside it that it does not name is a case of its own."""
    folder = tmp_path / "corpus" / "graph"
    shutil.copytree(CORPUS / "pointnet_bn_stats_ssa", folder)
    [info] = folder.glob("*.info")
    shutil.copy(info, folder / "other.info")
    found = discover(tmp_path / "corpus", tmp_path / "out")
    assert sorted(c.slug for c in found) == ["graph", "graph__other"]


@pytest.mark.slow
def test_a_night_stored_under_an_older_signature_format_keeps_its_bugs(
    first_night: tuple[Path, Path], tmp_path: Path
) -> None:
    """After an upgrade of akg-reduce the stored signatures are of an older format (no format mark, a crash
    without frames, the line as the place): the night rechecks every case once and regroups the bugs; the
    bug still there reproduces, it is not 'no longer the same bug'."""
    cases, first = first_night
    out = tmp_path / "out"
    shutil.copytree(first, out)
    with contextlib.closing(sqlite3.connect(out / "state.sqlite")) as db, db:
        for slug, stored in db.execute("SELECT slug, signature FROM cases WHERE signature IS NOT NULL").fetchall():
            old = {k: v for k, v in json.loads(stored).items() if k != "format"}
            old.update(location="fake_tiling.cc:190", frames=["an_older_innermost_frame"])
            db.execute("UPDATE cases SET signature = ?, identity = 'older' WHERE slug = ?", (json.dumps(old), slug))
    done = night(cases, out)
    assert done.returncode == 0, done.stderr
    assert verdict(out)[0] == [("reproduces", ("matmul", "matmul_copy", "matmul_small"))]
