"""What a user points the reducer at, loaded into a valid Case with the files to keep as the original:
a crash.yaml (with its kernel file), or a bare `.info` kernel JSON as MindSpore writes it."""

from __future__ import annotations

from pathlib import Path

from reducer.case import Case, load_case, load_yaml
from reducer.errors import InputError
from reducer.hybrid import InvalidKernel, infer_outputs
from reducer.info import case_from_info


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (IsADirectoryError, UnicodeDecodeError):
        raise InputError(f"{path}: not a UTF-8 text file") from None


def original_files(path: Path) -> dict[str, str]:
    """The user's files as they are: crash.yaml (or the .info) and the kernel file it names."""
    files = {path.name if path.suffix == ".info" else "crash.yaml": _read(path)}
    if path.suffix == ".info":
        return files
    data = load_yaml(path)
    kernel = data.get("kernel", "") if isinstance(data, dict) else ""
    kernel_path = path.parent / kernel if isinstance(kernel, str) else path
    if kernel and "\n" not in kernel and kernel_path.is_file():
        files[kernel_path.name] = _read(kernel_path)
    return files


def load_input(path: Path, timeout: float | None = None) -> Case:
    """A valid case from crash.yaml or a `.info`, its kernel valid Hybrid DSL, else an InputError."""
    case = case_from_info(path, _read(path)) if path.suffix == ".info" else load_case(path)
    try:
        infer_outputs(case)
    except InvalidKernel as exc:
        raise InputError(f"{path}: field 'kernel': not a valid Hybrid DSL kernel: {exc}") from None
    return case.with_(timeout=timeout) if timeout else case
