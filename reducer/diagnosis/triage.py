"""Is the minimal case's failure an AKG compiler bug, a usage error or an environment problem? Decided
from evidence and explained: what kind of failure it is and where it is raised (an internal check, a crash,
a hang, a Python exception and its type), what of the user's input it names (an attr, its value, an
executable, a package), and whether it survives when that input is made valid (a few compiles of the
minimal case through the reduction's oracle). When the evidence is not conclusive the verdict is
"compiler-bug" with the doubt said: a false "not a bug" costs more than a false "bug"."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reducer.compile.identity import Kind, Signature
from reducer.core.case import Case
from reducer.diagnosis.stage import FailingStage
from reducer.kernels.kinds import kind_of
from reducer.search.oracle import PASSES, SAME_FAILURE, Oracle

COMPILER_BUG, USAGE_ERROR, ENVIRONMENT = "compiler-bug", "usage-error", "environment"

# Python exceptions that say something the compile needs is not on this machine.
_MISSING_FILE = ("FileNotFoundError", "OSError")
_EXECUTABLE = re.compile(r"No such file or directory: '(?P<name>[^'/]+)'")
_STARTS_PROGRAM = "_execute_child"  # subprocess's frame that raises for a program not found
_LIBRARY = re.compile(r"(?P<name>lib[\w.+-]+\.so[\w.]*): cannot open shared object file")
_DEVICE = re.compile(r"no CUDA-capable device|CUDA driver version is insufficient|cudaErrorNoDevice", re.IGNORECASE)
# Words with which a check turns down a value it was given, rather than a state it reached.
_REJECTS = re.compile(r"parse|must be|need to set|expect|invalid|should be|only support|not a valid", re.IGNORECASE)
_TYPE_WORDS = {"string": str, "str": str, "bool": bool, "int": int, "integer": int, "float": float}
_TRUE_WORDS = ("true", "yes", "on")
_FALSE_WORDS = ("false", "no", "off", "none")
# An emitter that takes one dtype only: "reduce_last_axis only support float16 while dtype is float32" (Ascend).
_ONLY_DTYPE = re.compile(r"only supports? (?P<wanted>float\d+|u?int\d+|bool)\b", re.IGNORECASE)
SHORT_TIMEOUT = 10.0  # seconds: a limit below this is the case asking for a timeout
SMALL_MEMORY = 1024  # MiB: likewise for a memory cap


@dataclass(frozen=True)
class Triage:
    verdict: str  # COMPILER_BUG | USAGE_ERROR | ENVIRONMENT
    reason: str  # one sentence: why this verdict
    evidence: tuple[str, ...]  # what was seen and tried, one fact each
    advice: str  # what the user does next
    unsure: str = ""  # compiler-bug only: what would make it something else

    @property
    def label(self) -> str:
        """'compiler-bug', or 'compiler-bug (unsure: ...)'."""
        return f"{self.verdict} (unsure: {self.unsure})" if self.unsure else self.verdict

    @property
    def upstream(self) -> bool:
        """Whether the bundle is a report for AKG's maintainers."""
        return self.verdict == COMPILER_BUG

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "label": self.label,
            "reason": self.reason,
            "evidence": list(self.evidence),
            "advice": self.advice,
            "unsure": self.unsure,
        }


def _exception_type(signature: Signature) -> str:
    head = signature.raw.split(":", 1)[0].strip()
    return head if signature.component == "python" and re.fullmatch(r"\w+", head) else ""


def _first(pattern: re.Pattern[str], text: str) -> str:
    found = pattern.search(text)
    return next((v for v in found.groupdict().values() if v), "") if found else ""


def _value_text(value: Any) -> str:
    return str(list(value)) if isinstance(value, (list, tuple)) else str(value)


def _shown(value: Any) -> str:
    """The value as a reader should see it: strings quoted, so an empty one is visible."""
    return repr(value) if isinstance(value, str) else _value_text(value)


def _names(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text) is not None


def _valid_forms(value: Any, message: str) -> list[tuple[str, Any]]:
    """The value in the type the message says AKG wants ('... as string', 'Bool attribute ...')."""
    forms: list[tuple[str, Any]] = []
    for word, kind in _TYPE_WORDS.items():
        if not _names(message.lower(), word) or isinstance(value, kind):
            continue
        if kind is str:
            text = " ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
            forms.append((f"as the string {text!r}", text))
        elif kind is bool:
            forms += [("as true", True), ("as false", False)]
        elif kind in (int, float) and isinstance(value, (int, float, str)):
            try:
                forms.append((f"as the {word} {kind(value)!r}", kind(value)))
            except ValueError:
                continue
    return forms


def _outcome_words(outcome: str) -> str:
    return {PASSES: "the kernel compiles", SAME_FAILURE: "it fails the same way"}.get(outcome, outcome)


_DROP = object()  # an attr change: leave the attr out


class _Evidence:
    def __init__(
        self, case: Case, original: Case, signature: Signature, stage: FailingStage, log: str, oracle: Oracle | None
    ) -> None:
        self.case, self.original, self.signature, self.stage, self.oracle = case, original, signature, stage, oracle
        self.message = signature.raw or signature.message
        self.text = f"{self.message}\n{log}"
        self.facts: list[str] = [f"the failure: {signature.one_line()}"]
        if stage.source:
            self.facts.append(f"raised at {stage.source} ({stage.stage or 'unknown stage'})")

    def outcome(self, case: Case) -> str:
        return self.oracle.outcome(case) if self.oracle is not None else "not tried"

    def tried(self, change: Callable[[Case], Case], words: str, on_original: bool = True) -> tuple[str, str | None]:
        """(outcome of the minimal case, of the original) with `change` made, said as `words`; the original
        is tried only when the minimal case no longer fails the same way (and `on_original`)."""
        small = self.outcome(change(self.case))
        self.facts.append(f"with {words}, {_outcome_words(small)}")
        if small == SAME_FAILURE or not on_original:
            return small, None
        big = self.outcome(change(self.original))
        self.facts.append(f"the original with {words}: {_outcome_words(big)}")
        return small, big

    def with_attr(self, name: str, value: Any, words: str) -> tuple[str, str | None]:
        """tried() with attr `name` set to `value` (or _DROP), on the original only when it has that attr."""

        def changed(case: Case) -> Case:
            attrs = {k: v for k, v in case.attrs.items() if k != name}
            return case.with_(attrs=attrs if value is _DROP else {**attrs, name: value})

        return self.tried(changed, f"the attr `{name}` {words}", name in self.original.attrs)

    def without_attr(self, name: str) -> tuple[str, str | None]:
        return self.with_attr(name, _DROP, "left out")

    def needing_attr(self) -> str:
        """The first attr of the minimal case without which the failure goes away ('' if none, or when
        nothing can be compiled to tell)."""
        if self.oracle is None:
            return ""
        return next((name for name in self.case.attrs if self.without_attr(name)[0] != SAME_FAILURE), "")

    def verdict(self, verdict: str, reason: str, advice: str, unsure: str = "") -> Triage:
        return Triage(verdict, reason, tuple(self.facts), advice, unsure)


def _environment(ev: _Evidence) -> Triage | None:
    kind = _exception_type(ev.signature)
    # A missing module never gets here: the compile's signature says the environment (compile/signature.py).
    # A missing program, not a missing file: subprocess raised it while starting the program.
    tool = _first(_EXECUTABLE, ev.message) if kind in _MISSING_FILE and _STARTS_PROGRAM in ev.text else ""
    if tool:
        path = ev.case.env.get("PATH")
        ev.facts.append(f"AKG ran the program `{tool}`, which is not found on PATH")
        if path is not None:
            ev.facts.append(f"the case's environment sets PATH={path}")
        where = f" (the case sets PATH={path}: point it at the folder that has `{tool}`)" if path is not None else ""
        return ev.verdict(
            ENVIRONMENT,
            f"the program `{tool}` that AKG runs to build the kernel is not installed or not on PATH",
            f"install `{tool}` (Debian/Ubuntu: `apt install {tool}`) and put it on PATH{where}; "
            "this is not an AKG bug: do not file it upstream",
        )
    library = _first(_LIBRARY, ev.text)
    if library:
        ev.facts.append(f"the shared library `{library}` cannot be loaded")
        return ev.verdict(
            ENVIRONMENT,
            f"the shared library `{library}` that AKG loads is not on this machine",
            f"install the package that provides `{library}` or add its folder to LD_LIBRARY_PATH; "
            "this is not an AKG bug",
        )
    if _DEVICE.search(ev.text):
        ev.facts.append("the log says no usable GPU device is present")
        return ev.verdict(
            ENVIRONMENT,
            "the compile needs a GPU device that this machine does not have",
            "reduce on a machine with a GPU, or with target cpu; this is not an AKG bug",
        )
    return None


def _suspect_attrs(ev: _Evidence) -> list[str]:
    """Attrs of the minimal case the failure message names, by name or by value."""
    found = []
    for name, value in ev.case.attrs.items():
        if _names(ev.message, name) or _quotes(ev.message, value):
            found.append(name)
    return found


def _quotes(message: str, value: Any) -> bool:
    """Whether `message` quotes the attr's value: a word or list of it, not a number or a bool, which a
    check message may print for reasons of its own (an index, a size)."""
    if isinstance(value, (bool, int, float)):
        return False
    text = _value_text(value)
    if re.fullmatch(r"-?\d+(?:\.\d+)?", text.strip()):
        return False
    return len(text) > 1 and _names(message, text)


def _gone(small: str, big: str | None, change: str) -> str:
    """'without the attr the original compiles', in the strongest form the outcomes allow."""
    if big == PASSES:
        return f"{change} the original compiles"
    if small == PASSES:
        return f"{change} the minimal case compiles"
    return f"{change} that failure is gone (the minimal case: {small})"


def _usage(ev: _Evidence) -> Triage | None:
    """A failure that names an attr the user gave, goes away when that attr is left out or given in the type
    AKG asks for, and reads as AKG turning the value down."""
    if ev.oracle is None:  # a named attr is only a suspect until a compile without it shows the difference
        return None
    for name in _suspect_attrs(ev):
        value = ev.case.attrs[name]
        ev.facts.append(f"the message names the attr `{name}` = {_shown(value)} of the case")
        small, big = ev.without_attr(name)
        if small == SAME_FAILURE:
            continue
        gone = _gone(small, big, "without the attr")
        for words, form in _valid_forms(value, ev.message):
            fixed = ev.with_attr(name, form, words)
            if PASSES in fixed:
                gone += "; " + _gone(*fixed, f"with the attr {words}")
                break
        quoted = _quotes(ev.message, value)
        rejects = _REJECTS.search(ev.message) is not None
        if not (quoted or rejects):
            return ev.verdict(
                COMPILER_BUG,
                f"AKG fails on the attr `{name}`, which the message names: {gone}",
                f"check the value of `{name}` against AKG's documentation; if it is valid, file ISSUE.md",
                unsure=f"the failure may be AKG rejecting the value {_shown(value)} of `{name}`",
            )
        how = "quotes the value" if quoted else "turns the value down"
        return ev.verdict(
            USAGE_ERROR,
            f"AKG rejects the attr `{name}` = {_shown(value)} of the case: the message {how}, and {gone}",
            f"give `{name}` a value AKG accepts (its message: {ev.message}) or leave it out; this is not an AKG "
            "bug: do not file it upstream",
        )
    return None


def _compiles_then(small: str, big: str | None) -> bool:
    """Whether a change made the original compile (or the minimal case, when the original was not tried)."""
    return big == PASSES or (big is None and small == PASSES)


def _unsupported_dtype(ev: _Evidence) -> Triage | None:
    """The message says a step of AKG takes one dtype only and names the case's: when the inputs in that
    dtype make the failure go away, it is a limitation of that step the user can go round, not a crash."""
    found = _ONLY_DTYPE.search(ev.message)
    if found is None or ev.oracle is None:
        return None
    wanted = found["wanted"].lower()
    named = sorted({t.dtype for t in ev.case.inputs if t.dtype != wanted and _names(ev.message, t.dtype)})
    if not named:
        return None
    change = dict.fromkeys(named, wanted)
    words = f"the inputs in {wanted} instead of {', '.join(named)}"
    ev.facts.append(f"the message says only {wanted} is supported")
    small, big = ev.tried(lambda case: kind_of(case).with_dtypes(case, change) or case, words)
    if not _compiles_then(small, big):
        return None
    step = ev.message.split(" only ", 1)[0].strip() or "a step of AKG"
    return ev.verdict(
        USAGE_ERROR,
        f"`{step}` takes {wanted} only and the kernel computes in {', '.join(named)}: "
        + _gone(small, big, f"with {words}"),
        f"compute this op in {wanted} (cast its inputs to {wanted} and its result back); "
        "this is a limitation of that step of AKG, not a crash: do not file it upstream",
    )


def _retyped(value: Any) -> list[tuple[str, Any]]:
    """The value in the other types a user may have meant: a word or number in a string as a bool or a
    number, a list as AKG's space-separated string."""
    if isinstance(value, (list, tuple)):
        text = " ".join(map(str, value))
        return [(f"as the string {text!r}", text)]
    if not isinstance(value, str):
        return []
    word = value.strip().lower()
    if word in _TRUE_WORDS or word in _FALSE_WORDS or not word:
        return [("as true", True), ("as false", False)]
    for kind in (int, float):
        try:
            return [(f"as the number {kind(word)!r}", kind(word))]
        except ValueError:
            continue
    return []


def _retyped_usage(ev: _Evidence, name: str) -> Triage | None:
    """The failure needs the attr `name`, and the same attr in another type (a bool or number given as a
    string, a list where AKG takes a string) makes the original compile: the value's type is the mistake."""
    value = ev.original.attrs.get(name, ev.case.attrs[name])
    for words, form in _retyped(value):
        small, big = ev.with_attr(name, form, words)
        if _compiles_then(small, big):
            return ev.verdict(
                USAGE_ERROR,
                f"the failure needs the attr `{name}` = {_shown(value)}, a {type(value).__name__}, and "
                + _gone(small, big, f"with the attr {words}"),
                f"give `{name}` as a {type(form).__name__} (e.g. `{json.dumps(form)}`) or leave it out; this is "
                "not an AKG bug: do not file it upstream",
            )
    return None


def _compiler_bug(ev: _Evidence) -> Triage:
    sig, case = ev.signature, ev.case
    advice = "file ISSUE.md upstream (MindSpore's issue tracker, component AKG)"
    if sig.kind is Kind.SIGNAL:
        where = f" in `{sig.frames[0]}`" if sig.frames else ""
        reason = f"AKG's process died of {sig.message}{where}: a crash inside the compiler"
        return ev.verdict(COMPILER_BUG, reason, advice)
    if sig.kind is Kind.TIMEOUT:
        ev.facts.append(f"the compile was stopped after its limit of {case.time_limit:g} s")
        unsure = (
            f"the limit of {case.time_limit:g} s is short; a slow compile may just need longer"
            if case.time_limit < SHORT_TIMEOUT
            else ""
        )
        return ev.verdict(COMPILER_BUG, "AKG does not finish compiling the kernel: a hang", advice, unsure)
    if sig.kind is Kind.MEMORY:
        ev.facts.append(f"the compile was stopped at its memory cap of {case.memory} MiB")
        unsure = f"the cap of {case.memory} MiB is small for AKG" if case.memory < SMALL_MEMORY else ""
        return ev.verdict(COMPILER_BUG, "AKG's memory use grows past any reasonable bound", advice, unsure)
    if sig.kind is Kind.MISMATCH:
        return ev.verdict(COMPILER_BUG, "AKG compiles the kernel to code that computes wrong results", advice)
    if sig.kind is Kind.INVALID_CUDA:
        reason = f"AKG generates CUDA that nvcc rejects ({sig.raw}): a bug of AKG's CUDA code generation"
        return ev.verdict(COMPILER_BUG, reason, advice)
    attr = ev.needing_attr()
    retyped = _retyped_usage(ev, attr) if attr else None
    if retyped is not None:
        return retyped
    kind = _exception_type(sig)
    if kind:
        needs = f"; it fails only with the attr `{attr}` = {_shown(case.attrs[attr])}" if attr else ""
        return ev.verdict(
            COMPILER_BUG,
            f"AKG's Python driver raised {kind} on a kernel MindSpore accepts",
            advice,
            unsure=f"a {kind} in AKG's Python code may be AKG turning down input it does not support{needs}",
        )
    return ev.verdict(COMPILER_BUG, "an internal check of AKG fails on a kernel MindSpore accepts", advice)


def triage(
    case: Case, original: Case, signature: Signature, stage: FailingStage, log: str, oracle: Oracle | None
) -> Triage:
    """The verdict on `case` (the minimal case of `original`) failing with `signature`; `oracle` compiles
    the variants that test a suspect input (None: decide from the failure alone)."""
    ev = _Evidence(case, original, signature, stage, log, oracle)
    return _environment(ev) or _usage(ev) or _unsupported_dtype(ev) or _compiler_bug(ev)
