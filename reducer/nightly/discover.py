"""Find the cases under a corpus folder (every crash.yaml and every bare `.info`), give each a stable id
from its path, and hash its content so an unchanged case is recognised on the next night."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

from reducer.core.errors import InputError
from reducer.inputs.load import load_input, original_files

SKIP_DIRS = {".git", "__pycache__", ".akg-reduce-state", "akg_kernel_meta"}


@dataclass(frozen=True)
class CorpusCase:
    """One case file of the corpus, as found tonight."""

    slug: str  # stable id: the path relative to the corpus folder, made filename-safe
    path: Path
    content_hash: str  # what the compiler would see and what must hold, or the raw files of a broken case
    toolchain: tuple[str | None, str | None]  # (python, compiler) the case asks for
    problem: str = ""  # why the case cannot be loaded: a broken input


def _slug(relative: Path) -> str:
    parts = relative.parent.parts if relative.name == "crash.yaml" else (*relative.parent.parts, relative.stem)
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", "__".join(parts) or relative.stem)


def _is_case(path: Path) -> bool:
    return path.is_file() and (path.name == "crash.yaml" or path.suffix == ".info")


def _hash(blob: object) -> str:
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()


def load_corpus_case(root: Path, path: Path) -> CorpusCase:
    slug = _slug(path.relative_to(root))
    try:
        case = load_input(path)
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
    return CorpusCase(slug, path, _hash(blob), (case.python, case.compiler))


def discover(root: Path) -> list[CorpusCase]:
    """Every case under `root`, sorted by path; ids are unique."""
    paths = sorted(p for p in root.rglob("*") if _is_case(p) and not SKIP_DIRS.intersection(p.relative_to(root).parts))
    found: list[CorpusCase] = []
    seen: dict[str, int] = {}
    for path in paths:
        case = load_corpus_case(root, path)
        count = seen.get(case.slug, 0)
        seen[case.slug] = count + 1
        found.append(replace(case, slug=f"{case.slug}_{count}") if count else case)
    return found
