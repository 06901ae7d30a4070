"""Triage against the real AKG: inputs AKG turns down are usage errors, something missing on the machine
is an environment problem, and every shipped corpus failure stays a compiler bug; a reduction says the
verdict in reduction.json, at the top of ISSUE.md and in the CLI's last lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ADD_KERNEL, CORPUS, needs_akg, needs_ascend

from reducer.compile.identity import Signature
from reducer.compile.sandbox import Outcome
from reducer.compile.signature import signature_of
from reducer.core.case import Case, Expectation, TensorSpec
from reducer.core.errors import EnvironmentBroken
from reducer.diagnosis.stage import failing_stage
from reducer.diagnosis.triage import COMPILER_BUG, ENVIRONMENT, USAGE_ERROR, Triage, triage
from reducer.inputs.load import load_input
from reducer.search.oracle import Compiler, Oracle
from reducer.session import Settings, compiler_for, original_signature

pytestmark = [pytest.mark.akg, needs_akg]


def add_case(**changes: object) -> Case:
    inputs = (TensorSpec((16,), "float32"), TensorSpec((16,), "float32"))
    return Case("add", ADD_KERNEL, "add", inputs, timeout=120).with_(**changes)


def verdict(case: Case) -> Triage:
    """The triage of `case` as it fails now, with the real AKG (warm workers)."""
    with compiler_for(Settings(jobs=2)) as (compiler, _):
        with Oracle(Expectation("none", ""), 2, compiler) as probe:
            signature, outcome = probe.run(case)
        return triage_of(case, signature, outcome, compiler)


def triage_of(case: Case, signature: Signature, outcome: Outcome, compiler: Compiler) -> Triage:
    """The triage of `case` failing with `signature`; what it tries is compiled by `compiler`."""
    assert signature.kind != "none", "the case compiles"
    with Oracle(signature.expectation(), 2, compiler) as oracle:
        stage = failing_stage(outcome.output, signature, None)
        return triage(case, case, signature, stage, outcome.output, oracle)


@pytest.mark.parametrize(
    ("attrs", "named", "fixed"),
    [
        ({"dim": [1, 2]}, "`dim` = [1, 2]", "left out"),  # Failed to parse attribute: dim = [1, 2] as string
        ({"pragma_rmselfdep": 7}, "`pragma_rmselfdep` = 7", "left out"),  # ... must be 0 or 1, but found 7
        ({"enable_auto_inline": "yes"}, "`enable_auto_inline` = 'yes'", "as true"),  # a bare TVMError
    ],
)
def test_an_attr_akg_turns_down_is_a_usage_error(attrs: dict, named: str, fixed: str) -> None:
    found = verdict(add_case(attrs=attrs))
    assert found.verdict == USAGE_ERROR and not found.upstream, found
    assert named in found.reason and "the original compiles" in found.reason
    assert f"the original with the attr `{named.split('`')[1]}` {fixed}: the kernel compiles" in found.evidence
    assert "do not file it upstream" in found.advice


def test_a_missing_optional_package_is_the_environment_and_the_attr_asking_for_it_is_named() -> None:
    """`online_tuning` makes AKG import its tuner, which the wheel lacks: no AKG bug, refused before any
    reduction, naming the module and the attr that asks for it."""
    with pytest.raises(EnvironmentBroken) as refused:
        original_signature(add_case(attrs={"online_tuning": 1}), runs=1)
    said = str(refused.value)
    assert "install auto_tune" in said and "the attr `online_tuning` asks for it" in said


def test_a_missing_compiler_program_is_an_environment_problem() -> None:
    found = verdict(add_case(env={"PATH": "/nonexistent"}))
    assert found.verdict == ENVIRONMENT, found
    assert "`g++`" in found.reason and "PATH=/nonexistent" in found.advice


CRASHES = sorted(p.parent.name for p in CORPUS.glob("*/crash.yaml"))


@pytest.mark.timeout(600)
@pytest.mark.xdist_group("corpus_compiles")
@pytest.mark.parametrize("name", CRASHES)
def test_every_corpus_failure_stays_a_compiler_bug(name: str, corpus_compiles: dict[str, tuple[Case, Outcome]]) -> None:
    """Triaged from the original's one shared compile (a hang's: a short probe), with the real AKG for
    whatever the triage tries."""
    if name not in corpus_compiles:
        needs_ascend()
    probe, outcome = corpus_compiles[name]
    signature = signature_of(outcome, probe.time_limit)
    with compiler_for(Settings(jobs=2)) as (compiler, _):
        found = triage_of(load_input(CORPUS / name / "crash.yaml"), signature, outcome, compiler)
    assert found.verdict == COMPILER_BUG, found


@pytest.mark.timeout(600)
def test_a_reduced_usage_error_says_so_in_the_bundle_and_the_terminal(tmp_path: Path) -> None:
    (tmp_path / "kernel.py").write_text(ADD_KERNEL)
    crash = tmp_path / "crash.yaml"
    inputs = [{"shape": [16], "dtype": "float32"}] * 2
    crash.write_text(yaml.safe_dump({"name": "add_dim_list", "kernel": "kernel.py", "inputs": inputs,
                                     "attrs": {"dim": [1, 2], "enable_auto_inline": False}}))  # fmt: skip
    run = subprocess.run(
        [sys.executable, "-m", "reducer", str(crash), "-o", str(tmp_path / "out"), "-j", "2", "--no-diagnosis"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 5, run.stderr[-3000:]  # 5: not an AKG bug, a script can tell
    bundle = tmp_path / "out" / "add_dim_list"
    reduction = json.loads((bundle / "reduction.json").read_text())
    assert reduction["triage"]["verdict"] == USAGE_ERROR
    assert yaml.safe_load((bundle / "crash.yaml").read_text())["attrs"] == {"dim": [1, 2]}
    issue = (bundle / "ISSUE.md").read_text()
    assert "\nTriage: usage error: AKG rejects the attr `dim`" in issue and "### Triage" in issue  # a fact
    readme = (bundle / "README.md").read_text()  # the verdict and what to do, told to the user
    assert "**Not an AKG bug: a usage error.**" in readme and "What to do: give `dim` a value AKG accepts" in readme
    last = run.stdout.strip().splitlines()[-2:]
    assert last[0].startswith("verdict: usage-error: AKG rejects the attr `dim` = [1, 2]")
    assert last[0].endswith("without the attr the original compiles")
    assert last[1].startswith("what to do: give `dim` a value AKG accepts")
