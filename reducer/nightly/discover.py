"""Find the cases under a corpus folder (every crash.yaml, every bare `.info` or kernel `.json`, and every
failing kernel of a MindSpore `.log`, written out as a crash.yaml), give each a stable id from its path, and
hash its content so an unchanged case is recognised on the next night."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from reducer.capture.found import folder_name, gather, write_case
from reducer.capture.sources import NothingFailed, findings_of_log
from reducer.core.errors import InputError
from reducer.inputs.load import is_kernel_file, load_input, original_files
from reducer.toolchain.launch import interpreter_of

LOG_CASES = "log-cases"  # under the night's OUT: the crash.yaml of every kernel a corpus .log holds
SKIP_DIRS = {".git", "__pycache__", ".akg-reduce-state", "akg_kernel_meta"}


@dataclass(frozen=True)
class CorpusCase:
    """One case file of the corpus, as found tonight."""

    slug: str  # stable id: the path relative to the corpus folder, made filename-safe
    path: Path
    content_hash: str  # what the compiler would see and what must hold, or the raw files of a broken case
    toolchain: tuple[str | None, str | None]  # (python, compiler) that compile the case
    problem: str = ""  # why the case cannot be loaded: a broken input


def _slug(relative: Path) -> str:
    parts = relative.parent.parts if relative.name == "crash.yaml" else (*relative.parent.parts, relative.stem)
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", "__".join(parts) or relative.stem)


def _is_case(path: Path) -> bool:
    if not path.is_file():
        return False
    return (
        path.name == "crash.yaml"
        or path.suffix in {".info", ".log"}
        or (path.suffix == ".json" and is_kernel_file(path))
    )


def _hash(blob: object) -> str:
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()


def load_corpus_case(slug: str, path: Path) -> CorpusCase:
    try:
        case = load_input(path)
        python = interpreter_of(case)  # an aicore case's is the Ascend toolchain's, installed if need be
    except InputError as exc:
        try:
            raw = original_files(path)
        except InputError:
            raw = {"bytes": path.read_bytes().hex()}
        return CorpusCase(slug, path, _hash(raw), (None, None), str(exc))
    # Where the toolchain lives is not content: the compiler identity covers it, and a corpus moved to
    # another folder is the same corpus.
    blob = {
        "content": case.content(),
        "expect": case.expect.to_dict() if case.expect else None,
        "limits": [case.timeout, case.memory],
    }
    return CorpusCase(slug, path, _hash(blob), (python, case.compiler))


def log_cases(slug: str, path: Path, extract_to: Path) -> list[CorpusCase]:
    """The cases of a MindSpore log: each failing kernel it holds, as a crash.yaml under `extract_to`; a
    kernel cut off in the log, or a log without any, is a broken case."""
    try:
        text, findings = findings_of_log(path)
    except (InputError, NothingFailed) as exc:
        return [CorpusCase(slug, path, hashlib.sha256(path.read_bytes()).hexdigest(), (None, None), str(exc))]
    cases = []
    for kernel in gather(findings, [], path.name, None):
        header = f"From the corpus log {path}: {kernel.where}."
        crash = write_case(kernel, {}, extract_to / slug / kernel.name, header)
        cases.append(load_corpus_case(f"{slug}__{kernel.name}", crash))
    for cut in findings.cut:
        cases.append(
            CorpusCase(f"{slug}__{folder_name(cut.name)}", path, _hash([text, cut.name]), (None, None), cut.reason)
        )
    return cases


def _kernel_of(crash: Path) -> Path | None:
    """The kernel file a crash.yaml names (None when it cannot be read: its loader will say why)."""
    try:
        kernel = yaml.safe_load(crash.read_text(encoding="utf-8")).get("kernel")
    except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError):
        return None
    return (crash.parent / kernel).resolve() if isinstance(kernel, str) and "\n" not in kernel else None


def discover(root: Path, out: Path) -> list[CorpusCase]:
    """Every case under `root` but those in the night's own `out`, sorted by path (the kernels of a `.log`
    written to OUT/log-cases/); ids are unique."""
    own = out.resolve()
    paths = sorted(
        p
        for p in root.rglob("*")
        if _is_case(p) and not SKIP_DIRS.intersection(p.relative_to(root).parts) and not p.resolve().is_relative_to(own)
    )
    named = {_kernel_of(p) for p in paths if p.name == "crash.yaml"}  # a crash.yaml's kernel is not a case too
    found: list[CorpusCase] = []
    seen: dict[str, int] = {}
    for path in (p for p in paths if p.resolve() not in named):
        slug = _slug(path.relative_to(root))
        in_file = log_cases(slug, path, out / LOG_CASES) if path.suffix == ".log" else [load_corpus_case(slug, path)]
        for case in in_file:
            count = seen.get(case.slug, 0)
            seen[case.slug] = count + 1
            found.append(replace(case, slug=f"{case.slug}_{count}") if count else case)
    return found
