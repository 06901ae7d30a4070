"""The oracle's parallel search: the earliest interesting candidate wins whatever finishes first, compiles
that can no longer matter are killed, and a guessed next query is compiled ahead and then reused; a hang's
candidates are looked at early and only a hang in the bug's place runs on to the full limit."""

from __future__ import annotations

import itertools
import threading

from reducer.compile.sandbox import CompileCancelled, HangCheck, Outcome
from reducer.compile.signature import HANG_MESSAGE
from reducer.core.case import Case, Expectation, TensorSpec
from reducer.search.oracle import PASSES, Oracle
from reducer.search.passes import Edit
from reducer.toolchain.nvcc import STOPPED

SOURCE = "def f(a):\n    b = output_tensor(a.shape, a.dtype)\n    b[0] = a[0]\n    b[1] = a[1]\n    return b\n"
EXPECT = Expectation("error", "Check failed: boom", "t.cc:1", exact=True)


def case(tag: int, **attrs: object) -> Edit:
    """An edit whose case compiles as `attrs` say (see SlowCompiler)."""
    after = Case("k", SOURCE, "f", (TensorSpec((2,), "float32"),), attrs={"tag": tag, **attrs})
    return Edit(f"candidate {tag}", after)


class SlowCompiler:
    """Fails (interestingly) when attrs say `hit`; takes `seconds` attr long unless cancelled."""

    def __init__(self) -> None:
        self.cancelled: list[int] = []
        self.compiled: list[int] = []
        self.lock = threading.Lock()

    def __call__(self, c: Case, outputs, cancel: threading.Event | None = None, **_: object) -> Outcome:
        if cancel is not None and cancel.wait(float(c.attrs.get("seconds", 0))):
            with self.lock:
                self.cancelled.append(c.attrs["tag"])
            raise CompileCancelled
        with self.lock:
            self.compiled.append(c.attrs["tag"])
        text = "[ERROR] AKG:x [t.cc:1] [t] Check failed: boom" if c.attrs.get("hit") else ""
        return Outcome(1 if text else 0, None, False, False, 0.0, text)


def test_parallel_answers_equal_sequential_ones_for_every_pattern() -> None:
    for pattern in itertools.product([False, True], repeat=4):
        cands = [case(i, hit=h, seconds=0.01 * (4 - i)) for i, h in enumerate(pattern)]  # later ones finish first
        with (
            Oracle(EXPECT, jobs=1, compiler=SlowCompiler()) as one,
            Oracle(EXPECT, jobs=3, compiler=SlowCompiler()) as three,
        ):
            assert one.first_interesting(cands) is three.first_interesting(cands), pattern


def test_a_compile_after_the_winner_is_killed_not_waited_for() -> None:
    compiler = SlowCompiler()
    with Oracle(EXPECT, jobs=2, compiler=compiler) as oracle:
        winner = case(0, hit=True, seconds=0.2)
        loser = case(1, seconds=30)
        assert oracle.first_interesting([winner, loser]) is winner
    assert compiler.cancelled == [1] and compiler.compiled == [0]


def test_the_guessed_next_query_is_compiled_ahead_and_reused() -> None:
    compiler = SlowCompiler()
    now, after = case(0, hit=True, seconds=0.2), case(1, hit=True)
    with Oracle(EXPECT, jobs=2, compiler=compiler) as oracle:
        assert oracle.first_interesting([now], successor=lambda c: after) is now
        assert oracle.first_interesting([after]) is after
        assert oracle.counters.compiles == 2  # `after` compiled once, ahead of its query
    assert sorted(compiler.compiled) == [0, 1]


HANG = Expectation("timeout", HANG_MESSAGE, "akg::ir::poly::ComputeTransferCopyin::Run", exact=True)


class HangingCompiler:
    """Hangs in the pass its attrs name (`hang`), else finishes after `seconds`; what the sandbox does with
    a HangCheck is played here: the stack is shown at `after`, and only a hang there runs on."""

    def __init__(self) -> None:
        self.checks: list[float] = []

    def __call__(self, c: Case, outputs, cancel=None, hang_check: HangCheck | None = None, **_: object) -> Outcome:
        place = c.attrs.get("hang")
        if place is None:
            return Outcome(0, None, False, False, float(c.attrs.get("seconds", 0.1)), "")
        assert hang_check is not None
        self.checks.append(hang_check.after)
        stack = (f"akg::ir::poly::{place}::Run", "akg::ir::poly::SchedulePassMgr::Run")
        seconds = c.time_limit if hang_check.same(stack) else hang_check.after
        return Outcome(None, None, True, False, seconds, "", stack=stack)


def test_a_hang_elsewhere_is_stopped_early_and_the_limit_follows_finishing_compiles() -> None:
    compiler = HangingCompiler()
    with Oracle(HANG, compiler=compiler) as oracle:
        slow = Case("k", SOURCE, "f", (TensorSpec((2,), "float32"),), attrs={"seconds": 3.0}, timeout=60)
        assert not oracle.interesting(slow)
        assert not oracle.interesting(slow.with_(attrs={"hang": "ComputeSchedule"}))
        assert oracle.interesting(slow.with_(attrs={"hang": "ComputeTransferCopyin"}))
    assert compiler.checks == [5 * 3.0, 5 * 3.0]  # HANG_FACTOR x the slowest finishing compile
    assert oracle.counters.reconfirmed == 1  # only the hang in the bug's pass ran on to the full limit


def test_gdb_watches_the_compiles_of_a_crash_only_once_they_take_long_enough() -> None:
    """A crash by a signal is placed by gdb: watching every compile from its start costs a little on each,
    a second run under gdb costs a whole compile per crash. The oracle asks for watching once the bug is a
    crash and its compiles take a second or more on average, never for any other bug."""

    class Timed:
        def __init__(self, seconds: float) -> None:
            self.seconds = seconds
            self.traced: list[bool] = []

        def __call__(self, c: Case, outputs, traced: bool = False, **_: object) -> Outcome:
            self.traced.append(traced)
            return Outcome(None, 11, False, False, self.seconds, "", stack=("akg::ir::A",), stack_by="gdb")

    crash = Expectation("signal", "SIGSEGV", "", "akg::ir::A", exact=True)
    runs = ((crash, 3.5, [False, True, True]), (crash, 0.3, [False] * 3), (EXPECT, 3.5, [False] * 3))
    for expect, seconds, watched in runs:
        compiler = Timed(seconds)
        with Oracle(expect, compiler=compiler) as oracle:
            for tag in range(3):
                oracle.run(case(tag).after)
        assert compiler.traced == watched, (expect.kind, seconds)


def test_candidates_run_nvcc_only_when_the_bug_is_nvccs_and_a_stop_short_of_it_is_incomplete() -> None:
    """Whether a candidate's compile runs nvcc is decided by the bug, not by its being a candidate: an AKG error
    is decided before nvcc (stopping there is cheaper), an invalid-cuda bug only by nvcc. A compile that stopped
    before nvcc says nothing of an invalid-cuda bug: incomplete, never a pass."""

    class Stopping:
        def __init__(self) -> None:
            self.stops: list[bool] = []

        def __call__(self, c: Case, outputs, stop_at_codegen: bool = False, **_: object) -> Outcome:
            self.stops.append(stop_at_codegen)
            return Outcome(1, None, False, False, 0.0, f"RuntimeError: Compilation error:\n{STOPPED}")

    invalid_cuda = Expectation("invalid-cuda", 'identifier "ccN" is undefined', "my_kernel.cu", exact=True)
    for expect, stops, outcome in ((EXPECT, True, PASSES), (invalid_cuda, False, "incomplete: ")):
        compiler = Stopping()
        with Oracle(expect, compiler=compiler) as oracle:
            said = oracle.outcome(case(0).after)
            oracle.run(case(1).after)  # the original's runs and a check always run nvcc
        assert compiler.stops == [stops, False], expect.kind
        assert said.startswith(outcome), said
