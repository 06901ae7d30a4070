"""`reduce capture -- CMD` and `reduce from-log LOG` as a user meets them: the shipped example scripts run by
the real MindSpore, the real logs in tests/data/logs, and the bad inputs (no such command, a script that
passes, a hang, a log of another program, a log whose kernel JSON was cut)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest
from conftest import ROOT, needs_akg, wait_until

LOGS = ROOT / "tests" / "data" / "logs"
EXAMPLES = ROOT / "examples"
FUSION_LOG = ROOT / "corpus" / "pointnet_head_fusion_dst_type" / "run.log"
FUSION_OP = "Fused_MatMul_split_18201626413234529928"
CUSTOM_OP = "Fused_Custom_11918899741854471392"


def reduce_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reducer", *args], cwd=cwd, capture_output=True, text=True, timeout=280
    )


def snapshot(folder: Path) -> dict[str, tuple[bytes, float]]:
    return {str(p): (p.read_bytes(), p.stat().st_mtime) for p in folder.rglob("*") if p.is_file()}


def one_error_line(run: subprocess.CompletedProcess[str]) -> str:
    """Our last word on stderr: one error line, and no traceback of ours (a captured command's own output,
    tracebacks included, is passed through before it)."""
    lines = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and run.stderr.rstrip().endswith(lines[0]), run.stderr
    assert f"{os.sep}reducer{os.sep}" not in run.stderr, run.stderr
    return lines[0]


@pytest.mark.quick
@pytest.mark.akg
@needs_akg
def test_capture_of_a_custom_op_script_finds_the_kernel_and_replays_it(tmp_path: Path) -> None:
    run = reduce_cli(
        "capture", "-o", "out", "--no-reduce", "--", sys.executable, str(EXAMPLES / "voxel_conv3d.py"), cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    report = json.loads((tmp_path / "out" / "capture.json").read_text())
    assert report["exit_status"] == 1 and report["final_error"] == "RuntimeError: Response is empty."
    [kernel] = report["kernels"]
    assert kernel["status"] == "captured" and "gemm_m.size() <= FormatM.size()" in kernel["signature"]
    assert kernel["found_in"].startswith("akg_kernel_meta/Fused_Custom_")
    assert "Response is empty." in (tmp_path / "out" / "run.log").read_text()
    run_files = snapshot(tmp_path / "akg_kernel_meta")
    check = reduce_cli("check", kernel["crash_yaml"], cwd=tmp_path)
    assert check.returncode == 0 and "gemm_m.size() <= FormatM.size()" in check.stdout, check.stderr
    assert snapshot(tmp_path / "akg_kernel_meta") == run_files


@pytest.mark.akg
@needs_akg
def test_capture_of_a_fusion_script_reduces_to_a_bundle_that_replays(tmp_path: Path) -> None:
    script = EXAMPLES / "pointnet_head_fusion.py"
    run = reduce_cli("capture", "-o", "out", "--no-diagnosis", "--", sys.executable, str(script), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    report = json.loads((tmp_path / "out" / "capture.json").read_text())
    [kernel] = report["kernels"]
    assert kernel["name"] == FUSION_OP and kernel["status"] == "reduced"
    # The run wrote other kernels it never built; alone they compile, so they are no bug of their own.
    assert report["not_failing"] and not report["not_reproduced"]
    bundle = Path(kernel["bundle"]) if os.path.isabs(kernel["bundle"]) else tmp_path / kernel["bundle"]
    issue = (bundle / "ISSUE.md").read_text()
    assert "comes from a MindSpore run" in issue and "RuntimeError: Response is empty." in issue
    assert json.loads((bundle / "reduction.json").read_text())["origin"]["final_error"].startswith("RuntimeError")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "repro.py").write_text((bundle / "repro.py").read_text())
    repro = subprocess.run([sys.executable, "repro.py"], cwd=fresh, capture_output=True, text=True, timeout=200)
    assert repro.returncode == 1 and 'attrs.count("dst_type")' in repro.stdout + repro.stderr


@pytest.mark.akg
@needs_akg
def test_from_log_of_a_telang_script_finds_its_kernel_as_telang(tmp_path: Path) -> None:
    """The log of a TeLang Custom op (point_softmax_telang_script.py beside it) gives a case of func_type
    tvm_compute that fails alone as the run did."""
    run = reduce_cli("from-log", str(LOGS / "point_softmax_telang.log"), "-o", "out", "--no-reduce", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    report = json.loads((tmp_path / "out" / "capture.json").read_text())
    [kernel] = report["kernels"]
    assert kernel["status"] == "captured" and "Check failed: ex.as<IntImm>()" in kernel["signature"]
    crash = tmp_path / kernel["crash_yaml"]
    info = json.loads((crash.parent / (kernel["name"] + ".info")).read_text())
    assert {"name": "func_type", "data_type": "str", "value": "tvm_compute"} in info["op_desc"][0]["attr"]


@pytest.mark.akg
@needs_akg
def test_from_log_reads_a_pasted_log_in_the_old_wording_with_crlf_and_colours(tmp_path: Path) -> None:
    text = FUSION_LOG.read_text().replace("Compile error, args:", "Compile error, json str:")
    pasted = "\r\n".join(f"\x1b[31m{line}\x1b[0m" if "ERROR" in line else line for line in text.splitlines())
    log = tmp_path / "forum.log"
    log.write_bytes(pasted.encode())
    before = snapshot(tmp_path)
    run = reduce_cli("from-log", str(log), "-o", "out", "--no-reduce", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert f'{FUSION_OP}: error: Check failed: attrs.count("dst_type")' in run.stdout
    report = json.loads((tmp_path / "out" / "capture.json").read_text())
    first = next(i for i, line in enumerate(text.splitlines(), 1) if 'Compile error, json str: {"' in line)
    assert report["log"] == str(log)
    assert report["kernels"][0]["found_in"] == f"the kernel JSON at line {first} of forum.log"
    assert {k: v for k, v in snapshot(tmp_path).items() if "/out/" not in k} == before


def test_from_log_bad_logs_get_one_line(tmp_path: Path) -> None:
    cut = tmp_path / "cut.log"
    cut.write_text("\n".join(line[:1500] for line in (LOGS / "voxel_conv3d_custom.log").read_text().splitlines()))
    other = tmp_path / "other.log"
    other.write_text("epoch 1 loss 0.3\nTraceback (most recent call last):\nKeyError: 'points'\n")
    run = reduce_cli("from-log", str(cut), "-o", "out", "--no-reduce", cwd=tmp_path)
    assert run.returncode == 2 and CUSTOM_OP in one_error_line(run) and "cut off" in run.stderr
    run = reduce_cli("from-log", str(other), "-o", "out", cwd=tmp_path)
    assert run.returncode == 3 and "no failing AKG compile" in one_error_line(run)
    run = reduce_cli("from-log", str(tmp_path / "missing.log"), cwd=tmp_path)
    assert run.returncode == 2 and "no such file" in one_error_line(run)


def test_capture_commands_that_do_not_fail_in_akg(tmp_path: Path) -> None:
    run = reduce_cli("capture", "-o", "out", "--", "no-such-command-akg", cwd=tmp_path)
    assert run.returncode == 2 and "command not found: no-such-command-akg" in one_error_line(run)
    run = reduce_cli("capture", "-o", "out", "--", sys.executable, "-c", "print('trained')", cwd=tmp_path)
    assert run.returncode == 3 and "nothing failed in AKG" in one_error_line(run) and "exit status 0" in run.stderr
    assert "trained" in run.stderr  # the command's own output is passed through
    failing = [sys.executable, "-c", "raise KeyError('points')"]
    run = reduce_cli("capture", "-o", "out", "--", *failing, cwd=tmp_path)
    assert run.returncode == 3 and "exit status 1" in run.stderr and "KeyError: 'points'" in one_error_line(run)


@pytest.mark.akg
@needs_akg
def test_a_hanging_command_is_killed_and_its_findings_kept(tmp_path: Path) -> None:
    # A run that printed AKG's failure and then hung (as a MindSpore job waiting on its dead compile server).
    script = tmp_path / "hangs.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys, time
            sys.stdout.write(open({str(FUSION_LOG)!r}).read())
            sys.stdout.flush()
            time.sleep(600)
            """
        )
    )
    run = reduce_cli(
        "capture", "-o", "out", "--run-timeout", "5", "--no-reduce", "--", sys.executable, str(script), cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    report = json.loads((tmp_path / "out" / "capture.json").read_text())
    assert report["killed"] == "timeout"
    assert [k["name"] for k in report["kernels"]] == [FUSION_OP]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_kills_the_command_with_its_tree(tmp_path: Path, sig: signal.Signals) -> None:
    # The command starts a child of its own (as MindSpore starts its compile server), then waits forever.
    script = tmp_path / "trains.py"
    script.write_text(
        textwrap.dedent(
            """
            import subprocess, sys, time
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            print("child", child.pid, flush=True)
            time.sleep(600)
            """
        )
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "reducer", "capture", "-o", "out", "--", sys.executable, str(script)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    log = tmp_path / "out" / "run.log"
    started = re.compile(r"child (\d+)\n")  # the whole line: run.log may hold half of it for a moment
    wait_until(lambda: proc.poll() is None and log.exists() and started.search(log.read_text()), 60, "the command ran")
    child = int(started.search(log.read_text()).group(1))
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in stderr, stderr
    wait_until(
        lambda: not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE,
        10,
        "the command's child killed",
    )


@pytest.mark.akg
@needs_akg
def test_a_real_hang_after_an_abort_finds_the_kernel_the_run_never_built(tmp_path: Path) -> None:
    script = EXAMPLES / "pointnet_classifier_hang.py"
    run = reduce_cli(
        "capture", "-o", "out", "--run-timeout", "15", "--no-reduce", "--", sys.executable, str(script), cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    assert "the command was killed at --run-timeout 15 s" in run.stderr
    report = json.loads((tmp_path / "out" / "capture.json").read_text())
    assert report["killed"] == "timeout"
    [kernel] = report["kernels"]
    assert kernel["signature"].startswith("signal: SIGABRT (isl_val.c:")
    assert kernel["signature"].endswith(" in akg::ir::poly::CpuMemoryManager::InsertMarkerForGemm(isl::schedule_node&)")
    assert kernel["found_in"].endswith("written by the run and never built")
    assert "isl_val.c" in (tmp_path / "out" / "run.log").read_text()
    # The captured crash.yaml holds the expectation learned from the kernel: it fails as it says.
    crash = tmp_path / kernel["crash_yaml"]
    again = reduce_cli("check", str(crash), cwd=tmp_path)
    assert again.returncode == 0 and "InsertMarkerForGemm" in again.stdout, again.stdout + again.stderr
