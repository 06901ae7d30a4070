"""Signatures from real AKG output: kind, masked message, location, frames; and what counts as the same bug
(compile/identity.py)."""

from __future__ import annotations

import json
import re
import signal
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import HERE

from reducer.compile import crash_stack
from reducer.compile.identity import (
    SIGNATURE_FORMAT,
    Kind,
    Signature,
    mask,
    matches,
    message_regex,
    same,
    stored_bug_id,
    stored_expectation,
    why_unplaced,
)
from reducer.compile.sandbox import Outcome
from reducer.compile.signature import hang_signature, signature_of
from reducer.core.case import Case, Expectation, TensorSpec
from reducer.core.targets import AICORE
from reducer.kernels.kinds import kind_of
from reducer.toolchain.nvcc import STOPPED

DATA = HERE / "data"


def outcome(output: str, returncode: int | None = 1, sig: int | None = None, **kw: bool) -> Outcome:
    return Outcome(returncode, sig, kw.get("timed_out", False), kw.get("oom", False), 1.0, output)


def test_akg_check_failure_from_a_real_log() -> None:
    sig = signature_of(outcome((DATA / "gemm_tiling.log").read_text()), 60)
    assert sig.kind == "error"
    assert sig.message == "Check failed: gemm_m.size() <= FormatM.size() (N vs. N)"
    assert sig.location == "tiling_utils.cc:193"
    assert sig.component == "tiling"
    assert tuple(map(crash_stack.bare, sig.frames[:2])) == (
        "akg::ir::poly::ExtractLoopIndicesFromMatrices",
        "akg::ir::poly::SpaceAnalyzer::MarkGemmAxes",
    )


def test_success_is_success_whatever_akg_logged() -> None:
    """A compile that exits 0 has no failure, even when AKG logged an error it recovered from (the Ascend
    pipeline logs a tiling that overflows the unified buffer, then tiles again and compiles)."""
    recovered = RECOVERED + "... tiling again ...\n"
    assert signature_of(outcome(recovered, 0), 60).kind is Kind.NONE
    assert signature_of(outcome((DATA / "gemm_tiling.log").read_text(), 0), 60).kind is Kind.NONE
    assert signature_of(outcome(recovered, 1), 60).kind is Kind.ERROR


def test_python_level_failure_skips_the_generic_compile_error() -> None:
    sig = signature_of(outcome((DATA / "hybrid_args.log").read_text()), 60)
    assert sig.kind == "error"
    assert sig.message == "ValueError: #arguments passed should be the same as #arguments defined"
    assert sig.location == "util.py:44"


def test_signal_timeout_memory_and_success() -> None:
    assert signature_of(outcome("", None, signal.SIGSEGV), 60).message == "SIGSEGV"
    assert signature_of(outcome("", None, signal.SIGSEGV), 60).kind == "signal"
    assert signature_of(outcome("", None, timed_out=True), 5).kind == "timeout"
    assert signature_of(outcome("", None, oom=True), 5).kind == "memory"
    assert signature_of(outcome("all good", 0), 5).kind == "none"


PASS_MGR = "akg::ir::poly::SchedulePassMgr::Run"
OUTWARD = (PASS_MGR, PASS_MGR, "akg::ir::poly::Scop::Transform")


def test_a_hang_is_the_pass_it_hangs_in_whenever_the_stack_is_sampled() -> None:
    """Two samples of pointnet_head_hang's native stack (py-spy, innermost first), one taken while
    ComputeTransferCopyin was in a helper: the same bug, with any limit; a hang in another pass is not."""
    inside_helper = ("isl_basic_map_intersect", "akg::ir::poly::DependenceAnalysis")
    pass_frame = ("akg::ir::poly::ComputeTransferCopyin::Run",)
    early = hang_signature((*inside_helper, *pass_frame, *OUTWARD), 15)
    late = hang_signature(("isl_union_map_compute_flow", *pass_frame, *OUTWARD), 5)
    assert early == late and early.key() == late.key()
    assert early.location == "akg::ir::poly::ComputeTransferCopyin::Run" and early.frames == (*pass_frame, *OUTWARD)
    assert matches(late, early.expectation())
    elsewhere = hang_signature(("akg::ir::poly::InitSchedule::Run", *OUTWARD), 15)
    assert not matches(elsewhere, early.expectation())


def test_mask_hides_numbers_addresses_and_paths_not_names() -> None:
    text = "unmapped index 0. name=placeholder(input_0_local, 0x5560) in /a/b/c.cc (3 vs. 2)"
    assert mask(text) == "unmapped index N. name=placeholder(input_0_local, ADDR) in PATH (N vs. N)"


def test_mask_hides_a_kernels_hash_and_keeps_dtype_names() -> None:
    """A kernel's name ends in a hash of its graph (it changes with every edit of the graph); `fp16`, `bf16`
    and `i32` are dtypes, not generated names, and tell two messages apart."""
    raw = "Fused_FloorDiv_Cast_fusion_11203348042722600623: no fp16 rule for cc7"
    assert mask(raw) == "Fused_FloorDiv_Cast_fusion_N: no fp16 rule for ccN"
    assert mask(raw.replace("fp16", "bf16")) != mask(raw)
    assert re.search(message_regex(mask(raw)), raw.replace("11203348042722600623", "985"))


def test_learned_expectation_rejects_another_check_or_place() -> None:
    """A check is its file, its masked message and the function it died in: the same check at another line,
    reached from another caller, is one bug; another function, check or file is another."""
    sig = signature_of(outcome((DATA / "gemm_tiling.log").read_text()), 60)
    expect = sig.expectation()
    assert matches(sig, expect)
    moved = (DATA / "gemm_tiling.log").read_text().replace("tiling_utils.cc:193", "tiling_utils.cc:200")
    assert matches(signature_of(outcome(moved), 60), expect), "the same check at another line: AKG of another release"
    called_elsewhere = moved.replace("SpaceAnalyzer::MarkGemmAxes", "SpaceAnalyzer::MarkConvAxes")
    assert matches(signature_of(outcome(called_elsewhere), 60), expect), "the same check, another caller"
    elsewhere = moved.replace("ExtractLoopIndicesFromMatrices", "ExtractLoopIndicesFromTensors")
    assert not matches(signature_of(outcome(elsewhere), 60), expect), "the same message in another function"
    other_file = (DATA / "gemm_tiling.log").read_text().replace("tiling_utils.cc:193", "tiling_space.cc:193")
    assert not matches(signature_of(outcome(other_file), 60), expect)
    other_check = (DATA / "gemm_tiling.log").read_text().replace("gemm_m.size()", "gemm_n.size()")
    assert not matches(signature_of(outcome(other_check), 60), expect)


def test_user_expectation_matches_by_substring() -> None:
    sig = signature_of(outcome((DATA / "gemm_tiling.log").read_text()), 60)
    assert matches(sig, Expectation("error", "Check failed: gemm_m.size() <= FormatM.size()", "tiling_utils.cc"))
    assert matches(sig, Expectation("error", "", "MarkGemmAxes"))
    assert not matches(sig, Expectation("signal", "", ""))
    assert not matches(sig, Expectation("error", "Unhandled Evaluate", ""))


def test_generated_variable_numbers_are_masked_so_one_bug_keeps_one_signature() -> None:
    raw = "Check failed: !def_count_.count(v): variable cc{} has already been defined, the Stmt is not SSA"
    assert mask(raw.format(7)) == mask(raw.format(4)) and "variable ccN has" in mask(raw.format(7))
    assert "input_0_local" in mask("name=placeholder(input_0_local)") and "int32" in mask("dtype int32")
    assert re.search(message_regex(mask(raw.format(7))), raw.format(12))


CRASHES = DATA / "crashes"


def crash(gdb_file: str, name: int = signal.SIGSEGV, output: str = "", folder: Path = CRASHES) -> Signature:
    """The signature of a compile that died by `name`, with the frames gdb read of the same compile."""
    frames = crash_stack.frames((folder / gdb_file).read_text())
    return signature_of(replace(outcome(output, None, name), stack=frames), 60)


def test_a_crash_is_known_by_where_it_died() -> None:
    """pointnet_head_segv under gdb: AKG's innermost function is the place; the machinery frames of TVM's
    IRMutator, and the TVM helper it died in (air::floordiv, out of line in 2.9 only), are not."""
    sig = crash("pointnet_head_segv_ms2.10.0.gdb.txt")
    assert sig.kind == "signal" and sig.message == "SIGSEGV"
    assert sig.frames[:2] == (
        "akg::ir::CPULocalReconstruction::GetNewArgs<air::ir::Call>(air::ir::Call*)",
        "akg::ir::CPULocalReconstruction::Mutate_(air::ir::Call*, air::Expr&)",
    )
    assert sig.one_line() == f"signal: SIGSEGV in {sig.frames[0]}"
    older = crash("pointnet_head_segv_ms2.9.0.gdb.txt")
    assert matches(older, sig.expectation()) and older.key() == sig.key()


def test_two_crashes_in_different_places_are_two_bugs() -> None:
    segv = crash("pointnet_head_segv_ms2.10.0.gdb.txt")
    abort_frames = crash("pointnet_matmul_isl_abort_ms2.10.0.gdb.txt").frames
    elsewhere = replace(segv, frames=abort_frames)  # the same signal, another place
    assert not matches(elsewhere, segv.expectation()) and elsewhere.key() != segv.key()
    unknown = replace(segv, frames=())  # gdb missing, or the crash did not recur under it
    assert not matches(unknown, segv.expectation())
    assert why_unplaced(unknown) is not None and why_unplaced(segv) is None


def test_an_abort_says_what_was_thrown() -> None:
    output = (CRASHES / "pointnet_matmul_isl_abort_ms2.10.0.gdb.txt").read_text()
    sig = crash("pointnet_matmul_isl_abort_ms2.10.0.gdb.txt", signal.SIGABRT, output)
    assert sig.raw == "SIGABRT (isl_val.c:16: position or range out of bounds)"
    assert sig.message == "SIGABRT"
    assert sig.frames[0] == "akg::ir::poly::CpuMemoryManager::InsertMarkerForGemm(isl::schedule_node&)"


def test_frames_without_symbols_are_named_by_their_offset_in_the_library() -> None:
    """An Ascend crash deep in IRMutator recursion: 80 frames of `?? () from libakg.so`."""
    lib = "<site-packages>/mindspore/lib/plugin/ascend/libakg.so"
    lines = [f"#{i} 0x00007fffe{i:07x} in ?? () from {lib}" for i in range(80)]
    lines += ["From                To                  Syms Read   Shared Object Library",
              f"0x00007fffe0000000  0x00007ffff0000000  Yes (*)     {lib}"]  # fmt: skip
    assert crash_stack.frames("\n".join(lines)) == tuple(f"libakg.so+{i:#x}" for i in range(crash_stack.KEEP_FRAMES))


def test_a_crash_deep_in_a_recursion_is_placed_by_the_pass_that_recursed() -> None:
    """fp16_buffer_load on MindSpore 2.7.2's Ascend build overflows the stack 47,546 frames deep in loop
    unrolling: the 60 innermost frames are all IRMutator machinery, the 40 outermost name the pass."""
    sig = crash("fp16_buffer_load_aicore_ms2.7.2.gdb.txt")
    assert sig.frames[:3] == (
        "air::ir::LoopUnroller::Mutate_(air::ir::AttrStmt*, air::Stmt&)",
        "air::ir::UnrollLoop(air::Stmt, int, int, int, bool)",
        "akg::PassMgr::Run()",
    )
    other = crash("pointnet_head_segv_ms2.10.0.gdb.txt")
    assert sig.key() != other.key() and why_unplaced(sig) is None


def test_a_check_is_the_same_bug_on_an_older_release() -> None:
    """fp16_buffer_load on MindSpore 2.9.0 fails at buffer.cc:324, on 2.10.0 at buffer.cc:323: one bug."""
    now = signature_of(outcome((DATA / "stage" / "fp16_buffer_load.log").read_text()), 60)
    older = signature_of(outcome((DATA / "releases" / "fp16_buffer_load_ms2.9.0.log").read_text()), 60)
    assert (now.location, older.location) == ("buffer.cc:323", "buffer.cc:324")
    assert matches(older, now.expectation()) and older.key() == now.key()
    written = Expectation(**now.expectation().to_dict())  # as the bundle's crash.yaml has it
    assert matches(older, written)
    stored = {**now.to_dict(), "target": "cpu", "format": SIGNATURE_FORMAT}  # as a night stores it
    assert matches(older, stored_expectation(stored)), "the night's recheck on 2.9: the same bug, not CHANGED"


# What AKG's Ascend pipeline logs when a tiling overflows the unified buffer, and then tiles again.
RECOVERED = (
    "[ERROR] AKG:2026-12-06-00:17:17.318.529 [storage_flatten.cc:213] [pass] Check failed: alloc_size <= "
    "total_size: Allocation exceed bound of memory tag local.UB: need 1048576 bits, total alloc 2097152 bits.\n"
)


def test_reaching_cce_code_generation_is_not_a_failure_of_akg() -> None:
    """AKG's Ascend pipeline ran to its end: CANN's ccec, missing here, wrote no object for AKG to read."""
    sig = signature_of(outcome((DATA / "ascend_cce_stop.log").read_text()), 60)
    assert sig.kind is Kind.CODEGEN and sig.message == "reaches CCE code generation, which needs CANN's compiler"
    assert sig.location == "build_cce.cc:1056"
    assert re.search(AICORE.codegen_stop, (DATA / "ascend_cce_stop.log").read_text())


def test_an_error_akg_recovered_from_is_not_the_signature() -> None:
    """The real outputs with a UB overflow AKG logged and recovered from before them: the compile still
    reaches CCE code generation, or still fails where it raised, not where it first logged an error."""
    reached = signature_of(outcome(RECOVERED + (DATA / "ascend_cce_stop.log").read_text()), 60)
    assert reached.kind is Kind.CODEGEN
    failed = signature_of(outcome(RECOVERED + (DATA / "ascend_realize_compress.log").read_text()), 60)
    assert failed.kind == "error" and failed.location == "realize_compress.cc:389"
    assert failed.message.startswith("Check failed: index_remap[i].count(v): unmapped index N.")
    assert failed == signature_of(outcome((DATA / "ascend_realize_compress.log").read_text()), 60)


def wrong_result(kind: str, ops: str) -> Signature:
    """The signature of the check's output for a wrong result of `kind` in a kernel of `ops`."""
    detail = json.dumps({"output": 0, "wrong": 3, "wrong_kind": kind, "ops": ops})
    output = f"AKG-REDUCE-DETAIL {detail}\nAKG-REDUCE-CHECK mismatch: output 0 max error 1 above tolerance 0.001\n"
    return signature_of(Outcome(1, None, False, False, 1.0, output), 60)


def test_a_wrong_result_is_its_kind_of_wrong_and_its_ops() -> None:
    """Two kernels that compute wrong in different ops are two bugs, one kernel has one id wherever it is
    checked; the reduction keeps the fix the kind of wrong needs (its ops are what it removes)."""
    transpose = wrong_result("nan", "Transpose:float16")
    assert transpose.kind is Kind.MISMATCH and transpose.message == "wrong result: NaN where the reference has a number"
    assert same(transpose, wrong_result("nan", "Transpose:float16"))
    assert not same(transpose, wrong_result("nan", "Round:float32"))
    assert not same(transpose, wrong_result("outside", "Transpose:float16"))
    assert transpose.bug_id("cpu") != wrong_result("nan", "Cast:float32 Transpose:float16").bug_id("cpu")
    assert matches(wrong_result("nan", "Cast:float32 Neg:float16 Transpose:float16"), transpose.expectation())
    assert not matches(wrong_result("outside", "Transpose:float16"), transpose.expectation())
    crash = signature_of(Outcome(None, 11, False, False, 1.0, "", stack=("akg::ir::A",), stack_by="gdb"), 60)
    assert crash.bug_id("cpu") != crash.bug_id("cuda") and crash.bug_id("cuda").endswith("@cuda")
    for sig, target in ((transpose, "cpu"), (crash, "cuda")):  # the night's id of what it stored: the same
        assert stored_bug_id({**sig.to_dict(), "target": target, "format": SIGNATURE_FORMAT}) == sig.bug_id(target)


def test_a_check_is_where_it_died_not_the_expression_builder_it_is_in() -> None:
    """TVM's constant folder checks for a division by zero (const_fold.h, a header inlined into its callers),
    real MindSpore 2.10 logs: reached from the Hybrid DSL parser for a `a[i] // 0` the user wrote (it dies in
    air::floordiv, called from Python), and from TVM's simplifier while AKG lowers `a[i] // (i - i)` in a
    branch never taken. The expression builders are skipped as in a crash: the simplifier's FloorDiv visitor is
    where the second died, the first, with no frame of AKG's or TVM's own code, is placed at the builder Python
    called. Two bugs (a reduction of the second must not slide to a literal `// 0`); and the simplifier's
    FloorMod visitor failing the folder's check for `%`, at another line of const_fold.h, is a third: another
    overload, another fix, as for a crash."""
    parser = signature_of(outcome((DATA / "const_fold" / "from_hybrid_parser.log").read_text()), 60)
    simplify = signature_of(outcome((DATA / "const_fold" / "from_simplify.log").read_text()), 60)
    assert parser.location == simplify.location == "const_fold.h:230"
    assert parser.frames[:2] == (
        "air::arith::TryConstFold<air::ir::FloorDiv>(air::Expr, air::Expr)",
        "air::floordiv(air::Expr, air::Expr)",
    )
    assert simplify.died_in == "air::arith::RewriteSimplifier::Impl::Mutate_(air::ir::FloorDiv*, air::Expr&)"
    assert parser.died_in == "air::floordiv(air::Expr, air::Expr)"
    assert not same(parser, simplify) and not matches(parser, simplify.expectation())
    modulo = signature_of(outcome((DATA / "const_fold" / "floormod_from_simplify.log").read_text()), 60)
    assert modulo.location == "const_fold.h:256" and modulo.died_in.endswith("Mutate_(air::ir::FloorMod*, air::Expr&)")
    assert not same(modulo, simplify) and not matches(modulo, simplify.expectation())
    moved = signature_of(outcome((DATA / "const_fold" / "from_simplify.log").read_text().replace(":230]", ":231]")), 60)
    assert same(moved, simplify), "the same check a line further down in another release"


def test_nvcc_on_akgs_cuda_is_a_codegen_bug_and_nvcc_that_cannot_run_is_the_environment() -> None:
    """The real nvcc of CUDA 13 rejecting AKG's float16 code because cuda_fp16.hpp defines htanh too: this
    machine's CUDA, not AKG. An error nvcc reports in the generated source itself is AKG's codegen bug, with
    nvcc's message masked; an architecture nvcc dropped is the environment."""
    clash = signature_of(outcome((DATA / "nvcc" / "htanh_clash_cuda13.log").read_text()), 60)
    assert clash.kind is Kind.ENVIRONMENT and "htanh" in clash.raw and not clash.failed
    nvcc_said = (DATA / "nvcc" / "htanh_clash_cuda13.log").read_text()
    invalid = re.sub(r'function "htanh" has already been defined \(previous definition at line \d+ of [^)]*\)',
                     'identifier "cc12" is undefined', nvcc_said)  # fmt: skip
    sig = signature_of(outcome(invalid), 60)
    assert sig.kind is Kind.INVALID_CUDA and sig.failed and sig.message == 'identifier "ccN" is undefined'
    assert sig.location == "my_kernel.cu" and same(sig, signature_of(outcome(invalid.replace("cc12", "cc3")), 60))
    fatal = "nvcc fatal   : Unsupported gpu architecture 'compute_70'"
    dropped = re.sub(r"^/\S+my_kernel\.cu\(\d+\): error: .*$", fatal,
                     nvcc_said, flags=re.M)  # fmt: skip
    assert signature_of(outcome(dropped), 60).kind is Kind.ENVIRONMENT


def _frame_lines(gdb_file: str) -> list[str]:
    return [ln for ln in (CRASHES / gdb_file).read_text().splitlines() if re.match(r"#\d+ ", ln)]


def _stack(lines: list[str]) -> str:
    """gdb's print of a stack made of `lines` (frames of a real print), numbered again from #0."""
    return "\n".join(re.sub(r"^#\d+", f"#{n}", line) for n, line in enumerate(lines))


def test_crashes_in_two_tvm_passes_are_two_bugs() -> None:
    """Two real crashes on MindSpore 2.10 (corpus/telang_deep_*): a chain of 8000 additions overflows the
    stack in TVM's rewrite simplifier (called by AKG's AttrForLayoutOp), exp composed 8000 times in TVM's
    TensorReplacer (called when AKG normalises the schedule). Both run under akg::lower::StageLower::RunTo;
    each is placed in its TVM pass, with the AKG callers kept as context."""
    simplifier = crash("telang_deep_sum_ms2.10.0.gdb.txt")
    replacer = crash("telang_deep_exp_ms2.10.0.gdb.txt")
    assert simplifier.died_in == "air::arith::RewriteSimplifier::Impl::Mutate_(air::ir::Add*, air::Expr&)"
    assert replacer.died_in == "air::op::TensorReplacer::Mutate_(air::ir::Call*, air::Expr&)"
    assert not same(simplifier, replacer) and simplifier.key() != replacer.key()
    assert not matches(replacer, simplifier.expectation())


def test_a_crash_in_a_tvm_function_is_placed_there_not_at_its_akg_caller() -> None:
    """The real frames of the TensorReplacer crash with its recursion cut to one level, as a crash inside the
    pass rather than a stack overflow shows, against a crash in the TVM function that called it
    (air::NormalizeBody): both have akg::LowerInitWithSchedule as their first AKG frame, where frames used to
    stop, and are two bugs; one TVM function crashing under two AKG passes is one."""
    lines = _frame_lines("telang_deep_exp_ms2.10.0.gdb.txt")
    first_level = lines[:6]
    outer = [ln for ln in lines if int(ln[1:].split()[0]) >= 25124]
    in_replacer = crash_stack.frames(_stack(first_level + outer))
    in_normalize = crash_stack.frames(_stack(outer[outer.index(next(ln for ln in outer if "NormalizeBody" in ln)) :]))
    assert in_replacer[0] == "air::op::TensorReplacer::Mutate_(air::ir::Call*, air::Expr&)"
    assert any(f.startswith("akg::LowerInitWithSchedule(") for f in in_replacer)
    assert in_normalize[0].startswith("air::NormalizeBody(")
    segv = signature_of(outcome("", None, signal.SIGSEGV), 60)
    replacer, normalize = replace(segv, frames=in_replacer), replace(segv, frames=in_normalize)
    assert not same(replacer, normalize)
    under_another_pass = tuple(
        f.replace("akg::LowerInitWithSchedule", "akg::ir::ReconstructLayout") for f in in_replacer
    )
    assert same(replacer, replace(segv, frames=under_another_pass))


TRUTH = DATA / "truth"
TRUTH_RELEASES = ("2.7.2", "2.9.0", "2.10.0")
# Real SIGFPEs of TVM's constant folder dividing INT64_MIN by -1 (tests/data/truth/README.md), grouped by the
# fix each needs; every case is recorded on each of TRUTH_RELEASES.
TRUTH_BUGS = [
    # the rewrite simplifier's floordiv overload, reached from AKG's AttrForLayoutOp (in a sum, in a guard)
    # and from the Hybrid DSL parser's Simplify
    {"te_floordiv_simplify", "hy_floordiv_guard", "hy_floordiv_index"},
    {"te_floormod_simplify", "hy_floormod_guard"},  # its floormod overload: another fix
    {"te_truncdiv_simplify"},  # its truncdiv (Div) overload
    {"floordiv_in_builder"},  # no own frame: TVM's floordiv builder, called from Python
    {"floormod_in_builder"},  # ... and its floormod builder
]


@pytest.mark.timeout(60)
def test_the_truth_set_falls_into_its_bugs_on_every_release() -> None:
    """One TVM fault reached from several passes and callers is one bug; the overloads of one visitor, and
    helpers of one folder, are as many bugs as they need fixes; and each case keeps its id on MindSpore 2.7.2,
    2.9.0 and 2.10.0 (TryConstFold<FloorDiv> is a frame of its own on 2.10 only)."""
    groups: dict[str, set[str]] = {}
    for name in set().union(*TRUTH_BUGS):
        for release in TRUTH_RELEASES:
            sig = crash(f"{name}_ms{release}.gdb.txt", signal.SIGFPE, folder=TRUTH)
            assert why_unplaced(sig) is None, (name, release)
            groups.setdefault(sig.key(), set()).add(name)
    assert sorted(map(sorted, groups.values())) == sorted(map(sorted, TRUTH_BUGS))


@pytest.mark.timeout(30)
def test_a_crash_without_an_own_frame_is_placed_at_the_helper_its_caller_called() -> None:
    """2.10 keeps TryConstFold<FloorDiv> out of line under air::floordiv, 2.9 and 2.7.2 inline it: the helper
    the caller called is the place on all three, and it is not the simplifier's crash of the same signal."""
    builder = [crash(f"floordiv_in_builder_ms{r}.gdb.txt", signal.SIGFPE, folder=TRUTH) for r in TRUTH_RELEASES]
    assert builder[-1].frames[0] == "air::arith::TryConstFold<air::ir::FloorDiv>(air::Expr, air::Expr)"
    assert {sig.died_in for sig in builder} == {"air::floordiv(air::Expr, air::Expr)"}
    simplifier = crash("te_floordiv_simplify_ms2.10.0.gdb.txt", signal.SIGFPE, folder=TRUTH)
    assert not same(builder[-1], simplifier) and not matches(simplifier, builder[-1].expectation())


@pytest.mark.timeout(30)
def test_crashes_with_no_frame_read_are_never_one_bug_on_the_signal_alone() -> None:
    unread = signature_of(outcome("", None, signal.SIGFPE), 60)
    assert unread.place == "" and why_unplaced(unread) is not None
    assert not same(unread, unread) and not matches(unread, unread.expectation())


@pytest.mark.timeout(30)
def test_visitor_dispatch_is_machinery_not_the_place() -> None:
    """A functor's VisitExpr between the crash and the overload it dispatched to: the overload is the place."""
    lines = (TRUTH / "te_floordiv_simplify_ms2.10.0.gdb.txt").read_text().splitlines()[:30]  # the innermost
    dispatch = "#1 0x1 in air::ir::ExprFunctor<air::Expr (air::Expr const&)>::VisitExpr(air::Expr const&) () from "
    with_dispatch = _stack([lines[0], dispatch + crash_stack.AKG_LIBRARY, *lines[1:]])
    assert crash_stack.frames(with_dispatch) == crash_stack.frames(_stack(lines))


HYBRID_ADD = """def add(x):
    out = output_tensor(x.shape, x.dtype)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] + x[i, j]
    return out
"""
HYBRID_SUM = """def row_sum(x):
    out = output_tensor((x.shape[0],), x.dtype)
    for i in range(x.shape[0]):
        out[i] = 0.0
        for j in range(x.shape[1]):
            out[i] = out[i] + x[i, j]
    return out
"""


def checked_ops(source: str, shape: tuple[int, ...]) -> str:
    """The ops a wrong-result check of this Hybrid DSL kernel echoes: what the reducer puts in its spec."""
    case = Case("k", source, source.split("(")[0].removeprefix("def "), (TensorSpec(shape, "float32"),))
    return kind_of(case).ops(case)


@pytest.mark.timeout(30)
def test_an_elementwise_add_and_a_sum_that_compute_wrong_are_two_bugs() -> None:
    """`x + x` and a sum over a row are both an Add: each op's role (elementwise, a reduction over which axis)
    tells them apart, and the reduced axis is a position, not a size."""
    add = wrong_result("values", checked_ops(HYBRID_ADD, (4, 8)))
    row_sum = wrong_result("values", checked_ops(HYBRID_SUM, (4, 8)))
    assert add.bug_id("cpu") != row_sum.bug_id("cpu")
    assert row_sum.bug_id("cpu") == wrong_result("values", checked_ops(HYBRID_SUM, (64, 3))).bug_id("cpu")


@pytest.mark.timeout(30)
def test_one_kernel_wrong_at_two_sizes_is_one_bug_whatever_the_size_makes_of_its_error() -> None:
    """At one size the worst error lands under the 1 % cut (precision), at another over it (values), at a third
    an element is NaN: one kernel, one fix, one id; the finer kind stays in what the result says. Writing
    outside its outputs is another fix."""
    ops = checked_ops(HYBRID_SUM, (4, 8))
    precise, values, nan = (wrong_result(kind, ops) for kind in ("precision", "values", "nan"))
    assert precise.bug_id("cpu") == values.bug_id("cpu") == nan.bug_id("cpu")
    assert matches(values, nan.expectation()) and matches(nan, precise.expectation())
    assert "NaN where the reference has a number" in nan.one_line() and "1 %" in precise.one_line()
    outside = wrong_result("outside", ops)
    assert outside.bug_id("cpu") != values.bug_id("cpu") and not matches(outside, values.expectation())


@pytest.mark.timeout(30)
def test_a_reduction_of_wrong_values_never_slides_to_a_merely_imprecise_kernel() -> None:
    """One id for a kernel on either side of the 1 % cut, but a reduction that keeps a kernel computing values
    off by more never takes a candidate that is only imprecise: AKG's approximate float32 Exp alone is that,
    and no bug. A reduction of an imprecise kernel takes either."""
    ops = checked_ops(HYBRID_SUM, (4, 8))
    values, precise = wrong_result("values", ops), wrong_result("precision", ops)
    assert values.bug_id("cpu") == precise.bug_id("cpu")
    assert not matches(precise, values.expectation()) and matches(values, precise.expectation())


@pytest.mark.timeout(30)
def test_signatures_are_equal_exactly_when_the_identity_says_one_bug() -> None:
    """`==`, sets and Counters agree with `same`: a check moved a line (other raw text, other frames' order)
    is one signature; another check in the same file is another; two crashes with no frame read are two."""
    moved = outcome("[ERROR] AKG:2026-12-02-15:22:22.025.224 [pass.cc:11] [t] Check failed: boom 0x55aa\n")
    here = signature_of(outcome(moved.output.replace("pass.cc:11", "pass.cc:10").replace("0x55aa", "0x77")), 60)
    there = signature_of(moved, 60)
    other = signature_of(outcome(moved.output.replace("boom", "bang")), 60)
    assert here == there and here.raw != there.raw and len({here, there}) == 1
    assert here != other and len({here, there, other}) == 2
    unread = [signature_of(outcome("", None, signal.SIGFPE), 60) for _ in range(2)]
    assert unread[0] != unread[1] and len(set(unread)) == 2


@pytest.mark.timeout(30)
def test_a_place_spells_standard_types_without_their_default_arguments() -> None:
    """What a demangler spells out and a build may spell otherwise (the library ABI's `__cxx11`, default
    allocators, traits and deleters) is left out: the same function, shorter; its parameter types stay."""
    rewrite = (
        "akg::ir::StoragePlanRewriterCCE::DoRewrite(std::__cxx11::basic_string<char, std::char_traits<char>, "
        "std::allocator<char> >, std::vector<std::unique_ptr<akg::ir::StoragePlanRewriterCCE::StorageEntry, "
        "std::default_delete<akg::ir::StoragePlanRewriterCCE::StorageEntry> >, std::allocator<std::unique_ptr<"
        "akg::ir::StoragePlanRewriterCCE::StorageEntry, std::default_delete<akg::ir::StoragePlanRewriterCCE::"
        "StorageEntry> > > >&)"
    )
    assert crash_stack.function(rewrite) == (
        "akg::ir::StoragePlanRewriterCCE::DoRewrite(std::string, "
        "std::vector<std::unique_ptr<akg::ir::StoragePlanRewriterCCE::StorageEntry>>&)"
    )
    assert crash_stack.function("f(std::vector<int, std::allocator<int> >)") != crash_stack.function("f(int)")


@pytest.mark.timeout(30)
def test_a_crash_in_a_passs_callback_is_placed_in_the_callback_not_in_the_walk() -> None:
    """A lambda a pass hands to PostOrderVisit is named by the function it is in (a demangled lambda has
    spaces inside its own parentheses, which are no return type); the walk that called it is machinery. Two
    passes' callbacks are two bugs."""

    def crash_in(function: str) -> Signature:
        walk = "air::ir::IRApplyVisit::Visit(air::NodeRef const&)"
        frames = [f"{function}::{{lambda(air::NodeRef const&)#1}}::operator()(air::NodeRef const&) const", walk]
        return Signature(Kind.SIGNAL, "SIGSEGV", "", tuple(map(crash_stack.function, frames)))

    reduce_axes = crash_in("akg::ir::CollectReduceAxes(air::Stmt const&)")
    realize = crash_in("akg::ir::FindInnerRealize(air::Stmt const&)")
    assert reduce_axes.place.startswith("akg::ir::CollectReduceAxes(air::Stmt&)::{lambda(air::NodeRef&)#1}")
    assert not same(reduce_axes, realize) and reduce_axes.key() != realize.key()
    assert crash_stack.bare("akg::ir::(anonymous namespace)::V::Visit_(air::ir::Call const*)") == (
        "akg::ir::(anonymous namespace)::V::Visit_"
    )


NVCC_TRACE = 'Traceback (most recent call last):\n  File "/site/akg/tvm/contrib/nvcc.py", line 84, in compile_cuda\n'


@pytest.mark.timeout(30)
def test_what_the_machine_lacks_is_the_environment_and_what_ptxas_rejects_is_akgs() -> None:
    """A compile that cannot import what it needs, or whose nvcc finds no usable gcc, says nothing of the
    kernel; ptxas rejecting the kernel AKG generated (more shared memory than a GPU has) is AKG's bug, one bug
    whatever the kernel's name."""
    module = 'Traceback (most recent call last):\n  File "/site/akg/__init__.py", line 20, in <module>\n'
    missing = signature_of(outcome(module + "ModuleNotFoundError: No module named 'decorator'\n"), 60)
    assert missing.kind is Kind.ENVIRONMENT and "decorator" in missing.raw and not missing.failed
    gcc = signature_of(outcome(NVCC_TRACE + "ValueError: gcc version is None, please install gcc 7.3 or later\n"), 60)
    assert gcc.kind is Kind.ENVIRONMENT and "gcc" in gcc.message

    def ptxas(kernel: str) -> Signature:
        said = f"ptxas error   : Entry function '{kernel}' uses too much shared data (0x10000 bytes, 0xc000 max)"
        return signature_of(outcome(NVCC_TRACE + f"RuntimeError: Compilation error:\n{said}\n"), 60)

    rejected = ptxas("Fused_Mul_split_1234_kernel0")
    assert rejected.kind is Kind.INVALID_CUDA and rejected.failed
    assert rejected.message == "Entry function 'KERNEL' uses too much shared data (ADDR bytes, ADDR max)"
    assert same(rejected, ptxas("Fused_Add_split_98_kernel0"))


@pytest.mark.timeout(30)
def test_a_compile_stopped_before_nvcc_is_no_error_akg_logged_and_recovered_from() -> None:
    """AKG logs an error it recovers from (a tiling it retries), then the compile reaches nvcc, which the shim
    stops: how far it got decides (codegen), not the recovered line; an error whose check raised still does."""
    recovered = "[ERROR] AKG:2026-12-02-15:22:22.025.224 [tiling_utils.cc:193] [tiling] Check failed: x\n"
    stopped = signature_of(outcome(recovered + NVCC_TRACE + f"RuntimeError: Compilation error:\n{STOPPED}\n"), 60)
    assert stopped.kind is Kind.CODEGEN and not stopped.failed
    raised = recovered + '  File "/src/poly/tiling/tiling_utils.cc", line 193\nTVMError: Check failed: x\n'
    assert signature_of(outcome(raised + STOPPED + "\n"), 60).kind is Kind.ERROR
