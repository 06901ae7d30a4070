"""A wrong-result check's own failure is never AKG's: its output read through its record (wire.Record) says
how far it got and whose code raised, so a reference that raises, runs past its limit or crashes is a harness
outcome (no failure, no verdict, never stored), while AKG raising or hanging stays AKG's bug."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_akg

from reducer.compile.cache import CompileCache
from reducer.compile.identity import Kind
from reducer.compile.sandbox import Outcome
from reducer.compile.signature import signature_of
from reducer.core.case import Expectation
from reducer.core.errors import CheckFailed
from reducer.in_mindspore import script
from reducer.in_mindspore.mismatch_run import raised_by, refuse_trapping_inputs
from reducer.inputs.load import load_input
from reducer.inputs.shape_list import ShapeLine
from reducer.session import original_signature
from reducer.shapes.grid import NO_VERDICT, _compiled

pytestmark = pytest.mark.timeout(30)


def record(stage: str, **fields: object) -> str:
    return "AKG-REDUCE-RECORD " + json.dumps({"stage": stage, "against": "Python", **fields})


def check_output(*stages: str, **last: object) -> str:
    """A check's output up to its last stage, with `last` as its final record when given."""
    lines = [record(s) for s in stages]
    if last:
        lines.append(record(stages[-1], **last))
    return "\n".join(lines) + "\n"


REFERENCE_RAISED = (
    check_output("setup", "akg", "reference")
    + 'Traceback (most recent call last):\n  File "akg_reduce_kernel.py", line 6, in shifted\n'
    + "IndexError: index 4 is out of bounds for axis 0 with size 4\n"
    + record("reference", raised_by="reference", trace="IndexError: index 4 is out of bounds", read_by="python")
)


def outcome(output: str, returncode: int = 2, **facts: object) -> Outcome:
    fields: dict = {"returncode": returncode, "signal": None, "timed_out": False, "out_of_memory": False}
    fields.update(facts)
    outcome = Outcome(fields["returncode"], fields["signal"], fields["timed_out"], fields["out_of_memory"], 1.0, output)
    return replace(outcome, check=bool(fields.get("check")))


def test_a_reference_that_raises_is_the_checks_failure_naming_the_reference() -> None:
    sig = signature_of(outcome(REFERENCE_RAISED), 60)
    assert sig.kind is Kind.HARNESS and not sig.failed and not sig.kind.is_verdict
    assert sig.message == "the Python reference raised" and sig.raw.startswith("IndexError")


def test_a_reference_past_its_limit_is_no_hang_of_akg_but_akg_past_it_is() -> None:
    late = signature_of(outcome(check_output("setup", "akg", "reference"), -9, timed_out=True), 5)
    assert late.kind is Kind.HARNESS and late.message == "the Python reference ran past its limit"
    assert late.raw.startswith("the check did not finish within")
    compiling = signature_of(outcome(check_output("setup", "akg"), -9, timed_out=True), 5)
    assert compiling.kind is Kind.TIMEOUT


def test_a_crash_in_the_reference_is_the_checks_and_one_in_akg_is_akgs() -> None:
    trapped = signature_of(outcome(check_output("setup", "akg", "reference"), -5, signal=signal.SIGTRAP), 60)
    assert trapped.kind is Kind.HARNESS and "SIGTRAP" in trapped.raw
    assert signature_of(outcome(check_output("setup", "akg"), -11, signal=signal.SIGSEGV), 60).kind is Kind.SIGNAL


def test_akg_raising_in_the_check_is_still_akgs_error() -> None:
    output = (
        check_output("setup", "akg")
        + "Traceback (most recent call last):\nRuntimeError: Check failed: x\n"
        + record("akg", raised_by="akg", trace="RuntimeError: Check failed: x", read_by="python")
    )
    assert signature_of(outcome(output, 4), 60).kind is Kind.ERROR


def test_a_failed_check_is_never_stored_as_a_verdict(tmp_path: Path) -> None:
    cache = CompileCache(tmp_path / "c.sqlite")
    cache.put("k", signature_of(outcome(REFERENCE_RAISED), 60), 1.0)
    assert cache.get("k") is None


def test_the_original_whose_reference_raises_is_no_bug_but_one_line_naming_the_reference(fake_case: Path) -> None:
    case = load_input(fake_case).with_(expect=Expectation("mismatch"))
    with pytest.raises(CheckFailed, match="the Python reference raised: IndexError"):
        original_signature(case, runs=1, compiler=lambda *args, **kw: outcome(REFERENCE_RAISED))


def test_a_shapes_cell_whose_check_failed_says_so_and_has_no_bug_id() -> None:
    cell = _compiled(ShapeLine("shapes.txt:1", "[4]", ((4,),)), "cpu", signature_of(outcome(REFERENCE_RAISED), 60), "")
    assert cell.verdict == NO_VERDICT and not cell.bug and "the Python reference raised" in cell.said


def reduce_check(folder: Path, kernel: str, timeout: int) -> subprocess.CompletedProcess[str]:
    folder.mkdir()
    (folder / "kernel.py").write_text(kernel)
    (folder / "crash.yaml").write_text(
        f"name: {folder.name}\nkernel: kernel.py\ninputs:\n  - {{shape: [4], dtype: float32}}\n"
        f"expect: {{kind: mismatch}}\ntimeout: {timeout}\n"
    )
    command = [sys.executable, "-m", "reducer", "check", str(folder / "crash.yaml")]
    return subprocess.run(command, capture_output=True, text=True, timeout=240)


# Runs as Python on zeros (the loader's validation), but reads past x's end on the check's random inputs.
INDEX_ONLY_IN_THE_REFERENCE = """from mindspore.ops import kernel


@kernel
def shifted(x):
    y = output_tensor((4,), x.dtype)
    for i in range(4):
        y[i] = x[i]
        if x[0] != 0.0:
            y[i] = x[i + 1]
    return y
"""
# AKG compiles and runs it in seconds; as Python it takes minutes (200M steps once finished within 40 s in CI).
SLOW_REFERENCE = """from mindspore.ops import kernel


@kernel
def slow(x):
    y = output_tensor((4,), x.dtype)
    y[0] = 0.0
    for i in range(600000000):
        y[0] = y[0] + x[0]
    for i in range(1, 4):
        y[i] = x[i]
    return y
"""


@pytest.mark.akg
@needs_akg
@pytest.mark.timeout(240)
def test_reduce_check_of_a_kernel_whose_python_reference_raises_exits_2_naming_the_reference(tmp_path: Path) -> None:
    done = reduce_check(tmp_path / "index", INDEX_ONLY_IN_THE_REFERENCE, 120)
    assert done.returncode == 2, done.stderr
    assert "the Python reference raised: IndexError" in done.stderr and "AKG's" not in done.stderr


@pytest.mark.akg
@needs_akg
@pytest.mark.timeout(300)
def test_reduce_check_of_a_kernel_whose_python_reference_runs_past_the_limit_is_no_akg_hang(tmp_path: Path) -> None:
    done = reduce_check(tmp_path / "slow", SLOW_REFERENCE, 40)
    assert done.returncode == 2, done.stderr
    assert "the Python reference ran past its limit" in done.stderr and "compile did not finish" not in done.stderr


def test_the_originals_bug_is_its_commonest_identity_not_its_commonest_line(fake_case: Path) -> None:
    """Two runs fail at one check moved a line (one bug, the identity says), one at another check: the bug is
    the first, however the dataclass's equality would count them."""
    said = iter(
        [
            "other.cc:5] [t] Check failed: other",
            "pass.cc:10] [t] Check failed: boom",
            "pass.cc:11] [t] Check failed: boom",
        ]
    )

    def compiler(*args: object, **kw: object) -> Outcome:
        return outcome(f"[ERROR] AKG:2026-12-02-15:22:22.025.224 [{next(said)}\n", 1)

    found = original_signature(load_input(fake_case), runs=3, repeat=2, compiler=compiler)
    assert found.signature.message == "Check failed: boom" and found.matching == 2


def test_a_record_of_a_stage_this_version_does_not_know_is_the_checks_own() -> None:
    """A check of another akg-reduce version names a stage this one does not know: no traceback, no AKG bug."""
    sig = signature_of(outcome(check_output("setup", "warmup"), -9, timed_out=True), 5)
    assert sig.kind is Kind.HARNESS and not sig.failed


def test_a_library_that_cannot_load_while_the_check_sets_up_is_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(script("wire")).parent))  # the check imports wire.py beside it
    assert raised_by("setup", OSError("libakg.so: cannot open shared object file")) == "environment"
    assert raised_by("reference", OSError("no such file")) == "reference"
    assert raised_by("akg", ImportError("No module named 'scipy'")) == "environment"


def test_a_check_that_ends_before_its_first_record_is_never_akgs() -> None:
    """A check dies while it sets up, before it says so: no AKG code ran, so its traceback, its limit or its
    signal is the check's (a missing module the environment's, named), where a compile's would be AKG's."""
    import_failed = 'Traceback (most recent call last):\n  File "mismatch_run.py", line 30, in <module>\n'
    missing = signature_of(outcome(import_failed + "ModuleNotFoundError: No module named 'numpy'\n", 1, check=True), 60)
    assert missing.kind is Kind.ENVIRONMENT and "numpy" in missing.raw
    ours = signature_of(outcome(import_failed + "NameError: name 'np' is not defined\n", 1, check=True), 60)
    assert ours.kind is Kind.HARNESS and ours.message == "the check's setup code raised"
    late = signature_of(outcome("", -9, timed_out=True, check=True), 5)
    assert late.kind is Kind.HARNESS and late.message == "the check's setup code ran past its limit"
    assert signature_of(outcome("", -11, signal=signal.SIGSEGV, check=True), 60).kind is Kind.HARNESS
    compile_late = signature_of(outcome("", -9, timed_out=True), 5)
    assert compile_late.kind is Kind.TIMEOUT


def _raised(code: str, filename: str) -> BaseException:
    try:
        exec(compile(code, filename, "exec"), {})
    except Exception as exc:
        return exc
    raise AssertionError("it did not raise")


def test_our_code_raising_while_akg_runs_is_ours_and_mindspores_is_akgs(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the akg stage the check also poisons AKG's outputs and reads them back: an exception raised in the
    check's own files is the harness's, one raised in MindSpore (AKG ships in it) AKG's, whatever called it."""
    monkeypatch.syspath_prepend(str(Path(script("wire")).parent))
    ours = _raised("None.shape", "/tmp/x/mismatch_run.py")
    assert raised_by("akg", ours) == "harness" and raised_by("reference", ours) == "reference"
    akgs = _raised("raise RuntimeError('Check failed')", "/venv/lib/site-packages/mindspore/_akg/akg/build.py")
    assert raised_by("akg", akgs) == "akg"
    assert raised_by("akg", _raised("1 / 0", "/usr/lib/python3.11/fractions.py")) == "akg"  # no owner: the stage's


def test_a_check_stopped_after_its_verdict_keeps_its_verdict() -> None:
    """The check compared and printed its verdict, then the runner was killed at its limit or cap (MindSpore
    slow to exit): the verdict decides, never an AKG hang or memory bug; stopped between its comparison and the
    verdict, it is the check's own failure."""
    done = check_output("setup", "akg", "reference", "compare") + record("compare", compared=64, done=True) + "\n"
    right = done + "AKG-REDUCE-CHECK match: every output within tolerance of the Python reference (64 elements)\n"
    assert signature_of(outcome(right, -9, timed_out=True, check=True), 5).kind is Kind.NONE
    assert signature_of(outcome(right, -9, out_of_memory=True, check=True), 5).kind is Kind.NONE
    cut = signature_of(outcome(done, -9, timed_out=True, check=True), 5)
    assert cut.kind is Kind.HARNESS and not cut.failed


def test_inputs_under_which_an_integer_division_traps_are_the_checks_failure_before_akg_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """AKG's kernel would die of SIGFPE dividing an int32 by a drawn 0 (a need no domain rule carried): the
    check refuses while it sets up, so the crash is never run, nor taken for AKG's."""
    monkeypatch.syspath_prepend(str(Path(script("wire")).parent))  # the check imports graph_numpy beside it
    graph = {
        "input_desc": [[{"tensor_name": "a", "data_type": "int32", "shape": [3]}],
                       [{"tensor_name": "b", "data_type": "int32", "shape": [3]}]],
        "op_desc": [{"name": "FloorDiv", "attr": None,
                     "input_desc": [[{"tensor_name": "a", "data_type": "int32", "shape": [3]}],
                                    [{"tensor_name": "b", "data_type": "int32", "shape": [3]}]],
                     "output_desc": [{"tensor_name": "q", "data_type": "int32", "shape": [3]}]}],
        "output_desc": [{"tensor_name": "q", "data_type": "int32", "shape": [3]}],
    }  # fmt: skip
    a, b = np.array([4, 5, 6], np.int32), np.array([2, 0, 3], np.int32)
    with pytest.raises(ValueError, match=r"integer division trap \(FloorDiv at 1 elements\)"):
        refuse_trapping_inputs(graph, [a, b])
    refuse_trapping_inputs(graph, [a, np.array([2, 1, 3], np.int32)])
    assert raised_by("setup", ValueError("trap")) == "harness"
