"""The identity of a compile's result: what "the same bug" means, decided here and asked by everyone else (the
search's oracle, capture's merge, the night's dedupe and CHANGED/FIXED, the diagnosis, triage, the hang limit
and the persistent cache). compile/signature.py reads a compile's output into a `Signature`; this module says
when two are one bug (`same`), the stable key a bug is stored under (`Signature.key`, `Signature.bug_id`), the
expectation a reduction keeps (`Signature.expectation`) and whether a result meets an expectation (`matches`).

What identifies a failure, by kind (docs/signature.md says why):
- error: the masked message, the file of the failing check (not its line: a check moves between releases) and
  where it died: the innermost frame of its backtrace in AKG's or TVM's own code (crash_stack.is_own);
- signal: the signal and where it died, by the same rule;
- timeout: the pass it hangs in;
- memory: the cap it went over;
- mismatch: the fix the kind of wrong needs (writes outside its outputs, or computes wrong values: NaN, values
  off, imprecise values are one kernel at different sizes) and each op's role in the kernel (elementwise, a
  broadcast, a reduction over which axes) with its dtypes, never sizes (the minimal kernel's, after a reduction;
  a reduction keeps only the fix);
- invalid-cuda: nvcc's masked error on the CUDA source AKG generated.
`none` (it compiled), `codegen` (it reached a code generator that did not run: this machine lacks it, or the
compile stopped there; `incomplete` for a failure that generator decides), `environment` (a tool the
compile needs cannot run here), `unchecked` (a wrong-result check compared under half of an output) and
`harness` (the check itself failed: its reference raised or ran past its limit, or our own code did) are no
bug of AKG's; the last three say nothing of the kernel either."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from enum import StrEnum
from itertools import takewhile
from typing import Any

from reducer.compile.crash_stack import gdb, is_helper, is_own
from reducer.core.case import Expectation
from reducer.core.targets import DEFAULT

# Bump when what identifies a failure changes (masking, frames, the fields of the key): stored signatures of
# another format are not reused by the cache, and a night re-checks the cases it recorded under another format.
SIGNATURE_FORMAT = 8


class Kind(StrEnum):
    NONE = "none"
    ERROR = "error"
    SIGNAL = "signal"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    MISMATCH = "mismatch"
    INVALID_CUDA = "invalid-cuda"
    CODEGEN = "codegen"
    ENVIRONMENT = "environment"
    UNCHECKED = "unchecked"  # a wrong-result check that compared too little: neither right nor wrong
    HARNESS = "harness"  # the check itself failed (its reference, our code), not AKG: no verdict

    @property
    def is_failure(self) -> bool:
        """A failure of AKG: a bug to reduce, not a compile that passed, a machine that cannot compile, a
        check that compared too little or one that failed itself."""
        return self not in (Kind.NONE, Kind.CODEGEN, Kind.ENVIRONMENT, Kind.UNCHECKED, Kind.HARNESS)

    @property
    def needs_codegen(self) -> bool:
        """Decided only past AKG's passes, by the code generator after them (nvcc): a compile that stops before
        it (`codegen`) cannot tell this failure from a pass."""
        return self is Kind.INVALID_CUDA

    @property
    def is_verdict(self) -> bool:
        """Whether it says anything of the kernel (it failed or passed), unlike the environment or a check that
        compared too little or failed itself."""
        return self not in (Kind.ENVIRONMENT, Kind.UNCHECKED, Kind.HARNESS)


_ADDR = re.compile(r"0x[0-9a-fA-F]+")
_PATH = re.compile(r"(?:/[\w.+-]+){2,}")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
# Names AKG generates for variables (cc7, i0): their number changes with the kernel's shape; not a dtype's short
# name (fp16, bf16, i32), which is part of the message.
_GENERATED_NAME = re.compile(r"\b(?!(?:fp|bf|f|i|u)(?:8|16|32|64)\b)(?P<prefix>[a-z]{1,2})\d+\b")
# A long number ending a name (Fused_Add_Mul_fusion_11203348042722600623): a hash of the kernel, not the bug.
_HASH = re.compile(r"(?<=_)\d{6,}\b")
_LINE = re.compile(r":\d+$")


def mask(text: str) -> str:
    """Hide what changes between runs and shrinks with the case: addresses, paths, numbers, the numbers of
    generated variable names."""
    text = _ADDR.sub("ADDR", text)
    text = _PATH.sub("PATH", text)
    text = _NUMBER.sub("N", text)
    text = _HASH.sub("N", text)
    text = _GENERATED_NAME.sub(r"\g<prefix>N", text)
    return re.sub(r"\s+", " ", text).strip(" :")


def message_regex(masked: str) -> str:
    """A regex that finds a masked message in raw compiler output."""
    pattern = re.escape(masked)
    pattern = pattern.replace("ADDR", r"0x[0-9a-fA-F]+").replace("PATH", r"\S+")
    pattern = re.sub(r"(?<![A-Za-z_])N(?![A-Za-z_])", r"-?\\d+(?:\\.\\d+)?", pattern)
    pattern = re.sub(r"\b(?P<prefix>[a-z]{1,2})N\b", r"\g<prefix>\\d+", pattern)
    pattern = re.sub(r"(?<=_)N\b", r"\\d+", pattern)  # a hash ending a name
    return pattern.replace(r"\ ", r"\s+")


def _file(location: str) -> str:
    return _LINE.sub("", location)


@dataclass(frozen=True, eq=False)
class Signature:
    """One compile's result as far as bugs go. `frames`: for an error the symbols of its backtrace, for a crash
    where it died and the callers above (context for the bundle), for a hang its pass and callers; innermost
    first. `read_by`: what read the frames of a crash or hang ("gdb", "py-spy", "kernel" for /proc), "" when
    none could; a crash or hang whose frames nothing read is never final: a tool installed later may read them
    (the cache asks `final`). Two signatures are equal when they are one bug (`same`), the only equality."""

    kind: Kind
    message: str  # masked key message
    location: str  # file:line of the failing check, a hang's pass, a wrong result's ops; else ""
    frames: tuple[str, ...]
    component: str = ""
    raw: str = ""  # the key message as printed: addresses differ between runs
    read_by: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", Kind(self.kind))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": str(self.kind),
            "message": self.message,
            "location": self.location,
            "frames": list(self.frames),
            "component": self.component,
            "raw": self.raw,
            **({"read_by": self.read_by} if self.read_by else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Signature:
        return cls(
            Kind(str(data["kind"])),
            str(data["message"]),
            str(data["location"]),
            tuple(data.get("frames", ())),
            str(data.get("component", "")),
            str(data.get("raw", "")),
            str(data.get("read_by", "")),
        )

    @property
    def failed(self) -> bool:
        return self.kind.is_failure

    @property
    def place(self) -> str:
        """Where the bug is (see _place)."""
        return _place(self.kind, self.location, self.died_in)

    @property
    def died_in(self) -> str:
        """The innermost of the frames that is AKG's or TVM's own code; for a check or a crash by a signal with
        none, the TVM helper its caller called (the outermost of the helpers it died in: a build inlines a
        helper's callees into it, `TryConstFold<FloorDiv>` into `air::floordiv`, never it into them); else, for
        a crash, the innermost frame read; '' when none."""
        own = next((f for f in self.frames if is_own(f)), "")
        if own or self.kind not in (Kind.SIGNAL, Kind.ERROR):
            return own
        if helpers := list(takewhile(is_helper, self.frames)):
            return helpers[-1]
        return next(iter(self.frames), "") if self.kind is Kind.SIGNAL else ""

    def _identity(self) -> tuple[str, str, str]:
        return (str(self.kind), _key_message(self.kind, self.message), self.place)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Signature):
            return NotImplemented
        return self is other or same(self, other)

    def __hash__(self) -> int:
        return hash(self._identity())

    def key(self) -> str:
        """A short id of the bug, stable across runs and across MindSpore releases whose AKG only moved a check
        to another line or a crash to another address: kind, masked message and place."""
        return hashlib.sha256("\0".join(self._identity()).encode()).hexdigest()[:12]

    def bug_id(self, target: str) -> str:
        """The id of the bug on `target`: a failure of AKG's GPU or Ascend pipeline is not the CPU one."""
        return self.key() if target == DEFAULT.name else f"{self.key()}@{target}"

    @property
    def final(self) -> bool:
        """Whether this result may be kept for good: a crash or hang whose frames no tool read is not."""
        return self.kind not in (Kind.SIGNAL, Kind.TIMEOUT) or bool(self.read_by)

    @property
    def message_pattern(self) -> str:
        """A regex that finds the masked message in a compile's raw output (a standalone repro.py uses it)."""
        return message_regex(self.message)

    def one_line(self) -> str:
        at = f" at {self.location}" if self.location else f" in {self.frames[0]}" if self.frames else ""
        return f"{self.kind}: {self.raw or self.message}{at}"

    def expectation(self) -> Expectation:
        """What a reduction of this failure keeps: its identity, but for a wrong result only the kind of wrong
        (its ops are what the reduction removes)."""
        where = "" if self.kind is Kind.MISMATCH else self.location
        return Expectation(str(self.kind), self.message, where, self.died_in, exact=True)


NO_FAILURE = Signature(Kind.NONE, "", "", ())

# What a wrong result's message says after "wrong result: " (compile/signature.py), as far as the bug goes: only
# writing outside its outputs needs another fix than computing wrong values. One kernel gives NaN at one size
# and numbers at another, and its worst error lands under the 1 % cut of imprecise values at one size and over
# it at the next; which of those it is stays in the message, out of the key.
WRITES_OUTSIDE = "writes outside its outputs"
IMPRECISE = "imprecise values"  # every wrong element within 1 %: the approximations of a right kernel look so too
_WRONG_VALUES = "computes wrong values"


def _key_message(kind: str, message: str) -> str:
    """The masked message as identity: for a wrong result, the fix it needs (WRITES_OUTSIDE or not)."""
    if kind != Kind.MISMATCH:
        return message
    return f"wrong result: {WRITES_OUTSIDE if message.endswith(WRITES_OUTSIDE) else _WRONG_VALUES}"


def _place(kind: str, location: str, died_in: str) -> str:
    """Where the bug is: a check's source file (a line moves between releases) and the function it died in,
    where a crash died, a hang's pass, a wrong result's ops; of a signature or of the exact expectation it
    learned (its where and frame)."""
    if kind == Kind.SIGNAL:
        return died_in
    if kind == Kind.ERROR:
        return f"{_file(location)} in {died_in}"
    return _file(location)


def _unplaced(kind: str, place: str) -> bool:
    """A crash by a signal with no frame read, or a hang whose stack nothing read: it is one bug with no other,
    not every crash of its signal or every hang."""
    return kind in (Kind.SIGNAL, Kind.TIMEOUT) and not place


def same(a: Signature, b: Signature) -> bool:
    """One bug: the same kind, masked message and place (a crash by a signal with no frame read, none)."""
    return a._identity() == b._identity() and not _unplaced(a.kind, a.place)


def matches(sig: Signature, expect: Expectation) -> bool:
    """Does `sig` fail the way `expect` says? A learned expectation (`exact`) holds a failure's identity, which
    must be equal (a wrong result's ops aside); a user-written one matches by substring after masking:
    `message` in the message, `where` in the location or any frame, `frame` in any frame; a `where` of
    `file:line` with a `frame` also matches that file at another line when the frame is there."""
    if sig.kind != expect.kind:
        return False
    if expect.exact:
        place = _place(expect.kind, expect.where, expect.frame)
        return (
            _key_message(sig.kind, sig.message) == _key_message(expect.kind, expect.message)
            and not _unplaced(sig.kind, sig.place)
            and (sig.kind is Kind.MISMATCH or place == sig.place)
            and not _slid_to_imprecise(sig, expect)
        )
    if expect.message and mask(expect.message) not in sig.message:
        return False
    if expect.frame and not any(expect.frame in f for f in sig.frames):
        return False
    if not expect.where or any(expect.where in p for p in (sig.location, *sig.frames) if p):
        return True
    return bool(expect.frame) and _file(sig.location) == _file(expect.where)


def _slid_to_imprecise(sig: Signature, expect: Expectation) -> bool:
    """A result that is only imprecise where the failure kept computes values off by more: one kernel crosses
    the 1 % cut at another size (one bug), but a reduction that accepted it could slide to an approximate op
    that is no bug at all (AKG's float32 Exp), so a reduction of a bigger error never takes it."""
    return sig.kind is Kind.MISMATCH and IMPRECISE in sig.message and IMPRECISE not in expect.message


def incomplete(sig: Signature, needs: str) -> bool:
    """Whether `sig` stopped short of the stage that decides a failure of kind `needs`: it reached the code
    generator, which did not run (the machine lacks it, or the compile was told to stop there), and a failure of
    that kind is the code generator's. Such a result is neither a pass nor a failure: never FIXED, never a way
    out."""
    return sig.kind is Kind.CODEGEN and needs in set(Kind) and Kind(needs).needs_codegen


def why_unplaced(sig: Signature) -> str | None:
    """Why the place of a crash or hang is unknown, if it is: a crash by a signal is known by its native
    frames and a hang by the pass it hangs in; without them any crash or hang would pass for this one."""
    if sig.kind is Kind.SIGNAL and not sig.frames:
        how = "install gdb: apt-get install gdb" if gdb() is None else "no frame of it is in AKG's library"
        return (
            f"the original dies by {sig.message}, but where it died cannot be told ({how}); without that any "
            "crash would count as this bug, so it is not reduced"
        )
    if sig.kind is Kind.TIMEOUT and not sig.location:
        return (
            "the original hangs, but its stack could not be read (py-spy missing, or not allowed to ptrace: run "
            "as root, set kernel.yama.ptrace_scope to 0, or give the container SYS_PTRACE); without the pass it "
            "hangs in any hang would count as this bug, so it is not reduced"
        )
    return None


def stored_expectation(stored: dict[str, Any]) -> Expectation:
    """What a failure must match to be the bug a night stored (Signature.to_dict plus its "format"). One stored
    under another format (before crashes had frames, or lines stopped splitting bugs) is compared by kind and
    message only, so the night after an upgrade regroups its bugs instead of calling them changed."""
    signature = Signature.from_dict(stored)
    if stored.get("format") == SIGNATURE_FORMAT:
        return signature.expectation()
    if signature.kind is Kind.MISMATCH and not signature.message.endswith(WRITES_OUTSIDE):
        return Expectation(str(signature.kind), "wrong result")  # NaN, values off, imprecise: one fix now
    return Expectation(str(signature.kind), signature.message)


def stored_bug_id(stored: dict[str, Any]) -> str:
    """The bug id of a signature a night stored with its `target`."""
    return Signature.from_dict(stored).bug_id(stored.get("target", DEFAULT.name))
