"""plan.md and plan.html: the plan of `reduce shapes` for a person: the pass rate per target and per bug, the
shape map's picture, the bugs with their cases and bundles, what padding each dim does, the buckets, the
dispatch module and its check, and every call's verdict per target."""

from __future__ import annotations

from typing import Any

from reducer.core.templates import templates


def verdict_words(entry: dict[str, Any]) -> str:
    """One call on one target, short: 'compiles (right)', 'fails: bug 3f2a…', 'invalid: why'."""
    verdict = entry["verdict"]
    if entry.get("bug"):
        return f"{verdict}: {entry['bug']}"
    if verdict == "compiles" and entry.get("reach"):
        return f"compiles {entry['reach']}"
    if verdict == "compiles" and entry.get("checked", "").startswith("right"):
        return "compiles, right"
    return verdict


def compile_words(rate: dict[str, Any]) -> str:
    """How a target's calls that compile were compiled: 'compile', or 'compile up to nvcc (not run)' when their
    compiles stopped before the code generator (never counted as compiling on the GPU or the NPU)."""
    return f"compile {rate['reach']}" if rate.get("reach") else "compile"


def check_words(check: dict[str, Any]) -> str:
    """What the check of dispatch.py found, in a sentence."""
    if not check["ran"]:
        return f"Not checked: {check['why']}."
    said = f"Checked on MindSpore's CPU: {check['same']} of {len(check['calls'])} calls give the same results"
    if check["differ"]:
        said += f"; different for {', '.join(check['differ'])}"
    if check["not_run"]:
        said += f"; {len(check['not_run'])} calls not run ({check['not_run'][0]['why']}, ...)"
    return said + "."


def _calls(plan: dict[str, Any]) -> dict[str, dict[str, str]]:
    calls: dict[str, dict[str, str]] = {}
    for entry in plan["shapes"]:
        calls.setdefault(entry["line"], {})[entry["target"]] = verdict_words(entry)
    return calls


def plan_markdown(plan: dict[str, Any], figure: str) -> str:
    template = templates("reducer.shapes", trim_blocks=True).get_template("plan.md.j2")
    return template.render(plan=plan, calls=_calls(plan), check=check_words(plan["dispatch"]["check"]), figure=figure)


def plan_html(plan: dict[str, Any], svg: str) -> str:
    template = templates("reducer.shapes", trim_blocks=True).get_template("plan.html.j2")
    return template.render(plan=plan, calls=_calls(plan), check=check_words(plan["dispatch"]["check"]), svg=svg)
