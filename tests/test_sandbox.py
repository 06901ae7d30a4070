"""The sandbox contains hostile compiles: hangs, crashes, runaway children and memory; nothing is left.
Every test runs twice: as a new process (cold) and as a child forked from a warm worker."""

from __future__ import annotations

import functools
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from conftest import processes_mentioning

from reducer.sandbox import Outcome, run_sandboxed, supervise
from reducer.warm import Worker

ENV = {"PATH": "/usr/bin:/bin"}


@pytest.fixture(params=["cold", "warm"])
def launch(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Outcome]]:
    """`launch(code, timeout, memory)` runs Python `code` as one sandboxed compile."""
    if request.param == "cold":
        yield lambda code, timeout, memory: run_sandboxed([sys.executable, "-c", code], {}, ENV, timeout, memory)
        return
    scripts_dir = tmp_path_factory.mktemp("scripts")
    worker = Worker(sys.executable, str(scripts_dir / "unused.py"), ENV)
    scripts = iter(range(1000))

    def warm(code: str, timeout: float, memory: int) -> Outcome:
        script = scripts_dir / f"compile{next(scripts)}.py"
        script.write_text(code)
        return supervise(functools.partial(worker.launch, [str(script)]), {}, timeout, memory)

    yield warm
    assert not psutil.Process(worker._proc.pid).children(recursive=True)  # no compile outlived its limits
    worker.stop()


@pytest.fixture
def py(launch: Callable[..., Outcome]) -> Callable[..., Outcome]:
    def run(code: str, timeout: float = 5, memory: int = 512) -> Outcome:
        return launch(code, timeout, memory)

    return run


def test_hang_times_out_and_leaves_no_process(py) -> None:
    out = py("import time; time.sleep(600)  # hang-marker-1", timeout=1)
    assert out.timed_out and out.seconds < 10
    assert not processes_mentioning("hang-marker-1")


def test_children_ignoring_sigterm_are_killed(py) -> None:
    code = (
        "import os, signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "if os.fork() == 0:\n    time.sleep(600)  # child-marker-2\n"
        "time.sleep(600)  # child-marker-2\n"
    )
    out = py(code, timeout=1)
    assert out.timed_out
    assert not processes_mentioning("child-marker-2")


def test_segfault_is_a_signal(py) -> None:
    out = py("import ctypes; ctypes.string_at(0)")
    assert out.signal == 11 and out.returncode is None


def test_memory_cap_kills_the_compile(py) -> None:
    out = py("x = bytearray(2 * 1024**3); import time; time.sleep(5)", memory=256)
    assert out.out_of_memory


def test_output_flood_is_capped_head_and_tail_kept(py) -> None:
    out = py("import sys\nsys.stdout.write('HEAD\\n' + 'x' * 5_000_000 + '\\nTAIL\\n')")
    assert out.output.startswith("HEAD") and out.output.rstrip().endswith("TAIL")
    assert len(out.output) < 1_000_000 and "bytes of output cut" in out.output


def test_exit_zero_that_prints_an_error_is_an_error(py) -> None:
    from reducer.signature import signature_of

    out = py("print('[ERROR] AKG:2026 [pass.cc:1] [pass] Check failed: x')")
    assert out.returncode == 0
    assert signature_of(out, 5).kind == "error"


def test_temp_dirs_are_removed(py, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    py("open('big.bin', 'wb').write(b'0' * 1000)")
    py("import time; time.sleep(60)", timeout=0.5)
    assert list(tmp_path.iterdir()) == []


def test_abort_is_a_signal(py) -> None:
    out = py("import os; os.abort()")
    assert out.signal == 6


def test_one_huge_file_is_stopped_by_the_file_size_cap(py, monkeypatch) -> None:
    from reducer import sandbox

    monkeypatch.setattr(sandbox, "FILE_SIZE_LIMIT", 1 << 20)
    out = py("open('huge.bin', 'wb').write(b'0' * (8 << 20))")
    assert out.returncode != 0 and "File too large" in out.output  # Python turns SIGXFSZ into EFBIG


def test_many_files_hit_the_temp_dir_quota(py, monkeypatch) -> None:
    from reducer import sandbox
    from reducer.signature import signature_of

    monkeypatch.setattr(sandbox, "DIR_QUOTA", 4 << 20)
    code = "import time\nfor i in range(10_000):\n    open(f'f{i}', 'wb').write(b'0' * 65536)\ntime.sleep(30)"
    out = py(code, timeout=20)
    assert out.over_quota and not out.timed_out
    assert signature_of(out, 20).kind == "memory"
