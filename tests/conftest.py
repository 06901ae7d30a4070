"""Shared fixtures: a case on disk compiled by the fake compiler, the real-AKG skip marker, and the
isolation every test gets (its own cache and temp dir; nothing of it left running or on disk)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
import yaml

from reducer.compile.akg import compile_case
from reducer.compile.sandbox import OWNER_ENV, PREFIX, Outcome
from reducer.compile.warm import WorkerPool
from reducer.core.case import Case
from reducer.core.errors import InputError
from reducer.core.targets import AICORE
from reducer.inputs.crash_yaml import load_case
from reducer.kernels.kinds import outputs_of
from reducer.kernels.telang import stop_probes
from reducer.search.passes import NumberPass, Pass
from reducer.toolchain import releases

HERE = Path(__file__).resolve().parent

# A suite started in the background by a non-interactive shell (`sh -c 'make test &'`) inherits SIGINT
# ignored, and Python keeps an inherited SIG_IGN, so every reducer a test starts would ignore Ctrl-C and the
# SIGINT tests would fail. A handler here is reset to the default in every child at exec.
signal.signal(signal.SIGINT, signal.default_int_handler)
ROOT = HERE.parent
FAKE_COMPILER = HERE / "fake_compiler.py"
CORPUS = ROOT / "corpus"

# An ir_builder kernel (Custom op func_type ir_builder): a copy of its first input, statement by statement.
IR_BUILDER_COPY = """def copy_ir(ins, attrs):
    def body(src, dst):
        ib = tvm.ir_builder.create()
        with ib.for_range(0, src.shape[0], name="i") as i:
            ib.store(dst, i, ib.load(src, i))
        return ib.get()
    return tvm.extern(ins[0].shape, ins, lambda i, o: body(i[0], o[0]), dtype=ins[0].dtype)
"""

MATMUL_KERNEL = textwrap.dedent(
    """
    from mindspore.ops import kernel


    @kernel
    def matmul_bias(a, b, bias):
        # a [M, K] x b [K, N] + bias [N]
        c = output_tensor((a.shape[0], b.shape[1]), a.dtype)
        t = allocate((a.shape[0], b.shape[1]), a.dtype)
        for i in range(a.shape[0]):
            for j in range(b.shape[1]):
                t[i, j] = 0.0
                for k in range(a.shape[1]):
                    t[i, j] = t[i, j] + a[i, k] * b[k, j]
        for i in range(a.shape[0]):
            for j in range(b.shape[1]):
                c[i, j] = t[i, j] + bias[j]
        return c
    """
)

# A kernel AKG compiles: what a case fails on is then its attrs or its environment.
ADD_KERNEL = """def add(a, b):
    c = output_tensor(a.shape, a.dtype)
    for i in range(a.shape[0]):
        c[i] = a[i] + b[i]
    return c
"""

HAS_AKG = importlib.util.find_spec("mindspore") is not None
needs_akg = pytest.mark.skipif(not HAS_AKG, reason="MindSpore (real AKG) is not installed")


@functools.cache
def ascend_problem() -> str:
    """Why the aicore toolchain (MindSpore 2.7.2 with AKG's Ascend build, in the machine's toolchain cache,
    shared by every test as by every user run) cannot be had here; '' when it is installed. `make test`
    installs it first (`make ascend`), so this installs only for a suite run some other way."""
    try:
        releases.ensure(AICORE, say=False)
    except InputError as exc:
        return f"the aicore toolchain cannot be installed here: {exc}"
    return ""


def needs_ascend() -> None:
    """Skip the calling test, saying why, when the aicore toolchain cannot be installed."""
    if problem := ascend_problem():
        pytest.skip(problem)


def corpus_cases() -> list[Path]:
    """The corpus crash.yaml files this machine can compile: the aicore ones only with their toolchain."""
    found = sorted(CORPUS.glob("*/crash.yaml"))
    return [p for p in found if not ascend_problem() or yaml.safe_load(p.read_text()).get("target") != "aicore"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The real-AKG tests, the long ones, first: xdist hands out work in this order (groups of shared work
    before single tests), and a long test started last would leave the other worker idle at the end."""
    items.sort(key=lambda item: item.get_closest_marker("akg") is None)


def write_case(folder: Path, kernel: str = MATMUL_KERNEL, **fields: object) -> Path:
    """A crash.yaml + kernel.py in `folder`, compiled by the fake compiler unless fields say otherwise."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.py").write_text(kernel)
    shutil.copy(FAKE_COMPILER, folder / "fake_compiler.py")
    data: dict[str, object] = {
        "name": folder.name,
        "kernel": "kernel.py",
        "inputs": [
            {"shape": [16, 8], "dtype": "float32"},
            {"shape": [8, 16], "dtype": "float32"},
            {"shape": [16], "dtype": "float32"},
        ],
        "attrs": {"enable_auto_inline": False, "dim": "0 0 4 4"},
        "env": {"MS_DEV_FAKE": "1"},
        "compiler": "fake_compiler.py",
        "timeout": 20,
    }
    data.update(fields)
    path = folder / "crash.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture
def fake_case(tmp_path: Path) -> Path:
    return write_case(tmp_path / "matmul_bias")


def edited_cases(p: Pass, case: Case) -> list[Case]:
    """What a transform or number pass proposes for `case`; a number pass's integers each at 1, at half and
    one below (the values its boundary search starts from and ends on)."""
    if isinstance(p, NumberPass):
        lowered = [n.at(v) for n in p.numbers(case) for v in sorted({1, n.value // 2, n.value - 1}) if 1 <= v < n.value]
        return [c for c in lowered if c is not None]
    return [edit.after for edit in p.edits(case)]


def sandboxed_processes(owner: int | None = None) -> list[psutil.Process]:
    """Live processes the sandbox marked as compiles (or warm workers) of the reducer `owner`; of reducers
    that are gone when None. Found by the mark in their environment, so also after they left the tree."""
    found = []
    for proc in psutil.process_iter():
        try:
            mark = proc.environ().get(OWNER_ENV)
            if mark is None or proc.status() == psutil.STATUS_ZOMBIE:
                continue
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if (owner is None and not psutil.pid_exists(int(mark))) or mark == str(owner):
            found.append(proc)
    return found


def wait_until(condition: Callable[[], object], seconds: float, what: str) -> None:
    """Poll `condition` until it is true; fail naming `what` after `seconds` (a bound, not a pace)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:g} s")
        time.sleep(0.02)


def describe(procs: list[psutil.Process]) -> list[str]:
    """What a process is, for a failure message."""
    facts = []
    for proc in procs:
        try:
            facts.append(f"{proc.pid} (parent {proc.ppid()}, {proc.status()}): {' '.join(proc.cmdline())[:300]}")
        except psutil.NoSuchProcess:
            facts.append(f"{proc.pid} (gone)")
    return facts


@contextlib.contextmanager
def own_state(root: Path) -> Iterator[Path]:
    """Work done outside a test (a session or module fixture, before `isolated`) gets what a test gets: its
    own compile cache (root/compiles.sqlite) and temp dir (root/tmp, yielded) for itself and every reducer it
    starts; on the way out no temp dir of ours may be left there."""
    tmp = root / "tmp"
    tmp.mkdir()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AKG_REDUCE_CACHE", str(root / "compiles.sqlite"))
        env.setenv("TMPDIR", str(tmp))
        env.setattr(tempfile, "tempdir", str(tmp))
        yield tmp
    left = sorted(p.name for p in tmp.glob(f"{PREFIX}*"))
    assert not left, f"temp dirs left by work outside a test: {left}"


@dataclass(frozen=True)
class PageLayout:
    """How a page lays out in a real browser window 1280 px wide."""

    scroll_width: int
    inner_width: int
    figures: int  # <svg> elements
    rows: int  # <tr> elements


def layout_in_browser(page: Path, scratch: Path) -> PageLayout:
    """`page` laid out by headless Chromium (Debian's: `make browser`) in a 1280 px window."""
    chromium = shutil.which("chromium")
    assert chromium, "the browser test needs Debian's chromium (make browser)"
    measure = (
        "<script>document.title = [document.documentElement.scrollWidth, window.innerWidth, "
        "document.querySelectorAll('svg').length, document.querySelectorAll('tr').length].join(' ')</script>"
    )
    measured = scratch / f"measured-{page.name}"
    measured.write_text(page.read_text().replace("</body>", measure + "</body>"))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
    run = subprocess.run(
        [chromium, *flags, f"--user-data-dir={scratch / 'profile'}", "--window-size=1280,900", "--dump-dom",
         measured.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    title = re.search(r"<title>([\d ]+)</title>", run.stdout)
    assert title, run.stderr[-2000:]
    return PageLayout(*map(int, title[1].split()))


def tree_digest(folder: Path) -> str:
    """Every file under `folder`, by path and content: what a reader of a shared result must leave as it is."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _bundle_name(case: str) -> str:
    return load_case(CORPUS / case / "crash.yaml").bundle_name


class SharedReductions:
    """Corpus cases reduced by the CLI (-j 2) once per session for every test that asks with the same
    options, each in its own folder with its own cache and temp dir. Tests only read a bundle (at the end of
    the session each must be as it was written) and copy a cache before using it."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.states: dict[tuple[str, ...], Path] = {}
        self.digests: dict[tuple[str, ...], str] = {}

    def _state(self, case: str, options: tuple[str, ...]) -> Path:
        key = (case, *options)
        if key not in self.states:
            state = self.factory.mktemp(f"shared-{case}")
            command = [sys.executable, "-m", "reducer", str(CORPUS / case / "crash.yaml"), "-o", str(state / "out")]
            with own_state(state):
                run = subprocess.run([*command, "-j", "2", *options], capture_output=True, text=True, timeout=1200)
            assert run.returncode == 0, run.stderr[-3000:]
            self.states[key] = state
            self.digests[key] = tree_digest(state / "out" / _bundle_name(case))
        return self.states[key]

    def bundle(self, case: str, *options: str) -> Path:
        """The bundle of `case` reduced with `options`."""
        return self._state(case, options) / "out" / _bundle_name(case)

    def cache(self, case: str, *options: str) -> Path:
        """The persistent compile cache that reduction filled."""
        return self._state(case, options) / "compiles.sqlite"

    def changed(self) -> list[tuple[str, ...]]:
        return [
            key
            for key, state in self.states.items()
            if tree_digest(state / "out" / _bundle_name(key[0])) != self.digests[key]
        ]


@pytest.fixture(scope="session")
def shared_reduction(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedReductions]:
    """The session's SharedReductions. Tests that share one carry the same `xdist_group` mark, so that one
    worker reduces it."""
    shared = SharedReductions(tmp_path_factory)
    yield shared
    changed = shared.changed()
    assert not changed, f"tests wrote into shared bundles: {changed}"


# Seconds a corpus hang is given where a test reads what it hangs in, not how long it is let run: both corpus
# hangs are in their loop (ComputeTransferCopyin) after 4 s, cold, on an idle machine; 10 s leaves room for a
# busy machine.
HANG_PROBE = 10.0


@pytest.fixture(scope="session")
def corpus_compiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Case, Outcome]]:
    """Every corpus crash.yaml compiled once by the real AKG, forked from warm workers (a hang given
    HANG_PROBE s): {name: (the case as compiled, its outcome)}, for the tests that read what AKG does with the
    originals. The workers are stopped before any test reads it, so no test sees processes it did not start.
    Its tests carry `xdist_group("corpus_compiles")`, so that one worker compiles it."""
    found = {}
    with own_state(tmp_path_factory.mktemp("corpus-compiles")):
        pool = WorkerPool()
        try:
            for crash in corpus_cases():
                case = load_case(crash)
                probe = case.with_(timeout=HANG_PROBE) if case.expect and case.expect.kind == "timeout" else case
                found[crash.parent.name] = probe, compile_case(probe, outputs_of(probe), pool=pool)
        finally:
            pool.close()
    return found


@pytest.fixture(scope="session", autouse=True)
def no_unowned_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Work done outside a test (in a module or session fixture, before `isolated` runs) never reads or
    writes the user's compile cache, whose entries a later run would read: a fixture that forgets to give its
    reducers a cache of their own gets this one, and the session fails."""
    unowned = tmp_path_factory.mktemp("unowned") / "compiles.sqlite"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AKG_REDUCE_CACHE", str(unowned))
        yield
    assert not unowned.exists(), "a fixture ran a reducer without a cache of its own (see no_unowned_cache)"


@pytest.fixture(autouse=True)
def isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test has its own persistent compile cache and its own temp dir (for itself and every reducer
    it starts); afterwards no process it started is alive, no compile is orphaned and no temp dir of ours
    is left in its temp dir."""
    state = tmp_path_factory.mktemp("state")
    tmp = state / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("AKG_REDUCE_CACHE", str(state / "compiles.sqlite"))
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    yield tmp
    stop_probes()  # what the test evaluated as TeLang: the probes end as they do at a reducer's exit
    problems = []
    _, alive = psutil.wait_procs(psutil.Process().children(recursive=True), timeout=10)
    if alive:
        problems.append(f"processes still running: {describe(alive)}")
    try:
        wait_until(lambda: not sandboxed_processes(), 10, "orphaned compiles end")
    except AssertionError:
        problems.append(f"compiles outlived their reducer: {describe(sandboxed_processes())}")
    for proc in alive + sandboxed_processes():
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    left = sorted(p.name for p in tmp.glob(f"{PREFIX}*"))
    if left:
        problems.append(f"temp dirs left: {left}")
    assert not problems, problems
