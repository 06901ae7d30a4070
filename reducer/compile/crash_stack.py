"""Where a compile died by a signal: the same compile run once more under gdb in batch mode (a crash
prints no backtrace of its own), forked from a warm worker with gdb attached or run cold by gdb, and its
backtrace read: the innermost frame of AKG's or TVM's own code is where it died, the frames above it are
context. Frames without a symbol are named by their offset in the library (stable within one build)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import cxxfilt

KEEP_FRAMES = 8  # where it died and its callers: the place, then context for the bundle
BACKTRACE_DEPTH = 60  # innermost frames gdb prints; recursion below an IRMutator goes thousands deep
# ... so gdb also prints the outermost ones: a crash deep in a recursion (a stack overflow) is placed by the
# pass that recursed, `air::ir::LoopUnroller::Mutate_` 47,000 frames above the crash.
OUTER_DEPTH = 40
AKG_LIBRARY = "libakg.so"
# The libraries whose symbols gdb reads: AKG's, and those an abort unwinds through on its way out of AKG.
UNWIND_THROUGH = ("libc.so", "libstdc++", "libgcc_s", AKG_LIBRARY)
# #3  0x00007fffe98b7642 in air::NodeFunctor<...>::operator()(...) const () from /x/libakg.so
# #0  __pthread_kill_implementation (threadid=...) at ./nptl/pthread_kill.c:44
_FRAME = re.compile(
    r"^#(?P<number>\d+)\s+(?:(?P<addr>0x[0-9a-fA-F]+) in )?(?P<body>.+?)(?: from (?P<lib>\S+)| at (?P<src>\S+))?$"
)
_LIBRARY = re.compile(r"^(?P<start>0x[0-9a-fA-F]+)\s+0x[0-9a-fA-F]+\s+\S+\s+(?:\(\*\)\s+)?(?P<path>\S+)$")
# Frames every crash below an IR pass goes through: they name the machinery, not the place.
_GENERIC = (
    "air::NodeFunctor<",
    "air::ir::IRMutator::",
    "air::ir::IRVisitor::",
    "air::ir::StmtExprMutator::",
    "air::ir::StmtExprVisitor::",
    # Visitor dispatch: a functor's VisitExpr/VisitStmt and the mutators' default Mutate_ only hand the node to
    # the overload that handles it, which is the place; air::Map::Set is the container every pass fills.
    "air::ir::ExprFunctor<",
    "air::ir::StmtFunctor<",
    "air::ExprFunctor<",
    "air::StmtFunctor<",
    "air::ir::ExprMutator::",
    "air::ir::StmtMutator::",
    "air::Map<",
    # A pass's callback walked over the IR: the walk hands each node to the callback, which is the place.
    "air::ir::IRApplyVisit::",
    "air::ir::PostOrderVisit(",
    "air::ir::IRTransform(",
    "air::ir::IRTransformer::",
    "air::runtime::",
    "air::Array<",
    "air::NodeRef::",
    "air::ObjectRef::",
    "MutateArray",
    "air::ir::MutateArray",
    "std::",
    "__gnu_cxx::",
)


# TVM's expression operators (expr_operator.h: air::floordiv, air::operator+, air::max, ...) and its constant
# folder, which one build inlines into their caller and the next does not (TryConstFold<FloorDiv> is a frame of
# its own under air::floordiv in MindSpore 2.10's AKG, inlined into it in 2.9's and 2.7.2's): a crash or a check
# in one is placed at its caller.
_EXPRESSION_OPERATORS = (
    "truncdiv|truncmod|floordiv|floormod|indexdiv|indexmod|div|mod|min|max|min_value|max_value|if_then_else|"
    "likely|pow|abs|isnan|cast|reinterpret|make_const|make_zero|const_true|const_false|floor|ceil|round|"
    "nearbyint|trunc|fmod|exp|log|sqrt|rsqrt|tanh|sigmoid|erf|popcount|cos|sin|atan|sum|prod|all|any"
)
_EXPRESSION_HELPER = re.compile(rf"^air::(?:operator\W+|(?:{_EXPRESSION_OPERATORS})|arith::TryConstFold<.*)$")
# Libraries linked into libakg.so that are not AKG's or TVM's own code: a crash in them is placed at the
# AKG or TVM function that called them.
_THIRD_PARTY = ("llvm::", "isl::", "isl_", "picojson::", "dmlc::", "TVM", "_")


def is_generic(symbol: str) -> bool:
    return symbol.startswith(_GENERIC)


def is_own(symbol: str) -> bool:
    """Is `symbol` AKG's or TVM's own code, a function a bug can be in: akg:: and air:: functions but the
    machinery every pass goes through and TVM's expression builders, and named C functions of libakg."""
    if symbol.startswith(("akg::", "air::")):
        return not is_generic(symbol) and not is_helper(symbol)
    return "::" not in symbol and not symbol.startswith(_THIRD_PARTY)


def is_helper(symbol: str) -> bool:
    """One of TVM's expression builders or its constant folder (a frame with or without its parameters)."""
    return bool(_EXPRESSION_HELPER.match(bare(symbol)))


def gdb() -> str | None:
    return shutil.which("gdb")


def _options(actions: tuple[str, ...]) -> list[str]:
    """No init files, no auto-loaded scripts, no debuginfod (no network); the symbols of AKG's library and
    of what an abort unwinds through only, read once the compile died (those of every library MindSpore
    loads cost a second more), and not demangled (see _symbol); then the backtrace and where each library
    lies."""
    settings = (
        "set auto-load off",
        "set debuginfod enabled off",
        "set pagination off",
        "set auto-solib-add off",
        "set demangle-style none",  # demangling all of libakg.so's symbols costs 0.45 s: only the frames are
    )
    loads = tuple(f"sharedlibrary {name}" for name in UNWIND_THROUGH)
    after = (*loads, f"bt {BACKTRACE_DEPTH}", f"bt -{OUTER_DEPTH}", "info sharedlibrary")
    return [
        "-nx",
        "-batch",
        *(a for s in settings for a in ("-iex", s)),
        *(a for c in (*actions, *after) for a in ("-ex", c)),
    ]


def under_gdb(tool: str, command: list[str]) -> list[str]:
    """`command` run by the gdb at `tool` in batch mode, read where it dies."""
    return [tool, *_options(("run",)), "--args", *command]


def attached_gdb(tool: str, pid: int, go: Path) -> list[str]:
    """The gdb at `tool` attached to the compile `pid`, held until the file `go` exists (akg_worker's
    hold_until): gdb makes it once attached, lets the compile run and reads where it dies. On gdb's exit the
    compile goes on, and dies by its signal as it would have."""
    return [tool, *_options((f"shell touch {shlex.quote(str(go))}", "continue")), "-p", str(pid)]


def bare(body: str) -> str:
    """A demangled frame's function name: without its argument list, qualifiers, and the return type that
    gdb prints before a template function's name."""
    text = body
    if text.endswith(" ()"):
        text = text[:-3]
    depth, cut = 0, len(text)
    for index in range(len(text) - 1, -1, -1):  # the outermost argument list: the last balanced (...)
        char = text[index]
        if char == ")":
            depth += 1
        elif char == "(":
            depth -= 1
            if depth == 0:
                cut = index
                if not text[:index].endswith("operator"):
                    break
    name = text[:cut].strip()
    depth, start = 0, 0
    for index, char in enumerate(name):  # a return type ends at the last space outside <...>, (...) and {...}
        if char in "<({":
            depth += 1
        elif char in ">)}":
            depth -= 1
        elif char == " " and depth == 0 and not name[:index].endswith("operator"):  # a conversion operator
            start = index + 1
    return name[start:]


# What differs between two builds' names of one function (with the spacing of `*` and `&`, see function).
_QUALIFIER = re.compile(r"\bconst\b|\bvolatile\b|\[abi:\w+\]|\[clone [^\]]*\]")
_ANONYMOUS = re.compile(r"\(anonymous namespace\)")


# The standard library's default template arguments, which a demangler spells out: `std::vector<int,
# std::allocator<int>>` is `std::vector<int>`, `std::__cxx11::basic_string<char, std::char_traits<char>,
# std::allocator<char>>` is `std::string` (the `__cxx11` inline namespace is the library ABI, not the type).
_DEFAULT_ARGUMENT = re.compile(r",\s*std::(?:allocator|char_traits|default_delete|less|hash|equal_to)<")
_STRING = "std::basic_string<char>"


def _without_defaults(text: str) -> str:
    """`text` with every defaulted standard template argument left out (each to its balanced `>`)."""
    text = text.replace("std::__cxx11::", "std::")
    while match := _DEFAULT_ARGUMENT.search(text):
        depth, end = 1, match.end()
        while end < len(text) and depth:
            depth += {"<": 1, ">": -1}.get(text[end], 0)
            end += 1
        text = text[: match.start()] + text[end:]
    return re.sub(r"\s*>", ">", text).replace(_STRING, "std::string")


def function(body: str) -> str:
    """A demangled frame's function as a place: its qualified name with its template arguments and, for an
    overload, its parameter types (`Mutate_(air::ir::FloorDiv*, air::Expr&)`: the overloads of a visitor are
    different functions with different fixes); without the return type, `const`, reference and pointer
    spacing, the anonymous namespace's spelling and the standard library's defaulted template arguments, which
    differ between builds and demanglers. The argument values gdb
    prints for a frame with debug info (`f (this=0x1, op=...)`, after a space) are not its parameters."""
    text = _ANONYMOUS.sub("{anonymous}", body.removesuffix(" ()"))
    name = bare(text)
    cut = text.find(name) + len(name)  # after the return type, which never holds the whole name
    params = text[cut:]
    if not params.startswith("("):  # no parameter list, or gdb's argument values
        params = ""
    else:
        depth = 0
        for index, char in enumerate(params):  # the parameter list: the first balanced (...)
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0:
                params = params[: index + 1]
                break
    signature = _QUALIFIER.sub("", _without_defaults(name + params))
    signature = re.sub(r"\s*([*&,<>()])\s*", r"\1", signature)
    return re.sub(r"\s+", " ", signature).replace(",", ", ").strip()


def _symbol(body: str) -> str:
    """A frame's function, demangled (gdb prints the mangled name of a symbol without debug info)."""
    mangled = body.split(" (", 1)[0]
    if not mangled.startswith("_Z"):
        return body
    try:
        return cxxfilt.demangle(mangled)
    except cxxfilt.InvalidName:
        return mangled


def _library_starts(text: str) -> dict[str, int]:
    starts = {}
    for line in text.splitlines():
        match = _LIBRARY.match(line.strip())
        if match:
            starts[match["path"]] = int(match["start"], 16)
    return starts


def _in_akg(frame: re.Match[str]) -> bool:
    if frame["lib"]:
        return AKG_LIBRARY in frame["lib"]
    return frame["body"].startswith(("akg::", "air::"))  # a build with debug info: `at file:line`, no library


def frames(gdb_output: str) -> tuple[str, ...]:
    """The frames of AKG's library in gdb's backtrace, from where it died outward (is_own: AKG's or TVM's
    own innermost function, generic machinery skipped): their function names, then those of the outermost
    print of a stack deeper than both prints (the passes above a recursion), innermost first; when none of
    the innermost has a name (a recursion thousands deep through nameless frames), the outermost print's
    alone (the pass that recursed); else `libakg.so+0x...` offsets from the library's text."""
    starts = _library_starts(gdb_output)
    named: list[str] = []
    unnamed: list[str] = []
    outer: list[str] = []
    seen: set[int] = set()  # a stack shallower than both prints is printed twice
    for line in gdb_output.splitlines():
        match = _FRAME.match(line.strip())
        if match is None or not _in_akg(match) or (number := int(match["number"])) in seen:
            continue
        seen.add(number)
        body = match["body"]
        if number >= BACKTRACE_DEPTH:
            name = function(_symbol(body)) if not body.startswith("?? ") else ""
            if name and not is_generic(name) and name not in outer:
                outer.append(name)
            continue
        if body.startswith("?? "):
            if match["addr"] and match["lib"] in starts:
                unnamed.append(f"{AKG_LIBRARY}+{int(match['addr'], 16) - starts[match['lib']]:#x}")
            continue
        name = function(_symbol(body))
        if name and not is_generic(name) and name not in named:
            named.append(name)
    died = next((i for i, name in enumerate(named) if is_own(name)), 0)
    # A stack deeper than both prints: the outermost frames name the passes that called where it died.
    placed = list(dict.fromkeys(named[died:] + outer))
    return tuple((placed or unnamed)[:KEEP_FRAMES])
