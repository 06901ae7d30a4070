"""Bad crash.yaml input: exit code 2, one clear line naming the file and field, no traceback, no writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import write_case


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reducer", *args], capture_output=True, text=True)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"kernel": "missing.py"}, "field 'kernel': file missing.py not found"),
        ({"inputs": "many"}, "field 'inputs'"),
        ({"inputs": [{"shape": [4, 8], "dtype": "float8"}]}, "unknown dtype 'float8'"),
        ({"inputs": [{"shape": [4, -8], "dtype": "float32"}]}, "dimension -8 is out of range"),
        ({"timeout": "soon"}, "field 'timeout'"),
        ({"expect": {"kind": "explosion"}}, "field 'expect.kind'"),
        ({"colour": "blue"}, "field 'colour'"),
        ({"inputs": [{"shape": [4, 8], "dtype": "float32"}]}, "takes 3 inputs, 1 are listed"),
        ({"expect": {"kind": "error", "tolerance": 0.1}}, "'tolerance' and 'against' belong to kind 'mismatch'"),
        ({"expect": {"kind": "mismatch", "tolerance": -1}}, "field 'expect.tolerance'"),
        ({"expect": {"kind": "mismatch", "against": {"dim": "0 0 1 1"}}}, "field 'expect.against.attrs'"),
        ({"expect": {"kind": "mismatch"}, "target": "aicore"}, "aicore Hybrid DSL kernels run on an Ascend NPU only"),
    ],
)
def test_bad_field_gives_exit_2_and_one_line(tmp_path: Path, change: dict, expected: str) -> None:
    crash = write_case(tmp_path / "bad")
    data = yaml.safe_load(crash.read_text())
    data.update(change)
    crash.write_text(yaml.safe_dump(data))
    for args in ([str(crash), "-o", str(tmp_path / "out")], ["check", str(crash)]):
        run = run_cli(*args)
        assert run.returncode == 2, run.stderr
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and str(crash) in lines[0] and expected in lines[0], run.stderr
        assert "Traceback" not in run.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"name: [unclosed", "not valid YAML"),
        (b"\xff\xfe\x00garbage", "not UTF-8"),
        (b"- just\n- a list\n", "expected a mapping"),
    ],
)
def test_unreadable_files(tmp_path: Path, content: bytes, expected: str) -> None:
    crash = tmp_path / "crash.yaml"
    crash.write_bytes(content)
    run = run_cli(str(crash))
    assert run.returncode == 2 and expected in run.stderr and "Traceback" not in run.stderr


def test_missing_file(tmp_path: Path) -> None:
    run = run_cli(str(tmp_path / "nope.yaml"))
    assert run.returncode == 2 and "file not found" in run.stderr


def test_original_that_does_not_fail_exits_3(tmp_path: Path) -> None:
    crash = write_case(
        tmp_path / "passes",
        inputs=[
            {"shape": [2, 2], "dtype": "float32"},
            {"shape": [2, 2], "dtype": "float32"},
            {"shape": [2], "dtype": "float32"},
        ],
    )
    run = run_cli(str(crash), "-o", str(tmp_path / "out"))
    assert run.returncode == 3 and "compiles without error" in run.stderr


def test_original_failing_differently_from_expect_exits_3(tmp_path: Path) -> None:
    crash = write_case(tmp_path / "other", expect={"kind": "error", "message": "Unhandled Evaluate"})
    run = run_cli("check", str(crash))
    assert run.returncode == 3 and "fails differently from expect" in run.stderr


def test_very_deep_yaml_is_bad_input(tmp_path: Path) -> None:
    crash = tmp_path / "crash.yaml"
    crash.write_text("a: " + "[" * 5000 + "]" * 5000)
    run = run_cli("check", str(crash))
    assert run.returncode == 2 and "nested too deeply" in run.stderr and "Traceback" not in run.stderr


def test_refuses_to_overwrite_a_folder_it_did_not_write(fake_case: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "matmul_bias").mkdir(parents=True)
    (out / "matmul_bias" / "precious.txt").write_text("mine")
    run = run_cli(str(fake_case), "-o", str(out), "-j", "1")
    assert run.returncode == 2 and "not an akg-reduce bundle" in run.stderr
    assert (out / "matmul_bias" / "precious.txt").read_text() == "mine"


def test_kernel_that_is_not_hybrid_dsl_is_bad_input(tmp_path: Path) -> None:
    crash = write_case(tmp_path / "bad", kernel="def k(a, b, c):\n    return 0\n")
    run = run_cli("check", str(crash))
    assert run.returncode == 2 and "field 'kernel': not a valid Hybrid DSL kernel" in run.stderr


def test_a_compile_cache_that_cannot_be_written_is_one_line_naming_it(
    fake_case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AKG_REDUCE_CACHE", "/proc/version/compiles.sqlite")  # under a file: not even root writes
    result = run_cli(str(fake_case), "-o", str(tmp_path / "out"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith(
            "error: the compile cache /proc/version/compiles.sqlite cannot be written (File exists): set "
            "AKG_REDUCE_CACHE"
        )
    )
