"""The AKG failures in the output of a MindSpore run (a log a user saved, or what `reduce capture` kept):
every kernel JSON of a `Compile error, args: {...}! build attrs: {...}` message (`json str:` in older
releases) with its build attrs, kernels whose JSON was cut off, AKG's own `[ERROR] AKG:` lines and the run's
final error line. Tolerates ANSI colours, CRLF, logger prefixes and hard-wrapped lines."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from reducer.core.files import json_digest


def _wrappable(*phrases: str) -> re.Pattern[str]:
    """Any of `phrases`, also when a hard-wrapped log broke a line inside it."""
    return re.compile("|".join("\n?".join(map(re.escape, phrase)) for phrase in phrases))


MESSAGE = _wrappable("Compile error, args: ", "Compile error, json str: ")
ATTRS = _wrappable("! build attrs: ")
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
NAME = re.compile(r'"op"\s*:\s*"([^"]+)"')
FINAL_ERROR = re.compile(r"^\s*((?:[A-Za-z_][\w.]*\.)?\w*(?:Error|Exception|Interrupt|Exit)\b(?::.*)?)$")
AKG_ERROR = re.compile(r"\[ERROR\] AKG:.*?\] (.*)$")
CRASH = re.compile(r"Segmentation fault|SIGSEGV|core dumped|Aborted|SIGABRT|Fatal Python error|terminate called after")


@dataclass(frozen=True)
class LoggedKernel:
    """One failing kernel read whole from the log: its JSON (what MindSpore wrote as `.info`) and attrs."""

    name: str  # the kernel JSON's "op", e.g. Fused_Custom_1191...
    info: dict[str, Any]
    attrs: dict[str, Any]
    line: int  # 1-based line of the log where it first appears


@dataclass(frozen=True)
class CutKernel:
    """A failing kernel whose JSON in the log cannot be read whole (cut by a log-line limit, say)."""

    name: str
    line: int
    reason: str


@dataclass
class LogFindings:
    """What a log says about AKG: the distinct failing kernels, the ones cut off, AKG's error lines, whether
    a compile crashed (segfault, abort), and the run's last error line."""

    kernels: list[LoggedKernel] = field(default_factory=list)
    cut: list[CutKernel] = field(default_factory=list)
    akg_errors: list[str] = field(default_factory=list)
    crashed: list[str] = field(default_factory=list)
    final_error: str = ""

    def attrs(self) -> dict[str, Any]:
        """The build attrs the run compiled with (those of its first failing kernel; {} if none printed)."""
        return dict(self.kernels[0].attrs) if self.kernels else {}


def clean(text: str) -> str:
    """The log as plain text: colours removed, CRLF and CR line ends made LF."""
    return ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")


def _json_at(text: str) -> dict[str, Any] | None:
    """The JSON object at the start of `text`, also when the log's lines were hard-wrapped inside it."""
    stripped = text.lstrip()
    for candidate in (stripped, stripped.replace("\n", "")):
        try:
            value, _ = json.JSONDecoder().raw_decode(candidate)
        except ValueError:
            continue
        return value if isinstance(value, dict) else None
    return None


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _messages(text: str) -> list[tuple[int, str]]:
    """(position, body) of every compile-error message: the text after its marker up to the next one."""
    starts = list(MESSAGE.finditer(text))
    if not starts:
        return []
    ends = [m.start() for m in starts[1:]] + [len(text)]
    return [(m.start(), text[m.end() : end]) for m, end in zip(starts, ends, strict=True)]


def _read_message(text: str, pos: int, body: str) -> LoggedKernel | CutKernel | None:
    """The kernel of one message; None for a message that carries no kernel (MindSpore's own source line
    `"Compile error, args: {}! ..."` in a traceback)."""
    split = ATTRS.search(body)
    kernel_text = body[: split.start()] if split else body
    info = _json_at(kernel_text)
    line = _line_of(text, pos)
    if info is not None:
        if "op_desc" not in info:
            return None
        attrs = (_json_at(body[split.end() :]) if split else None) or {}
        return LoggedKernel(str(info.get("op") or f"kernel_line_{line}"), info, attrs, line)
    if not kernel_text.lstrip().startswith("{") or kernel_text.strip() in {"{}", "{"}:
        return None
    named = NAME.search(kernel_text)
    name = named.group(1) if named else f"the kernel at line {line}"
    size = len(kernel_text.split("\n", 1)[0])
    return CutKernel(name, line, f"its kernel JSON at line {line} is cut off after {size} characters")


def read_log(text: str) -> LogFindings:
    """Every AKG failure `text` (a MindSpore run's output) reports; each distinct kernel once."""
    text = clean(text)
    found = LogFindings()
    seen: set[str] = set()
    cut: dict[str, CutKernel] = {}
    for pos, body in _messages(text):
        item = _read_message(text, pos, body)
        if isinstance(item, LoggedKernel):
            digest = json_digest(item.info)
            if digest not in seen:
                seen.add(digest)
                found.kernels.append(item)
        elif isinstance(item, CutKernel):
            cut.setdefault(item.name, item)
    whole = {k.name for k in found.kernels}
    found.cut = [c for name, c in cut.items() if name not in whole]
    for line in text.splitlines():
        if error := AKG_ERROR.search(line):
            found.akg_errors.append(error.group(1).strip())
        if CRASH.search(line):
            found.crashed.append(line.strip())
        if final := FINAL_ERROR.match(line):
            found.final_error = final.group(1).strip()
    return found
