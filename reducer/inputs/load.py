"""What a user points the reducer at, loaded into a valid Case with the files to keep as the original:
a crash.yaml (with its kernel file), or a bare kernel JSON: a `.info` as MindSpore writes it, or any file
holding one (AKG's own test kernels are `.json` as often as `.info`), told from a crash.yaml by content."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reducer.core.case import Case
from reducer.core.errors import InputError, InvalidKernel
from reducer.inputs.crash_yaml import load_case, load_yaml
from reducer.inputs.info_file import case_from_info, is_kernel_json, json_object
from reducer.kernels.kinds import kind_of, outputs_of


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (IsADirectoryError, UnicodeDecodeError):
        raise InputError(f"{path}: not a UTF-8 text file") from None


def is_kernel_file(path: Path) -> bool:
    """A bare kernel JSON (not a crash.yaml): a `.info`, or a file whose text is a JSON object with `op_desc`."""
    if path.suffix == ".info":
        return True
    try:
        with path.open("rb") as stream:
            if not stream.read(4096).lstrip().startswith(b"{"):
                return False
    except OSError:
        return False
    return is_kernel_json(_read(path))


def original_files(path: Path) -> dict[str, str]:
    """The user's files as they are: crash.yaml (or the kernel JSON) and the kernel file it names."""
    if is_kernel_file(path):
        return {path.name: _read(path)}
    files = {"crash.yaml": _read(path)}
    data = load_yaml(path)
    kernel = data.get("kernel", "") if isinstance(data, dict) else ""
    kernel_path = path.parent / kernel if isinstance(kernel, str) else path
    if kernel and "\n" not in kernel and kernel_path.is_file():
        files[kernel_path.name] = _read(kernel_path)
    return files


def _crash_yaml(path: Path) -> Case:
    """load_case, its error saying what else the file was not when it is a `.json` (a kernel JSON has op_desc)."""
    try:
        return load_case(path)
    except InputError as exc:
        if path.suffix != ".json":
            raise
        raise InputError(f"{exc} (read as a crash.yaml: it is no kernel JSON, which has 'op_desc')") from None


def parse_attrs(text: str) -> dict[str, Any]:
    """The `--attrs` option: the build attrs as JSON, as MindSpore's compile error prints them."""
    return json_object(text, "option '--attrs'", "the build attrs")


def _told(case: Case, error: InvalidKernel) -> str:
    """How the kernel's language was told, when it was told from its source and a name of it is unknown."""
    if not kind_of(case).told_from_source or "NameError" not in str(error):
        return ""
    return (
        f" (read as func_type {case.func_type!r}, as MindSpore reads a Custom op of func_type 'akg' whose source "
        "contains 'ir_builder' or 'compute'; set func_type: in crash.yaml if it is another language)"
    )


def load_input(
    path: Path,
    timeout: float | None = None,
    attrs: str | None = None,
    akg_build: str | None = None,
    allow_ill_formed: bool = False,
) -> Case:
    """A valid case from crash.yaml or a `.info` (its kernel a valid fused graph or Hybrid DSL), with the
    build attrs of `--attrs` and the AKG build of `--akg-build` when given, else an InputError. Its
    candidates must be well-formed unless `allow_ill_formed` or the original itself is not."""
    case = case_from_info(path, _read(path)) if is_kernel_file(path) else _crash_yaml(path)
    if attrs is not None:
        case = case.with_(attrs=parse_attrs(attrs))
    if akg_build is not None:
        case = case.with_(akg_build=akg_build)
    case = case.with_(allow_ill_formed=True)
    try:
        outputs_of(case)
    except InvalidKernel as exc:
        told = _told(case, exc)
        raise InputError(f"{path}: field 'kernel': not a valid {kind_of(case).label}: {exc}{told}") from None
    if not allow_ill_formed and not kind_of(case).ill_formed(case):
        case = case.with_(allow_ill_formed=False)
    return case.with_(timeout=timeout) if timeout else case
