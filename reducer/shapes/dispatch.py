"""The dispatch plan a user pastes into their model: a short module of MindSpore ops (no akg-reduce import) that
runs each failing call as its bucket, zero-padded and cut back, and lists the static shapes to precompile;
and its check: the module run under MindSpore on the CPU for every call of the list whose shapes compile there
(in_mindspore/dispatch_check.py, sandboxed), every call's results compared with the kernel's reference (a Hybrid
DSL kernel run as Python, a TeLang kernel's compute definition evaluated in numpy), never with AKG's own build of
the same call: a call that compiles and is not bucketed runs as itself, and a comparison with itself would count
as agreeing whatever AKG computes."""

from __future__ import annotations

import json
from typing import Any

from reducer.compile.sandbox import run_sandboxed
from reducer.core.case import Case
from reducer.core.targets import CPU
from reducer.core.templates import templates
from reducer.inputs.shape_list import Shapes
from reducer.kernels.info import attr_data_type, dtype_format
from reducer.kernels.kinds import kind_of, outputs_of
from reducer.shapes.buckets import Found
from reducer.shapes.grid import COMPILES, Cell, cell_case
from reducer.toolchain.launch import akg_build, launch

CHECK_SECONDS = 120.0  # the check's own start, plus ...
SECONDS_PER_CALL = 20.0  # ... a compile and a run per call at most
CHECK_MEMORY_MB = 8192


def _outputs(case: Case, shapes: Shapes) -> list[tuple[tuple[int, ...], str]]:
    call = cell_case(case, shapes, case.target)
    return [(o.shape, o.dtype) for o in outputs_of(call)]


def routes(found: Found) -> tuple[dict[Shapes, Shapes], dict[Shapes, str]]:
    """(a failing call's shapes -> its bucket's, a failing call's shapes -> why no bucket runs it)."""
    bucketed: dict[Shapes, Shapes] = {}
    refused: dict[Shapes, str] = {}
    for bucket in found.chosen:
        for call in bucket.covers:
            if bucket.mask_needed:
                refused[call.shapes] = (
                    f"its bucket {bucket.text} pads {', '.join(bucket.mask_needed)}, which the kernel reduces over "
                    "or mixes: the kernel needs a mask over the padding first"
                )
            else:
                bucketed[call.shapes] = bucket.shapes
    for call, why in found.uncovered:
        refused[call.shapes] = f"no bucket: {why}"
    return bucketed, refused


def module_text(case: Case, cells: list[Cell], found: Found, targets: list[str], bugs: list[str]) -> str:
    """The dispatch module for `case` over the calls of `cells`."""
    bucketed, refused = routes(found)
    everywhere: dict[Shapes, bool] = {}
    for cell in cells:
        everywhere[cell.line.shapes] = everywhere.get(cell.line.shapes, True) and cell.verdict == COMPILES
    static = [s for s, ok in everywhere.items() if ok] + [b.shapes for b in found.chosen if not b.mask_needed]
    failing = len({c.line.shapes for c in cells if c.bug})
    return (
        templates("reducer.shapes", trim_blocks=True)
        .get_template("dispatch.py.j2")
        .render(
            kernel=case.name,
            calls=len(everywhere),
            targets=targets,
            failing=failing,
            bugs=bugs,
            buckets=list(bucketed.items()),
            outputs=[(call, tuple(s for s, _ in _outputs(case, call))) for call in bucketed],
            no_bucket=[(call, repr(why)) for call, why in refused.items()],
            static=list(dict.fromkeys(static)),
        )
    )


def check_module(case: Case, text: str, cells: list[Cell], found: Found) -> dict[str, Any]:
    """The module run under MindSpore on the CPU for every call whose shapes, or its bucket's, compile there;
    what each call gave, and the calls not run and why."""
    on_cpu = {c.line.shapes: c for c in cells if c.target == CPU.name}
    if not kind_of(case).python_function:
        return {"ran": False, "why": f"a {kind_of(case).label} is no op a model calls: dispatch.py is for Custom ops"}
    if not on_cpu:
        return {"ran": False, "why": "cpu is not among the targets: the check runs the kernel on MindSpore's CPU"}
    bucketed, refused = routes(found)
    calls, not_run, used = [], [], {}
    for shapes, cell in on_cpu.items():
        runs_as = bucketed.get(shapes, shapes)
        if shapes in refused:
            not_run.append({"line": cell.line.text, "why": f"dispatch refuses it: {refused[shapes]}"})
        elif runs_as == shapes and cell.verdict != COMPILES:
            not_run.append({"line": cell.line.text, "why": f"it {cell.verdict} on cpu and no bucket runs it"})
        else:
            calls.append((cell.line, shapes))
            used[shapes] = used[runs_as] = True
    if not calls:
        return {"ran": False, "why": "no call runs on the CPU", "not_run": not_run}
    kind, cpu_case = kind_of(case), kind_of(case).on_target(case, CPU.name)
    dtypes = [t.dtype for t in case.inputs]
    outputs = {shapes: [[list(o), d] for o, d in _outputs(case, shapes)] for shapes in used}
    cpu_outputs = outputs_of(cpu_case)
    build, check = akg_build(cpu_case), kind.check_spec(cpu_case, cpu_outputs)
    spec = {
        **check,  # the function, and the reference its wrong-result check uses
        "custom_func_type": kind.custom_func_type,
        "reference": check.get("reference", ""),
        # The op's own attrs, as its reg_info declares them (name, MindSpore's data type, value), and the
        # dtype_format names of its inputs and outputs.
        "reg_attrs": [[name, attr_data_type(value), value] for name, value in case.op_attrs.items()],
        "dtype_formats": [dtype_format(d) for d in (*dtypes, *(o.dtype for o in cpu_outputs))],
        "build": build.name if build else CPU.build_prefix,
        "attrs": case.attrs,
        "outputs": [[[list(s) for s in shapes], outs] for shapes, outs in outputs.items()],
        "calls": [
            {
                "line": line.text,
                "inputs": [[list(s), d] for s, d in zip(shapes, dtypes, strict=True)],
                "outputs": outputs[shapes],
            }
            for line, shapes in calls
        ],
    }
    started = launch(cpu_case, "dispatch_check", "spec.json", "dispatch.py")
    outcome = run_sandboxed(
        started.argv,
        {"spec.json": json.dumps(spec), "dispatch.py": text},
        started.env,
        CHECK_SECONDS + SECONDS_PER_CALL * len(calls),
        CHECK_MEMORY_MB,
    )
    results = [json.loads(line) for line in outcome.output.splitlines() if line.startswith('{"line"')]
    done = {r["line"] for r in results}
    if len(done) < len(calls):
        last = next((line for line in reversed(outcome.output.splitlines()) if line.strip()), "")
        ended = "timed out" if outcome.timed_out else f"ended ({outcome.returncode or outcome.signal})"
        for line, _ in calls:
            if line.text not in done:
                not_run.append({"line": line.text, "why": f"the check {ended} before it: {last[-300:]}"})
    return {
        "ran": True,
        "calls": results,
        "same": sum(r["same"] is True for r in results),
        "differ": [r["line"] for r in results if r["same"] is False],
        "not_run": not_run,
        "seconds": round(outcome.seconds, 1),
    }
