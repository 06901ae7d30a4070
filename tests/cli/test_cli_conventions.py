"""The command line's conventions, through the real `reduce` program: -h/--help on every command, --version,
one-line errors with exit 2 decided before any work, --json answers, -q, exit 5 for a failure that is not
AKG's, Ctrl-C as exit 130 with one line, and `reduce toolchain` that installs nothing."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import write_case

import reducer
from reducer.cli import COMMANDS, EXIT_CODES

ENV_COMPILER = """import sys
print("Traceback (most recent call last):")
print('  File "/x/site-packages/mindspore/_akg/akg/utils/kernel_exec.py", line 40, in build')
print('  File "/usr/lib/python3.11/subprocess.py", line 1950, in _execute_child')
print("FileNotFoundError: [Errno 2] No such file or directory: 'ccec'")
sys.exit(1)
"""


def reduce_cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reducer", *args], capture_output=True, text=True, timeout=120, env={**os.environ, **env}
    )


def one_error(run: subprocess.CompletedProcess[str]) -> str:
    """The one line a bad input prints, after checking it is the only one."""
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("error: ")
    return line


@pytest.mark.timeout(240)
@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_and_h_of_every_command(command: str) -> None:
    for flag in ("-h", "--help"):
        run = reduce_cli(*filter(None, [command, flag]), NO_COLOR="1")
        assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
        assert run.stdout.startswith(f"Usage: reduce {command}".rstrip() + " ")
        assert "\x1b[" not in run.stdout  # NO_COLOR: no escape codes


@pytest.mark.timeout(60)
def test_top_level_help_lists_commands_in_the_order_people_use_them_and_the_exit_codes() -> None:
    text = reduce_cli("--help").stdout
    listed = re.findall(r"^  (\S+)  ", text.split("\nCommands:\n")[1], flags=re.M)
    assert listed[: len(COMMANDS)] == list(COMMANDS)
    for code, meaning in EXIT_CODES.items():
        assert f"{code:<4} {meaning}" in text
    assert "please report it" in text and "NO_COLOR" in text and "--quiet" in text and "AKG_REDUCE_CACHE" in text
    assert "Parses arguments" not in text


@pytest.mark.timeout(60)
def test_a_bare_path_runs_and_h_after_it_is_the_help_of_run(fake_case: Path) -> None:
    run = reduce_cli(str(fake_case), "-h")
    assert run.returncode == 0 and run.stdout.startswith("Usage: reduce run ")
    words = " ".join(run.stdout.split())  # as wrapped to any width
    assert "env var: AKG_REDUCE_CACHE" in words and "--json" in words


@pytest.mark.timeout(60)
def test_version_names_the_tool_and_what_compiles_each_target(tmp_path: Path) -> None:
    run = reduce_cli("--version", AKG_REDUCE_TOOLCHAINS=str(tmp_path / "toolchains"))
    assert run.returncode == 0, run.stderr
    first, *targets = run.stdout.strip().splitlines()
    assert first == f"akg-reduce {reducer.__version__}"
    assert [line.split(":")[0] for line in targets] == ["cpu", "cuda", "aicore"]
    assert not (tmp_path / "toolchains").exists()


@pytest.mark.timeout(60)
def test_toolchain_without_target_lists_and_installs_nothing(tmp_path: Path) -> None:
    toolchains = tmp_path / "toolchains"
    run = reduce_cli("toolchain", AKG_REDUCE_TOOLCHAINS=str(toolchains))
    assert run.returncode == 0, run.stderr
    aicore = run.stdout.strip().splitlines()[-1]
    assert aicore == (
        f"aicore: missing; 'reduce toolchain aicore' installs MindSpore 2.7.2 (about 2.7 GB) into "
        f"{toolchains / 'mindspore-2.7.2'}"
    )
    assert not toolchains.exists()


@pytest.mark.timeout(120)
def test_bad_input_is_one_line_and_exit_2(fake_case: Path, tmp_path: Path) -> None:
    half = tmp_path / "half" / "crash.yaml"
    half.parent.mkdir()
    half.write_text(fake_case.read_text()[:40])  # a file cut off while written
    a_file = tmp_path / "file.txt"
    a_file.write_text("not a folder")
    cases = [
        (["check", str(tmp_path)], "is a directory, expected a crash.yaml file"),
        (["check", str(tmp_path / "nope.yaml")], "file not found"),
        (["check", str(half)], str(half)),
        ([str(fake_case), "-o", str(a_file)], "Invalid value for '-o' / '--output'"),
        (["shapes", str(fake_case), "--shapes", str(tmp_path)], "is a directory"),
        (["corpus", str(a_file)], "is a file"),
        (["corpus", str(tmp_path), "--executor", "ray"], "'ray' is not one of 'local', 'dask'"),
        (["capture", "--timeout", "5", "--", "true"], "No such option: --timeout"),
        (["toolchain", "npu"], "'npu' is not one of 'cpu', 'cuda', 'aicore'"),
        ([str(fake_case), "-j", "0"], "'-j' / '--jobs'"),
    ]
    for args, expected in cases:
        assert expected in one_error(reduce_cli(*args)), args


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("dims", "expected"),
    [
        (["a[0]=1..2000000000"], "2000000000 calls; at most 100000"),  # expanded, this would not end
        (["a[0]=1..1000", "b[1]=1..1000"], "1000000 calls; at most 100000"),
        (["a[0]=1..4294967296"], "STOP <= 2147483647"),
    ],
)
def test_a_range_of_dims_too_large_is_refused_before_it_is_expanded(
    fake_case: Path, tmp_path: Path, dims: list[str], expected: str
) -> None:
    run = reduce_cli("shapes", str(fake_case), *(f"--dims={d}" for d in dims), "-o", str(tmp_path / "plan"))
    assert expected in one_error(run)
    assert not (tmp_path / "plan").exists()


@pytest.mark.timeout(120)
def test_check_json_is_the_only_thing_on_stdout(fake_case: Path) -> None:
    run = reduce_cli("check", str(fake_case), "--json")
    answer = json.loads(run.stdout)
    assert run.returncode == 0 and answer["exit"] == 0 and answer["meaning"] == EXIT_CODES[0]
    assert answer["signature"]["kind"] == "error" and answer["signature"]["location"] == "fake_tiling.cc:193"
    assert answer["bug"] and answer["line"].startswith("error: Check failed: gemm_m.size()")
    missing = reduce_cli("check", str(fake_case.parent / "nope.yaml"), "--json")
    assert missing.returncode == 2 and json.loads(missing.stdout)["exit"] == 2


@pytest.mark.timeout(240)
def test_run_json_and_quiet(fake_case: Path, tmp_path: Path) -> None:
    run = reduce_cli(str(fake_case), "-o", str(tmp_path / "out"), "-j", "1", "--no-diagnosis", "--json", "-q")
    assert run.returncode == 0 and run.stderr == "", run.stderr  # -q: no progress; nothing went wrong
    answer = json.loads(run.stdout)
    assert answer["exit"] == 0 and answer["triage"]["verdict"] == "compiler-bug"
    assert Path(answer["bundle"], "ISSUE.md").is_file() and Path(answer["archive"]).is_file()
    assert answer["signature"]["location"] == "fake_tiling.cc:193" and answer["bug"]


@pytest.mark.timeout(240)
def test_run_exits_5_when_the_failure_is_not_akgs(tmp_path: Path) -> None:
    crash = write_case(tmp_path / "needs_ccec", compiler="env_compiler.py")
    (crash.parent / "env_compiler.py").write_text(ENV_COMPILER)
    run = reduce_cli(str(crash), "-o", str(tmp_path / "out"), "-j", "1", "--no-diagnosis")
    assert run.returncode == 5, run.stderr
    assert "verdict: environment: the program `ccec`" in run.stdout


@pytest.mark.timeout(120)
def test_ctrl_c_in_check_is_130_and_one_line(tmp_path: Path) -> None:
    """Ctrl-C kills the compile in flight: the user is not held for its limit (600 s here, past the bounds)."""
    crash = write_case(tmp_path / "case", timeout=600)
    proc = subprocess.Popen(
        [sys.executable, "-m", "reducer", "check", str(crash)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "FAKE_COMPILER_SLEEP": "600"},
    )
    compiling = _wait_for_compile(proc)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    assert stderr.strip().splitlines() == ["error: interrupted; nothing was written"]
    psutil.wait_procs([compiling], timeout=30)
    assert not compiling.is_running() or compiling.status() == psutil.STATUS_ZOMBIE


def _wait_for_compile(proc: subprocess.Popen[str]) -> psutil.Process:
    """The fake compiler `proc` started, once it runs (bounded: 60 s)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        with_fake = [
            p for p in psutil.Process(proc.pid).children(recursive=True) if "fake_compiler.py" in " ".join(_cmd(p))
        ]
        if with_fake:
            return with_fake[0]
        time.sleep(0.1)
    raise AssertionError("the fake compiler never started")


def _cmd(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:  # gone meanwhile
        return []
