"""What the programs of reducer/in_mindspore share with each other and with the reducer: the JSON-lines
replies they send, the record a check leaves in its output (Record: how far it got and whose code raised), the
variable that names the reducer, and how AKG is made importable (the one module here that touches sys.path: as
MindSpore's compile entry does it, or from the MindSpore package itself)."""

import contextlib
import dataclasses
import importlib.util
import json
import os
import sys

OWNER_ENV = "AKG_REDUCE_SANDBOX"  # the reducer's pid, set by it for every process it starts
BUILD_ENV = "TVM_LIBRARY_PATH"  # the AKG build (lib/plugin/<build>) AKG loads; the launcher sets it
RECORD = "AKG-REDUCE-RECORD"  # a record's line in a program's output: this, a space, its JSON
# A check's stages in order, and whose code runs in each: what raises there, or is stopped there at the limit.
SETUP, AKG, REFERENCE, COMPARE = "setup", "akg", "reference", "compare"
RUNS_IN = {SETUP: "harness", AKG: "akg", REFERENCE: "reference", COMPARE: "harness"}


@dataclasses.dataclass(frozen=True)
class Record:
    """How far one check got and how it ended, one JSON line in its output; a check writes one as each stage
    begins, so the last says where a check killed at its limit, or dead of a signal, was. `raised_by`: whose
    code raised ("akg", "reference", "harness" for our own, "environment" for what is missing here), "" when
    nothing did; `trace`: the exception, one line, as `read_by` read it ("python": the program's own
    traceback); `against`: what AKG's result is compared with ("Python", "numpy", "plain TVM", "AKG with attrs
    ..."); `compared`: how many elements; `done`: the check reached its verdict."""

    stage: str
    against: str = ""
    raised_by: str = ""
    trace: str = ""
    read_by: str = ""
    compared: int = 0
    done: bool = False

    def line(self):
        return f"{RECORD} {json.dumps(dataclasses.asdict(self))}"

    @classmethod
    def last_in(cls, lines):
        """The last record in a program's output lines; None when it wrote none (or only cut ones)."""
        for line in reversed(lines):
            if line.startswith(RECORD + " "):
                with contextlib.suppress(ValueError, TypeError):
                    return cls(**json.loads(line[len(RECORD) + 1 :]))
        return None


def replier(fd):
    """A function that writes one JSON object per line to `fd` (the protocol pipe)."""

    def reply(message):
        os.write(fd, (json.dumps(message) + "\n").encode())

    return reply


def request_lines(fd):
    """The lines the reducer writes to `fd`, one request each, until it closes it (read unbuffered from the
    fd, so a worker's child does not inherit requests sitting in a buffer)."""
    pending = b""
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            yield line


def as_python_runs(script):
    """sys.path as `python <script>` has it: the script's own folder first."""
    folder = os.path.dirname(os.path.abspath(script))
    if sys.path[:1] != [folder]:
        sys.path.insert(0, folder)


def preload_compiler(script):
    """Import what MindSpore's compile entry (compiler.py) would import first, the same way: it sets these
    two variables, then puts AKG's folder (its get_file_path module says where) on sys.path. Nothing for
    another script."""
    if os.path.basename(script) != "compiler.py" or not os.path.isfile(
        os.path.join(os.path.dirname(script), "get_file_path.py")
    ):
        return
    os.environ["MS_COMPILER_CACHE_PATH"] = "."
    os.environ["KERNEL_META_DIR"] = "kernel_meta"
    as_python_runs(script)
    from get_file_path import get_akg_path  # the compiler's own module, found at run time

    sys.path.insert(0, get_akg_path())
    import akg.ms

    with contextlib.suppress(ImportError):  # imported by the first compile; not in every AKG version
        import akg.ms.info_version_adapt  # noqa: F401


def import_akg(build=None):
    """AKG (mindspore/_akg) from the MindSpore of this interpreter, with the build BUILD_ENV names, else `build`
    (lib/plugin/<build>: a wrong-result check's spec names it), else the first the wheel ships (nothing that
    needs a particular one is compiled then). ImportError when there is none."""
    spec = importlib.util.find_spec("mindspore")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"MindSpore is not installed for {sys.executable}")
    mindspore = next(iter(spec.submodule_search_locations))
    if build and not os.environ.get(BUILD_ENV):
        os.environ[BUILD_ENV] = os.path.join(mindspore, "lib", "plugin", build)
    if not os.environ.get(BUILD_ENV):
        plugins = os.path.join(mindspore, "lib", "plugin")
        builds = sorted(d for d in os.listdir(plugins) if os.path.isfile(os.path.join(plugins, d, "libakg.so")))
        if not builds:
            raise ImportError(f"no AKG build in {plugins}")
        os.environ[BUILD_ENV] = os.path.join(plugins, builds[0])
    path = os.path.join(mindspore, "_akg")
    if path not in sys.path:
        sys.path.insert(0, path)
    import akg

    return akg
