"""The sandbox contains hostile compiles: hangs, crashes, runaway children and memory; nothing is left.
Every test runs twice: as a new process (cold) and as a child forked from a warm worker."""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from conftest import sandboxed_processes

from reducer.compile.sandbox import HangCheck, Outcome, run_sandboxed, supervise
from reducer.compile.warm import Worker, compile_worker
from reducer.in_mindspore import script

ENV = {"PATH": "/usr/bin:/bin"}


class Launcher:
    """Runs Python code as one sandboxed compile, cold (a new process) or warm (forked from a worker)."""

    def __init__(self, mode: str, scripts_dir: Path) -> None:
        program = compile_worker([sys.executable, script("akg_worker"), str(scripts_dir / "unused.py")])
        self.worker = Worker(program, ENV) if mode == "warm" else None
        self._scripts_dir = scripts_dir
        self._scripts = iter(range(1000))

    def run(self, code: str, timeout: float = 5, memory: int = 512, collect=None, hang_check=None) -> Outcome:
        if self.worker is None:
            return run_sandboxed([sys.executable, "-c", code], {}, ENV, timeout, memory, collect, None, hang_check)
        script = self._scripts_dir / f"compile{next(self._scripts)}.py"
        script.write_text(code)
        launch = functools.partial(self.worker.launch, {"argv": [str(script)]})
        return supervise(launch, {}, timeout, memory, collect, None, hang_check)

    def compiles_alive(self) -> list[psutil.Process]:
        """Compile processes of this test still running (the warm worker itself is not one)."""
        worker = self.worker._proc.pid if self.worker else None
        return [p for p in sandboxed_processes(os.getpid()) if p.pid != worker]


@pytest.fixture(params=["cold", "warm"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@contextlib.contextmanager
def launching(mode: str, scripts_dir: Path) -> Iterator[Launcher]:
    launcher = Launcher(mode, scripts_dir)
    try:
        yield launcher
        assert not launcher.compiles_alive()  # no compile outlived its limits
    finally:
        if launcher.worker:
            launcher.worker.stop()


@pytest.fixture
def launcher(mode: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    with launching(mode, tmp_path_factory.mktemp("scripts")) as launcher:
        yield launcher


@pytest.fixture
def py(launcher: Launcher) -> Callable[..., Outcome]:
    return launcher.run


def test_hang_times_out_and_leaves_no_process(launcher: Launcher) -> None:
    out = launcher.run("import time; time.sleep(60)", timeout=1)
    assert out.timed_out and out.seconds < 10
    assert not launcher.compiles_alive()


@pytest.mark.parametrize("same_place", [False, True])
def test_a_hang_check_stops_a_hang_elsewhere_early_and_lets_the_same_one_run_on(
    launcher: Launcher, same_place: bool
) -> None:
    seen: list[tuple[str, ...]] = []

    def same(stack: tuple[str, ...]) -> bool:
        seen.append(stack)
        return same_place

    check = HangCheck(0.5, same)
    out = launcher.run("import time; time.sleep(600)", timeout=4 if same_place else 300, hang_check=check)
    assert out.timed_out and len(seen) == 1 and out.stack  # sampled where it was (here: the kernel's view)
    assert out.seconds >= 4 if same_place else out.seconds < 60
    assert not launcher.compiles_alive()
    assert launcher.worker is None or launcher.worker.alive  # only the compile's own child was killed


def test_children_ignoring_sigterm_are_killed(launcher: Launcher) -> None:
    code = (
        "import os, signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "if os.fork() == 0:\n    time.sleep(600)\n"
        "time.sleep(600)\n"
    )
    out = launcher.run(code, timeout=1)
    assert out.timed_out
    assert not launcher.compiles_alive()


def test_a_daemonised_grandchild_dies_with_the_compile(launcher: Launcher) -> None:
    """A grandchild whose parent exited at once is no longer in the compile's tree; its process group
    still holds it."""
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    if os.fork() == 0:\n        time.sleep(600)\n"
        "    os._exit(0)\n"
        "time.sleep(1)\n"
    )
    out = launcher.run(code)
    assert out.returncode == 0
    assert not launcher.compiles_alive()


def test_core_dumps_are_off(mode: str, tmp_path: Path) -> None:
    """Even when the reducer (and so a warm worker) may dump core, a crashing compile writes no core file:
    AKG's can be gigabytes."""
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    try:
        with launching(mode, tmp_path) as launcher:
            code = "import ctypes, resource\nprint(resource.getrlimit(resource.RLIMIT_CORE), flush=True)\n"
            out = launcher.run(code + "ctypes.string_at(0)", collect=lambda d: [p.name for p in d.iterdir()])
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))
    assert out.signal == 11
    assert out.output.startswith("(0, 0)")
    assert not [name for name in out.collected if name.startswith("core")]


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


def test_exit_zero_is_success_whatever_it_logged(py) -> None:
    """MindSpore's entry raises on a failed compile; one that exits 0 compiled, even after AKG logged an error
    it recovered from."""
    from reducer.compile.signature import signature_of

    out = py("print('[ERROR] AKG:2026 [pass.cc:1] [pass] Check failed: x')")
    assert out.returncode == 0 and signature_of(out, 5).kind == "none"
    failed = py("print('[ERROR] AKG:2026 [pass.cc:1] [pass] Check failed: x'); raise SystemExit(1)")
    assert signature_of(failed, 5).kind == "error"


def test_a_compiles_temp_files_go_to_its_own_dir(py) -> None:
    out = py("import tempfile; print(tempfile.gettempdir())", collect=str)
    assert out.output.strip() == out.collected


def test_temp_dirs_are_removed(py, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    # the compile's own temp files go to its dir: they are removed with it, also when it is killed
    py("import tempfile; open(tempfile.mkstemp()[1], 'wb').write(b'0' * 1000)")
    py("import tempfile, time; tempfile.mkdtemp(); time.sleep(60)", timeout=0.5)
    assert list(tmp_path.iterdir()) == []


def test_abort_is_a_signal(py) -> None:
    out = py("import os; os.abort()")
    assert out.signal == 6


def test_one_huge_file_is_stopped_by_the_file_size_cap(py, monkeypatch) -> None:
    from reducer.compile import sandbox

    monkeypatch.setattr(sandbox, "FILE_SIZE_LIMIT", 1 << 20)
    out = py("open('huge.bin', 'wb').write(b'0' * (8 << 20))")
    assert out.returncode != 0 and "File too large" in out.output  # Python turns SIGXFSZ into EFBIG


def test_many_files_hit_the_temp_dir_quota(py, monkeypatch) -> None:
    from reducer.compile import sandbox
    from reducer.compile.signature import signature_of

    monkeypatch.setattr(sandbox, "DIR_QUOTA", 4 << 20)
    code = "import time\nfor i in range(10_000):\n    open(f'f{i}', 'wb').write(b'0' * 65536)\ntime.sleep(30)"
    out = py(code, timeout=20)
    assert out.over_quota and not out.timed_out
    assert signature_of(out, 20).kind == "memory"
