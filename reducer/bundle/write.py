"""The upstream bundle: collect the minimal case's files, logs, IR and statistics, redact local facts,
render ISSUE.md and repro.py from templates, and publish the folder and a .tar.gz atomically."""

from __future__ import annotations

import getpass
import json
import os
import pprint
import re
import shutil
import socket
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from reducer.kernels import graph as graphs
from reducer.compile.akg import MISMATCH_SCRIPT, Toolchain, host_facts, mismatch_spec, side_files
from reducer.core.case import Case, Expectation, case_to_yaml
from reducer.diagnosis.diagnose import Diagnosis
from reducer.core.errors import InputError
from reducer.kernels.info import build_info
from reducer.compile.signature import Signature, message_regex
from reducer.kernels.size import Size
from reducer.diagnosis.stage import failing_stage

MARKER = ".akg-reduce-bundle"
SECRET_NAME = re.compile(r"TOKEN|KEY|PASSWORD|SECRET|PASSWD|CREDENTIAL", re.IGNORECASE)
KEY_LOG_LINES = 12


class Redactor:
    """Replaces local paths, the user and the host name in text that leaves this machine."""

    def __init__(self, toolchain: Toolchain, env: dict[str, str]) -> None:
        pairs: list[tuple[str, str]] = [(v, "<redacted>") for k, v in env.items() if SECRET_NAME.search(k)]
        if toolchain.mindspore_dir:
            pairs.append((str(Path(toolchain.mindspore_dir).parent), "<site-packages>"))
        pairs += [
            (toolchain.python, "python"),
            (sys.executable, "python"),
            (str(Path(toolchain.compiler_script).parent), "<compiler-dir>"),
            (tempfile.gettempdir().rstrip("/") + "/", "<tmp>/"),
            (os.getcwd(), "<cwd>"),
            (str(Path.home()), "~"),
        ]
        self.pairs = sorted({(a, b) for a, b in pairs if len(a) > 1}, key=lambda p: -len(p[0]))
        self.words = [w for w in {getpass.getuser(), socket.gethostname()} if len(w) > 2 and w != "root"]

    def text(self, text: str) -> str:
        for old, new in self.pairs:
            text = text.replace(old, new)
        for word in self.words:
            text = re.sub(rf"\b{re.escape(word)}\b", "<redacted>", text)
        return re.sub(r"<tmp>/akg-reduce-[\w-]+", "<workdir>", text)

    @staticmethod
    def env(env: dict[str, str]) -> dict[str, str]:
        return {k: ("<redacted>" if SECRET_NAME.search(k) else v) for k, v in env.items()}


@dataclass
class BundleInput:
    original: Case
    original_files: dict[str, str]  # name -> text, the input as given
    reduced: Case
    outputs: tuple[Any, ...]
    signature: Signature
    expectation: Expectation
    log: str
    ir_dir: Path | None
    toolchain: Toolchain
    sizes: dict[str, Size]
    stats: dict[str, Any]
    confirmed: int
    confirm_runs: int
    diagnosis: Diagnosis | None = None


def _key_log(log: str, signature: Signature) -> str:
    lines = [ln for ln in log.splitlines() if ln.strip()]
    hits = [i for i, ln in enumerate(lines) if "[ERROR]" in ln or signature.raw[:40] in ln]
    start = hits[0] if hits else max(0, len(lines) - KEY_LOG_LINES)
    return "\n".join(lines[start : start + KEY_LOG_LINES])


def _render(template: str, **context: Any) -> str:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reducer.bundle", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
    )
    return env.get_template(template).render(**context)


def _mismatch_repro(case: Case) -> str:
    """reducer/compile/mismatch_run.py with the case's spec embedded: it needs only MindSpore."""
    runner = Path(MISMATCH_SCRIPT).read_text()
    spec = pprint.pformat(mismatch_spec(case), sort_dicts=False, width=110)
    return runner.replace("EMBEDDED_SPEC = None  # repro.py sets the spec here", f"EMBEDDED_SPEC = {spec}", 1)


def _kernel_kind(case: Case, info: dict[str, Any]) -> str:
    if case.graph is not None:
        return f"fused graph kernel of {len(info['op_desc'])} ops (MindSpore graph-kernel fusion)"
    return "Hybrid DSL kernel (Custom op, func_type='hybrid')"


def _files(b: BundleInput, redact: Redactor) -> dict[str, str]:
    reduced = b.reduced.with_(env=redact.env(b.reduced.env))
    info = build_info(reduced, b.outputs)
    env_facts = host_facts(b.toolchain)
    where = b.signature.location.split(":")[0] if b.signature.location else ""
    stage = failing_stage(b.log, b.signature, b.ir_dir)
    context = {
        "name": b.reduced.name,
        "hardware": b.reduced.target.upper() if b.reduced.target == "cpu" else b.reduced.target,
        "env": env_facts,
        "target": b.reduced.target,
        "kernel_kind": _kernel_kind(reduced, info),
        "function": b.reduced.function or info.get("op", ""),
        "graph_text": graphs.describe(info) if reduced.graph is not None else "",
        "inputs": b.reduced.inputs,
        "inputs_text": ", ".join(f"{list(t.shape)} {t.dtype}" for t in b.reduced.inputs),
        "signature": b.signature,
        "stage": stage,
        "source": reduced.source,
        "attrs_json": json.dumps(reduced.attrs),
        "env_vars": " ".join(f"{k}={v}" for k, v in reduced.env.items()),
        "needs_decorator": True,
        "key_log": redact.text(_key_log(b.log, b.signature)),
        "original": b.sizes["original"],
        "reduced": b.sizes["reduced"],
        "stats": b.stats,
        "confirmed": b.confirmed,
        "confirm_runs": b.confirm_runs,
        "diagnosis": b.diagnosis,
        "mismatch": reduced.mismatch,
    }
    repro = (
        _mismatch_repro(reduced)
        if reduced.mismatch
        else _render(
            "repro.py.j2",
            name=b.reduced.name,
            mindspore=env_facts["mindspore"],
            info_json=pprint.pformat(info, sort_dicts=False, width=110),
            attrs_json=repr(reduced.attrs),
            env_json=repr(reduced.env),
            files_json=repr(side_files(reduced)),
            kind=b.signature.kind,
            message_regex=message_regex(b.signature.message),
            where=where,
            timeout=int(max(b.reduced.time_limit, 60)),
            target=b.reduced.target,
        )
    )
    reduction = {
        "signature": b.signature.to_dict(),
        "stage": stage.to_dict(),
        "original": b.sizes["original"].to_dict(),
        "reduced": b.sizes["reduced"].to_dict(),
        **b.stats,
        "confirmations": b.confirmed,
        "confirmation_runs": b.confirm_runs,
        "diagnosis": b.diagnosis.to_dict() if b.diagnosis else None,
    }
    env_json = {**env_facts, "compile_env": reduced.env, "attrs": reduced.attrs, "target": reduced.target}
    kernel_file = "kernel.info" if reduced.graph is not None else "kernel.py"
    files = {
        "ISSUE.md": _render("issue.md.j2", **context),
        "repro.py": repro,
        **({} if reduced.graph is not None else {"kernel.py": reduced.source}),
        "kernel.info": json.dumps(info, indent=4),
        "crash.yaml": case_to_yaml(reduced, kernel_file, b.expectation),
        "compile.log": b.log,
        "env.json": json.dumps(env_json, indent=2),
        "reduction.json": json.dumps(reduction, indent=2, default=str),
    }
    for name, text in b.original_files.items():
        files[f"original/{name}"] = text
    return {name: redact.text(text) for name, text in files.items()}


def refuse_foreign(target: Path) -> None:
    """An existing folder that akg-reduce did not write is never replaced."""
    if target.exists() and not (target / MARKER).exists():
        raise InputError(f"{target} exists and is not an akg-reduce bundle; not overwriting it (choose another -o)")


def _publish(staging: Path, target: Path) -> None:
    """Replace `target` by `staging` with renames only, so a reader never sees half a bundle."""
    if target.exists():
        refuse_foreign(target)
        old = target.with_name(f".{target.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
        staging.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        staging.rename(target)


def write_bundle(b: BundleInput, out_dir: Path) -> Path:
    """Write OUT/<name>/ and OUT/<name>.tar.gz; returns the bundle folder."""
    out_dir.mkdir(parents=True, exist_ok=True)
    redact = Redactor(b.toolchain, b.original.env)
    staging = Path(tempfile.mkdtemp(prefix=f".{b.reduced.name}.", dir=out_dir))
    try:
        for name, text in _files(b, redact).items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        if b.ir_dir is not None and b.ir_dir.exists():
            _copy_redacted(b.ir_dir, staging / "ir", redact.text)
        (staging / MARKER).write_text("written by akg-reduce\n")
        os.chmod(staging, 0o755)
        target = out_dir / b.reduced.name
        _publish(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _archive(target)
    return target


def _copy_redacted(src: Path, dst: Path, redact: Callable[[str], str]) -> None:
    for path in sorted(src.rglob("*")):
        if path.is_file():
            out = dst / path.relative_to(src)
            out.parent.mkdir(parents=True, exist_ok=True)
            try:
                out.write_text(redact(path.read_text(encoding="utf-8")), encoding="utf-8")
            except UnicodeDecodeError:
                shutil.copyfile(path, out)


def _archive(folder: Path) -> Path:
    final = folder.with_name(folder.name + ".tar.gz")
    fd, tmp = tempfile.mkstemp(prefix=f".{folder.name}.", suffix=".tar.gz", dir=folder.parent)
    os.close(fd)
    with tarfile.open(tmp, "w:gz") as tar:
        tar.add(folder, arcname=folder.name, filter=lambda ti: None if ti.name.endswith(MARKER) else ti)
    os.chmod(tmp, 0o644)
    os.replace(tmp, final)
    return final
