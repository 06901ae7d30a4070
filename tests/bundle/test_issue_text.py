"""ISSUE.md as the AKG maintainer who receives it reads it, for each shape of failure (a crash by a signal, a failed
check, a hang, a wrong result, a kernel captured from a user's run): a title line, `/device cpu`, the AKG build and
the OS distribution, the kernel and a script that runs it inline, the kernel JSON folded, the text that places the
bug in "Related log", nothing addressed to the user (that is the bundle's README.md) and no local path. Rendered
from hand-built bundle inputs, as the session hands them, without compiling anything."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from reducer import __version__
from reducer.bundle.write import CHECKOUT, BundleInput, Origin, Redactor, RunWorkaround, issue_title, write_bundle
from reducer.compile.akg import check_program, os_distribution
from reducer.compile.identity import Kind, Signature, mask
from reducer.compile.signature import HANG_MESSAGE
from reducer.core.case import Case, TensorSpec
from reducer.core.files import user_cache_dir
from reducer.core.targets import AICORE, CPU, CUDA
from reducer.diagnosis.stage import FailingStage
from reducer.diagnosis.triage import Triage
from reducer.in_mindspore.mismatch_run import DETAIL, VERDICT
from reducer.kernels.kinds import GRAPH, outputs_of, size_of
from reducer.toolchain.builds import AkgBuild
from reducer.toolchain.launch import Toolchain

pytestmark = pytest.mark.timeout(60)

HYBRID = """def head(features, weights):
    scores = output_tensor((features.shape[0], weights.shape[1]), features.dtype)
    for b in range(features.shape[0]):
        for j in range(weights.shape[1]):
            scores[b, j] = 0.0
            for c in range(features.shape[1]):
                scores[b, j] = scores[b, j] + exp(features[b, c]) * weights[c, j]
    return scores
"""
NOTICE = "Please set tiling repo path specified by env AKG_WHITE_LIST_PATH or current path"
SITE = f"{sys.prefix}/lib/python3.11/site-packages"
LIBAKG = f"{SITE}/mindspore/lib/plugin/cpu/libakg.so"
ARGS = "std::vector<std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > >"
CHECK = "Check failed: gemm_m.size() <= FormatM.size() (3 vs. 2) : "
CHECK_LOG = f"""[ERROR] AKG:2026-12-07-18:33:04.645.215 [tiling_utils.cc:193] [tiling] {CHECK}
Stack trace:
  [bt] (0) {LIBAKG}(akg::ir::poly::ExtractLoopIndicesFromMatrices({ARGS})+0x197d) [0x7fca837b7c2d]
  [bt] (1) {LIBAKG}(akg::ir::poly::SpaceAnalyzer::MarkGemmAxes(akg::ir::poly::ProvideEntry const&)+0x752) [0x7fca8]
{NOTICE}
[ERROR] AKG:2026-12-07-18:33:04.645.215 [tiling_utils.cc:193] [tiling] {CHECK}
Stack trace:
  [bt] (0) {LIBAKG}(akg::ir::poly::ExtractLoopIndicesFromMatrices({ARGS})+0x197d) [0x7fca837b7c2d]
  [bt] (1) {LIBAKG}(akg::ir::poly::SpaceAnalyzer::MarkGemmAxes(akg::ir::poly::ProvideEntry const&)+0x752) [0x7fca8]
  [bt] (2) {LIBAKG}(akg::ir::poly::SpaceAnalyzer::IdentifyInsnType()+0x132e) [0x7fca8372c4ee]

Traceback (most recent call last):
  File "{SITE}/mindspore/_akg/akg/ms/message.py", line 164, in _compilewithjson_to_module
    composite.build(kernel_info, attrs)
  File "{SITE}/mindspore/_akg/akg/tvm/_ffi/_ctypes/function.py", line 207, in __call__
    raise get_last_ffi_error()
TVMError: {CHECK}
"""
CRASH_FRAMES = (
    "akg::ir::CPULocalReconstruction::GetNewArgs<air::ir::Call>",
    "akg::ir::CPULocalReconstruction::Mutate_",
    "akg::ir::ReconstructLayout",
    "akg::PassMgr::Run",
)
HANG_FRAMES = ("akg::ir::poly::ComputeTransferCopyin", "akg::ir::poly::PlaceDataCopyBelowImpl", "akg::PassMgr::Run")
KERNEL_JSON_LINE = "RuntimeError: Compile error, args|json str: " + json.dumps({"op_desc": [{"name": "Add"}] * 80})


def _toolchain() -> Toolchain:
    entry = f"{SITE}/mindspore/_extends/parallel_compile/akg_compiler/compiler.py"
    return Toolchain(sys.executable, f"{SITE}/mindspore", "2.10.0", "3.11.7", entry)


def _input(case: Case, signature: Signature, log: str, **more: object) -> BundleInput:
    build = AkgBuild("cpu", f"{SITE}/mindspore/lib/plugin/cpu", 117769408, "6b15991fe03485bdc8e34588136b83d7")
    host = {
        "os": "Debian GNU/Linux 12 (bookworm)",
        "kernel": "Linux 6.18.44",
        "machine": "x86_64",
        "akg_reduce": __version__,
        "python": "3.11.7",
        "mindspore": "2.10.0",
        "akg_build_name": "cpu",
        "libakg": f"lib/plugin/cpu/libakg.so, {build.size} bytes, sha256 {build.sha256}",
        "libakg_short": f"lib/plugin/cpu/libakg.so, sha256 {build.sha256[:12]}",
        "codegen_here": "",
        "reach": "",
    }
    fields: dict[str, object] = {
        "original": case,
        "original_files": {"crash.yaml": "name: x\n"},
        "reduced": case,
        "outputs": outputs_of(case),
        "signature": signature,
        "expectation": signature.expectation(),
        "log": log,
        "ir_dir": None,
        "toolchain": _toolchain(),
        "sizes": {"original": size_of(case), "reduced": size_of(case)},
        "stats": {
            "compiles": 40,
            "invalid": 3,
            "seconds": 61.2,
            "repeat": 1,
            "original_runs": "3 of 3",
            "original_seconds": 20.0,
        },
        "confirmed": 3,
        "confirm_runs": 3,
        "stage": FailingStage("", "", "", "", ""),
        "host": host,
        "side_files": {},
        "build": build,
        "triage": Triage("compiler-bug", "a crash inside the compiler", ("the failure: a crash",), ADVICE),
    }
    fields.update(more)
    return BundleInput(**fields)  # type: ignore[arg-type]


ADVICE = "file ISSUE.md upstream (MindSpore's issue tracker, component AKG)"


def _hybrid() -> Case:
    return Case("head", HYBRID, "head", (TensorSpec((3, 17), "float32"), TensorSpec((17, 1), "float32")))


def _graph_mismatch() -> Case:
    return GRAPH.smallest(CPU.name).with_(name="abs_nan")


def _write(b: BundleInput, out: Path) -> tuple[str, str]:
    bundle = write_bundle(b, out)
    return (bundle / "ISSUE.md").read_text(), (bundle / "README.md").read_text()


def _section(issue: str, heading: str) -> str:
    return issue.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]


def _assert_for_a_maintainer(issue: str, out: Path, repro_inline: bool = True) -> None:
    """What every ISSUE.md holds, whatever failed."""
    first = issue.splitlines()[0]
    assert re.fullmatch(r"# \[AKG\]\[CPU\] .+", first) and len(first) - 2 < 100, first
    assert "\n/device cpu\n" in issue and "/device CPU" not in issue
    assert "- **AKG version**: the build shipped in the MindSpore wheel, `lib/plugin/cpu/libakg.so, sha256 " in issue
    assert "**OS platform and distribution (e.g., Linux Ubuntu 16.04)**: Debian GNU/Linux 12 (bookworm)" in issue
    assert f"- **Reduced with**: akg-reduce {__version__}" in issue
    for section in ("Describe the current behavior", "Describe the expected behavior", "Steps to reproduce the issue",
                    "Related log / screenshot", "Special notes for this issue"):  # fmt: skip
        assert f"\n## {section}\n" in issue
    assert "<details><summary>kernel.info: the kernel JSON MindSpore hands to AKG</summary>" in issue
    if repro_inline:
        assert "<details><summary>repro.py (needs only MindSpore)</summary>" in issue
    else:  # the check with its reference: too long to paste
        assert re.search(
            r"\n`repro.py` \(\d+ KB: the check and its reference, which need only MindSpore\) is attached", issue
        )
    assert "unknown" not in issue.lower()
    assert NOTICE not in _section(issue, "Related log / screenshot")
    assert "What to do" not in issue and "file ISSUE.md" not in issue
    for local in (str(out), str(CHECKOUT), sys.prefix, str(Path.home()), "/tmp/"):
        assert local not in issue, local


def test_a_crash_by_a_signal_is_titled_by_its_place_and_shows_the_gdb_frames(tmp_path: Path) -> None:
    crash = Signature(Kind.SIGNAL, "SIGSEGV", "", CRASH_FRAMES, raw="SIGSEGV", read_by="gdb")
    issue, readme = _write(_input(_hybrid(), crash, NOTICE + "\n"), tmp_path / "out")
    _assert_for_a_maintainer(issue, tmp_path / "out")
    assert issue.startswith(f"# [AKG][CPU] SIGSEGV in {CRASH_FRAMES[0]}\n")
    log = _section(issue, "Related log / screenshot")
    assert "backtrace by gdb" in log and all(f"  {frame}\n" in log for frame in CRASH_FRAMES)
    steps = _section(issue, "Steps to reproduce the issue")
    assert "def head(features, weights):" in steps  # the kernel, inline
    assert "ops.Custom(\n    kernel(head)," in steps and 'func_type="hybrid"' in steps  # as its user runs it
    assert "KERNEL_INFO = " in steps  # repro.py
    assert '{"data_type": "str", "name": "func_name", "value": "head"}' in steps  # the kernel JSON, pretty
    assert "Failing stage" not in issue  # nothing known, nothing said
    assert readme.startswith("# head: the bundle akg-reduce wrote") and f"What to do: {ADVICE}." in readme


def test_a_failed_check_shows_its_line_and_the_stack_akg_printed(tmp_path: Path) -> None:
    check = Signature(Kind.ERROR, mask(CHECK), "tiling_utils.cc:193", ("akg::ir::poly::X",), "tiling", CHECK)
    stage = FailingStage("poly auto-tiling", "SpaceAnalyzer::MarkGemmAxes", "", "", "src/poly/tiling_utils.cc:193")
    issue, _ = _write(_input(_hybrid(), check, CHECK_LOG, stage=stage), tmp_path / "out")
    _assert_for_a_maintainer(issue, tmp_path / "out")
    title = "# [AKG][CPU] Check failed: gemm_m.size() <= FormatM.size() (3 vs. 2) at tiling_utils.cc:193\n"
    assert issue.startswith(title)
    log = _section(issue, "Related log / screenshot")
    assert f"[tiling] {CHECK.rstrip()}\nStack trace:\n" in log and "[bt] (2) libakg.so(" in log  # the full stack
    assert "ExtractLoopIndicesFromMatrices(...)+0x197d" in log and "basic_string" not in log  # cut to its name
    assert "Traceback" not in log and SITE not in issue
    assert "Failing stage: **poly auto-tiling**, in `SpaceAnalyzer::MarkGemmAxes`" in issue


def test_a_check_whose_numbers_changed_in_the_reduction_is_still_found_in_the_minimal_log(tmp_path: Path) -> None:
    """The signature is the original's, the log the minimal case's: their addresses and sizes differ."""
    original = "Check failed: index_remap[i].count(v): unmapped index 0. name=placeholder(x_local, 0x56129e59d960)"
    minimal = original.replace("0x56129e59d960", "0x5581aa02c1f0")
    log = f"[ERROR] AKG:2026-12-07 [realize_compress.cc:389] [pass] {minimal}\nStack trace:\n  [bt] (0) {LIBAKG}(f)\n"
    log += f"Traceback (most recent call last):\nTVMError: {minimal}\nValueError: Compile error\n"
    check = Signature(Kind.ERROR, mask(original), "realize_compress.cc:389", ("akg::ir::X",), "pass", original)
    issue, _ = _write(_input(_hybrid(), check, log), tmp_path / "out")
    related = _section(issue, "Related log / screenshot")
    assert f"[realize_compress.cc:389] [pass] {minimal}\nStack trace:" in related and "ValueError" not in related


def test_a_python_error_shows_its_whole_traceback(tmp_path: Path) -> None:
    raw = "ValueError: Unsupported dtype bool"
    log = f'{NOTICE}\nTraceback (most recent call last):\n  File "a.py", line 3, in f\n    g()\n{raw}\n'
    error = Signature(Kind.ERROR, raw, "a.py:3", ("f",), "python", raw)
    issue, _ = _write(_input(_hybrid(), error, log), tmp_path / "out")
    related = _section(issue, "Related log / screenshot")
    assert f'Traceback (most recent call last):\n  File "a.py", line 3, in f\n    g()\n{raw}\n' in related


def test_a_hang_shows_its_sampled_stack(tmp_path: Path) -> None:
    raw = "compile did not finish within 20 s"
    hang = Signature(Kind.TIMEOUT, HANG_MESSAGE, HANG_FRAMES[0], HANG_FRAMES, raw=raw, read_by="py-spy")
    stage = FailingStage("poly scop construction", "ComputeTransferCopyin", "", "", HANG_FRAMES[0])
    issue, _ = _write(_input(_hybrid(), hang, NOTICE + "\n", stage=stage), tmp_path / "out")
    assert "Failing stage: **poly scop construction**" in issue and "failing check" not in issue  # no check
    _assert_for_a_maintainer(issue, tmp_path / "out")
    assert issue.startswith(f"# [AKG][CPU] hang in {HANG_FRAMES[0]}\n")
    log = _section(issue, "Related log / screenshot")
    assert "sampled by py-spy at the deadline" in log and all(f"  {frame}\n" in log for frame in HANG_FRAMES)
    assert "It gives the\n   compile 60 s and reports a hang" in issue


def test_a_wrong_result_shows_the_check_output_and_the_graph_listing(tmp_path: Path) -> None:
    message = "wrong result: NaN where the reference has a number"
    wrong = Signature(Kind.MISMATCH, message, "Abs:float32", (), "akg-vs-reference", f"{message} (output 0 ...)")
    detail = {"output": 0, "max_error": float("inf"), "wrong": 2, "size": 2, "unwritten": 2, "tolerance": 1e-5}
    detail |= {"problems": [], "undefined": 0, "elements": [{"index": [0], "expected": 0.5, "actual": float("nan")}]}
    log = (
        f"{NOTICE}\noutput 0: max abs error inf (2 of 2 compared elements off, 2 never written)\n"
        f"  at [0]: expected 0.5, AKG gives nan\n{DETAIL} {json.dumps(detail)}\n{VERDICT} mismatch: output 0 ...\n"
    )
    case = _graph_mismatch()
    issue, _ = _write(_input(case, wrong, log, check=check_program(case, outputs_of(case))), tmp_path / "out")
    _assert_for_a_maintainer(issue, tmp_path / "out", repro_inline=False)
    assert issue.startswith("# [AKG][CPU] wrong results: NaN where the reference has a number in Abs:float32\n")
    related = _section(issue, "Related log / screenshot")
    assert "```text\noutput 0: max abs error inf" in related and "  at [0]: expected 0.5, AKG gives nan\n```" in related
    assert DETAIL not in related and VERDICT not in related
    steps = _section(issue, "Steps to reproduce the issue")
    assert "= Abs(input_0" in steps and "ops.Custom" not in steps  # a graph is listed, not run as a Custom op
    assert '"name": "Abs"' in steps.split("<details><summary>kernel.info")[1]  # its JSON, pretty, folded
    assert "\n\n| element of output 0 | expected | AKG gives |" in issue  # a table after a blank line renders


def test_a_captured_run_quotes_its_last_error_without_the_kernel_json_or_local_paths(tmp_path: Path) -> None:
    run = f"`{sys.executable} {CHECKOUT}/examples/voxel.py` (exit status 1)"
    passes = RunWorkaround("MS_DEV_GRAPH_KERNEL_FLAGS='--disable_cluster_ops=Add'", "the run passes", True)
    origin = Origin(run, "akg_kernel_meta/Fused_Add_1.info, written by the run", KERNEL_JSON_LINE, (passes,))
    crash = Signature(Kind.SIGNAL, "SIGSEGV", "", CRASH_FRAMES, raw="SIGSEGV", read_by="gdb")
    issue, readme = _write(_input(_hybrid(), crash, NOTICE, origin=origin), tmp_path / "out")
    _assert_for_a_maintainer(issue, tmp_path / "out")
    current = _section(issue, "Describe the current behavior")
    assert "which stopped with `RuntimeError: Compile error, args|json str: {…}`" in current
    assert '"op_desc"' not in current and "`python <akg-reduce>/examples/voxel.py` (exit status 1)" in current
    assert "<details><summary>Graph-kernel settings tried on the user's run (1)</summary>" in issue
    assert "- On your run: `MS_DEV_GRAPH_KERNEL_FLAGS='--disable_cluster_ops=Add'` (the run passes)." in readme


def test_a_usage_error_says_so_as_a_fact_and_leaves_the_advice_to_the_readme(tmp_path: Path) -> None:
    check = Signature(Kind.ERROR, mask(CHECK), "tiling_utils.cc:193", ("akg::ir::poly::X",), "tiling", CHECK)
    usage = Triage("usage-error", "AKG rejects the attr `dim`", ("without the attr it compiles",), "give `dim` a value")
    issue, readme = _write(_input(_hybrid(), check, CHECK_LOG, triage=usage), tmp_path / "out")
    assert issue.startswith("# [AKG][CPU] Check failed")
    assert "Triage: usage error: AKG rejects the attr `dim`" in issue and "give `dim` a value" not in issue
    assert readme.split("\n\n")[2].startswith("**Not an AKG bug: a usage error.** Why: AKG rejects the attr `dim`")
    assert "What to do: give `dim` a value." in readme


def test_titles_stay_short_and_name_the_device() -> None:
    long = Signature(Kind.ERROR, "m", "some_long_file_name.cc:1234", (), raw="Check failed: " + "x" * 200)
    for target in (CPU, CUDA, AICORE):
        assert len(issue_title(long, target)) < 100
    assert issue_title(long, CUDA).startswith("[AKG][GPU] Check failed: xxx")
    assert issue_title(long, CUDA).endswith("… at some_long_file_name.cc:1234")
    hang = Signature(Kind.TIMEOUT, HANG_MESSAGE, "akg::ir::RealizeCompress", ())
    assert issue_title(hang, AICORE) == "[AKG][Ascend] hang in akg::ir::RealizeCompress"


def test_the_redactor_covers_the_checkout_the_venv_the_cache_and_the_temp_dir() -> None:
    redact = Redactor(_toolchain(), {})
    text = (
        f"{sys.executable} {CHECKOUT}/examples/x.py; {Path(sys.prefix) / 'bin' / 'pip'}; {user_cache_dir()}/toolchains;"
        f" /tmp/pytest-of-me/x; {Path.home()}/data"
    )
    said = redact.text(text)
    assert said == (
        "python <akg-reduce>/examples/x.py; <venv>/bin/pip; <akg-reduce-cache>/toolchains; <tmp>/pytest-of-me/x; ~/data"
    )


def test_the_os_is_the_distribution(tmp_path: Path) -> None:
    release = tmp_path / "os-release"
    release.write_text('NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\n')
    assert os_distribution(release) == "Ubuntu 22.04.4 LTS"
    assert os_distribution(tmp_path / "none")  # the platform's name
