"""End-to-end reductions against the fake compiler: same bug kept, sizes down, bundle complete, attrs that
matter kept, -j 2 equals -j 1, resume after an interruption."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import own_state, write_case

from reducer import session
from reducer.compile import hang_stack
from reducer.compile.identity import Signature, matches
from reducer.compile.signature import hang_signature
from reducer.core.case import Expectation
from reducer.core.errors import Unplaced
from reducer.inputs.crash_yaml import load_case
from reducer.kernels.kinds import size_of
from reducer.search.oracle import Oracle
from reducer.session import CONFIRM_RUNS, PROBE_RUNS, Settings, reduce_case

BUNDLE_FILES = {
    "ISSUE.md",
    "README.md",
    "repro.py",
    "kernel.py",
    "kernel.info",
    "crash.yaml",
    "compile.log",
    "env.json",
    "reduction.json",
    "original/crash.yaml",
    "original/kernel.py",
}


def _reduce(crash: Path, out: Path, jobs: int = 1, **settings: object) -> tuple[Path, dict]:
    files = {"crash.yaml": crash.read_text(), "kernel.py": (crash.parent / "kernel.py").read_text()}
    return reduce_case(load_case(crash), files, out, Settings(jobs=jobs, **settings))


@dataclass(frozen=True)
class Reduced:
    crash: Path  # the case reduced
    bundle: Path
    stats: dict
    before: dict[str, bytes]  # the case's folder before the reduction
    after: dict[str, bytes]  # and after it


@pytest.fixture(scope="session")
def fake_reduction(tmp_path_factory: pytest.TempPathFactory) -> Reduced:
    """The matmul fake case reduced once with the defaults (-j 1, warm, diagnosis, no persistent cache), for
    the tests that read that reduction or compare another with it. Its tests carry
    `xdist_group("fake_reduction")`."""
    root = tmp_path_factory.mktemp("fake-reduction")
    crash = write_case(root / "matmul_bias")
    with own_state(root):
        before = {p.name: p.read_bytes() for p in crash.parent.iterdir()}
        bundle, stats = _reduce(crash, root / "out")
        after = {p.name: p.read_bytes() for p in crash.parent.iterdir()}
    return Reduced(crash, bundle, stats, before, after)


@pytest.mark.xdist_group("fake_reduction")
def test_reduction_keeps_the_bug_and_shrinks_everything(fake_reduction: Reduced) -> None:
    bundle, stats = fake_reduction.bundle, fake_reduction.stats
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert reduction["signature"]["location"] == "fake_tiling.cc:193"
    assert reduction["signature"]["message"].startswith("Check failed: gemm_m.size() <= FormatM.size()")
    assert reduction["reduced"]["tokens"] < 0.5 * reduction["original"]["tokens"]
    # bias is not needed; a is read only for its dtype, which becomes a literal; b carries the dim >= 3
    assert reduction["reduced"]["inputs"] == 1
    assert "def matmul_bias(b):" in (bundle / "kernel.py").read_text()
    assert reduction["reduced"]["attrs"] == 0 and reduction["reduced"]["env"] == 0
    reduced = load_case(bundle / "crash.yaml")
    assert max(d for t in reduced.inputs for d in t.shape) == 3  # the fake needs a dim >= 3
    assert stats["compiles"] > 0 and stats["invalid"] > 0
    assert {str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file()} >= BUNDLE_FILES
    assert (bundle.parent / f"{bundle.name}.tar.gz").is_file()
    edits = reduction["edits"]  # how the case shrank, in order: each accepted edit and the size after it
    assert {e["pass"] for e in edits} >= {"statements", "dims", "attrs"}
    assert edits[-1]["size"] == f"{reduction['reduced']['tokens']} tokens, volume {reduction['reduced']['volume']}"
    assert any(e["pass"] == "attrs" and e["edit"].startswith("delete ") for e in edits)


def _without_statement(source: str, index: int) -> str | None:
    """`source` with its `index`-th statement (in walk order, any block level) deleted; None past the last.
    A block left empty gets `pass`, so the candidate is still Python."""
    tree = ast.parse(source)
    func = tree.body[0]
    assert isinstance(func, ast.FunctionDef)
    blocks = [n for n in ast.walk(func) if hasattr(n, "body") and isinstance(n.body, list)]
    slots = [(block, i) for block in blocks for i in range(len(block.body))]
    if index >= len(slots):
        return None
    block, i = slots[index]
    del block.body[i]
    if not block.body:
        block.body.append(ast.Pass())
    return ast.unparse(tree)


@pytest.mark.xdist_group("fake_reduction")
def test_reduced_kernel_is_one_minimal(fake_reduction: Reduced) -> None:
    """Deleting any single statement of the result loses the failure."""
    compiler = load_case(fake_reduction.crash).compiler
    reduced = load_case(fake_reduction.bundle / "crash.yaml").with_(compiler=compiler)  # as reduced
    expect = Expectation("error", "Check failed: gemm_m.size() <= FormatM.size()", "fake_tiling.cc:193")
    deletions = []
    with Oracle(expect) as oracle:
        assert oracle.interesting(reduced)
        index = 0
        while (source := _without_statement(reduced.source, index)) is not None:
            deletions.append(source)
            assert not oracle.interesting(reduced.with_(source=source)), source
            index += 1
    assert len(deletions) >= 3  # the output, the loops, the store: each is needed


def test_attrs_the_failure_does_not_need_are_removed(tmp_path: Path) -> None:
    """`needed: true` is the fake's default, so deleting it keeps the failure: it goes, like the other."""
    crash = write_case(tmp_path / "needs_attr", attrs={"needed": True, "enable_auto_inline": False})
    bundle, _ = _reduce(crash, tmp_path / "out")
    assert load_case(bundle / "crash.yaml").attrs == {}


def test_an_attr_the_failure_needs_is_kept(tmp_path: Path) -> None:
    """With a compiler whose default is `needed: false`, the failure needs the attr: it stays, alone."""
    crash = write_case(tmp_path / "needs_attr", attrs={"needed": True, "other": 1})
    compiler = crash.parent / "fake_compiler.py"
    text = compiler.read_text()
    assert 'attrs.get("needed", True)' in text
    compiler.write_text(text.replace('attrs.get("needed", True)', 'attrs.get("needed", False)'))
    bundle, _ = _reduce(crash, tmp_path / "out")
    assert load_case(bundle / "crash.yaml").attrs == {"needed": True}


def test_reduction_never_ends_on_another_bug(tmp_path: Path) -> None:
    """With the "trap" attr a kernel without multiplication fails too, differently; never accepted."""
    crash = write_case(tmp_path / "trap", attrs={"trap": 1})
    bundle, _ = _reduce(crash, tmp_path / "out")
    reduced = (bundle / "kernel.py").read_text()
    assert "*" in reduced
    assert json.loads((bundle / "reduction.json").read_text())["signature"]["location"] == "fake_tiling.cc:193"


@pytest.mark.xdist_group("fake_reduction")
def test_parallel_result_equals_sequential(fake_reduction: Reduced, tmp_path: Path) -> None:
    one = fake_reduction.bundle  # -j 1
    two, _ = _reduce(fake_reduction.crash, tmp_path / "j2", jobs=2)
    assert (one / "kernel.py").read_text() == (two / "kernel.py").read_text()
    assert yaml.safe_load((one / "crash.yaml").read_text()) == yaml.safe_load((two / "crash.yaml").read_text())


@pytest.mark.slow
@pytest.mark.xdist_group("fake_reduction")
def test_cold_and_warm_reductions_agree(fake_reduction: Reduced, tmp_path: Path) -> None:
    warm, warm_stats = fake_reduction.bundle, fake_reduction.stats
    cold, cold_stats = _reduce(fake_reduction.crash, tmp_path / "cold", cold=True)
    assert (warm / "kernel.py").read_text() == (cold / "kernel.py").read_text()
    assert warm_stats["compiles"] == cold_stats["compiles"] and warm_stats["warm"] and not cold_stats["warm"]


@pytest.mark.slow
def test_a_rerun_is_answered_by_the_persistent_cache_until_the_compiler_changes(
    fake_case: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache.sqlite"
    first, first_stats = _reduce(fake_case, tmp_path / "first", cache=cache)
    again, again_stats = _reduce(fake_case, tmp_path / "again", cache=cache)
    assert (again / "kernel.py").read_text() == (first / "kernel.py").read_text()
    # only the probes of the original, the confirmation runs and the IR dump compile; the search, nothing
    not_cached = PROBE_RUNS + CONFIRM_RUNS + 1
    assert again_stats["compiles"] == not_cached < first_stats["compiles"]
    assert again_stats["stored_hits"] == first_stats["compiles"] - not_cached
    compiler = fake_case.parent / "fake_compiler.py"
    compiler.write_text(compiler.read_text() + "# a new compiler build\n")
    _, changed_stats = _reduce(fake_case, tmp_path / "changed", cache=cache)
    assert changed_stats["compiles"] == first_stats["compiles"] and changed_stats["stored_hits"] == 0


@pytest.mark.slow
def test_a_hanging_candidate_is_cut_by_the_adaptive_timeout(tmp_path: Path, monkeypatch) -> None:
    """No timeout given: the search gives each compile 10 x the original's (floor lowered to 1 s here);
    candidates without the attr `dim` hang and are cut, so `dim` stays; the bundle keeps no timeout."""
    monkeypatch.setattr(session, "TIMEOUT_FLOOR", 1.0)
    monkeypatch.setenv("FAKE_COMPILER_HANG_WITHOUT", "dim")
    crash = write_case(tmp_path / "hangs", timeout=None)
    bundle, stats = _reduce(crash, tmp_path / "out", jobs=2)
    assert stats["search_timeout"] == 1.0
    reduced = yaml.safe_load((bundle / "crash.yaml").read_text())
    assert "dim" in reduced["attrs"] and "timeout" not in reduced


@pytest.mark.xdist_group("fake_reduction")
def test_interrupted_run_resumes_from_checkpoint(
    fake_case: Path, fake_reduction: Reduced, tmp_path: Path, monkeypatch
) -> None:
    from reducer.search import reduction as search

    out = tmp_path / "out"
    calls = {"n": 0}
    real_accept = search.Reduction._accept

    def accept_then_interrupt(self, name, case):
        real_accept(self, name, case)
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(search.Reduction, "_accept", accept_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        _reduce(fake_case, out)
    checkpoint = json.loads(next((out / ".akg-reduce-state").glob("*.json")).read_text())
    saved_volume = sum(len(t["shape"]) for t in checkpoint["best"]["inputs"])
    assert checkpoint["best"] != load_case(fake_case).content() and saved_volume > 0
    monkeypatch.setattr(search.Reduction, "_accept", real_accept)
    assert len(checkpoint["edits"]) == 3
    bundle, stats = _reduce(fake_case, out)
    assert stats["resumed"] is True
    assert json.loads((bundle / "reduction.json").read_text())["edits"][:3] == checkpoint["edits"]
    assert (bundle / "kernel.py").read_text() == (fake_reduction.bundle / "kernel.py").read_text()  # uninterrupted


@pytest.mark.xdist_group("fake_reduction")
def test_original_is_left_untouched(fake_reduction: Reduced) -> None:
    assert fake_reduction.after == fake_reduction.before


def test_cli_reduce_and_check_round_trip(fake_case: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "reducer", str(fake_case), "-o", str(out), "-j", "1"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "bundle:" in run.stdout
    bundle = out / "matmul_bias"
    # the minimal crash.yaml replays with the same compiler
    (bundle / "fake_compiler.py").write_text((fake_case.parent / "fake_compiler.py").read_text())
    data = yaml.safe_load((bundle / "crash.yaml").read_text())
    data["compiler"] = "fake_compiler.py"
    (bundle / "crash.yaml").write_text(yaml.safe_dump(data))
    check = subprocess.run(
        [sys.executable, "-m", "reducer", "check", str(bundle / "crash.yaml")], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
    assert "gemm_m.size() <= FormatM.size()" in check.stdout and "fake_tiling.cc:193" in check.stdout
    assert size_of(load_case(bundle / "crash.yaml")).tokens < size_of(load_case(fake_case)).tokens


def test_bundle_has_no_local_paths_users_or_secrets(tmp_path: Path) -> None:
    crash = write_case(tmp_path / "secret", env={"MS_DEV_FAKE": "1", "HUB_TOKEN": "s3cr3t-value-42"})
    bundle, _ = _reduce(crash, tmp_path / "out")
    text = "".join(p.read_text(errors="replace") for p in bundle.rglob("*") if p.is_file())
    assert "s3cr3t-value-42" not in text
    assert str(tmp_path) not in text and str(Path.cwd()) not in text
    assert "HUB_TOKEN" in (bundle / "original" / "crash.yaml").read_text()  # the key stays, the value goes


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_hang_is_reduced_and_reported_as_a_hang(tmp_path: Path, monkeypatch) -> None:
    """`expect: {kind: timeout}`: every candidate that still hangs is the bug; ISSUE.md says the compile
    hangs, how long the original ran before it was killed, and what repro.py waits for."""
    monkeypatch.setenv("FAKE_COMPILER_HANG_WITHOUT", "needed")
    crash = write_case(tmp_path / "hangs", timeout=1, expect={"kind": "timeout"})
    bundle, stats = _reduce(crash, tmp_path / "out", jobs=2, diagnose=False)
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert reduction["signature"]["kind"] == "timeout"
    assert reduction["reduced"]["tokens"] < reduction["original"]["tokens"]
    assert stats["original_seconds"] >= 1.0
    issue = (bundle / "ISSUE.md").read_text()
    assert "AKG **hangs** compiling a Hybrid DSL kernel" in issue
    assert f"killed after {stats['original_seconds']} s (the original case, in 2 of 2 runs" in issue
    assert "instead of hanging" in issue and "internal check" not in issue
    assert "It gives the\n   compile 60 s and reports a hang" in issue
    assert "TIMEOUT = 60" in (bundle / "repro.py").read_text()
    # What the maintainer sees first: the title names the pass, "Related log" the stack sampled in it.
    assert issue.startswith(f"# [AKG][CPU] hang in {reduction['signature']['location']}\n")
    related = issue.split("## Related log / screenshot", 1)[1].split("\n## ", 1)[0]
    assert "sampled by" in related and f"  {reduction['signature']['frames'][0]}\n" in related
    assert str(tmp_path) not in issue and "Failing stage: **unknown" not in issue


@pytest.mark.timeout(120)
def test_a_hang_whose_stack_cannot_be_read_is_refused_not_reduced_as_any_hang(tmp_path: Path, monkeypatch) -> None:
    """py-spy missing (or not allowed to attach): the sample has no frame of the compiler, so the hang has no
    place; reducing it would accept any hang, so it is refused with the reason."""
    monkeypatch.setenv("FAKE_COMPILER_HANG_WITHOUT", "needed")
    monkeypatch.setattr(hang_stack, "py_spy", lambda: None)
    crash = write_case(tmp_path / "hangs", timeout=1, expect={"kind": "timeout"})
    with pytest.raises(Unplaced, match=r"stack could not be read .*py-spy"):
        _reduce(crash, tmp_path / "out", diagnose=False)
    assert not (tmp_path / "out" / "hangs").exists()


def test_a_captured_expectation_matches_the_failure_it_was_learned_from(tmp_path: Path) -> None:
    """What capture writes into a captured crash.yaml is the learned expectation, read back as a user's: a
    hang captured from a run must match its own hang (it once failed it: message and `where` were wrong)."""
    stack = ("fake_compiler.py::_hang_in_pass", "fake_compiler.py::main")
    for sig in (
        hang_signature(stack, 60),
        Signature("signal", "SIGSEGV", "", ("akg::ir::CPULocalReconstruction::GetNewArgs<air::ir::Call>",)),
        Signature("error", "Check failed: x (N vs. N)", "tiling.cc:12", ("akg::ir::poly::A",), "tiling"),
    ):
        crash = write_case(tmp_path / sig.kind, expect=sig.expectation().to_dict())
        assert matches(sig, load_case(crash).expect), sig
