"""The targets AKG compiles for, as values: one table that every other module asks, so that adding a target
(an Ascend 310, a second GPU arch) is one entry here plus its tests. A target's name is the `process` of
AKG's kernel JSON and the `target` of a crash.yaml; a name the table does not know is refused at the input
(`target_named`), never mapped to a default."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from reducer.core.errors import InputError

NVCC, CCEC = "nvcc", "ccec"  # the code generators that take a compile on past AKG's passes, outside AKG


@dataclass(frozen=True)
class Release:
    """A MindSpore release installed for a target whose build the running MindSpore does not ship: what pip
    installs, and the AKG build it must bring."""

    mindspore: str
    build: str  # the plugin folder of lib/plugin/ that must hold libakg.so
    python: tuple[int, int]  # the Python its CPU wheels are built for here (cp311)

    @property
    def requirements(self) -> list[str]:
        return [f"mindspore=={self.mindspore}", "decorator"]  # AKG imports decorator, MindSpore does not declare it

    @property
    def by_hand(self) -> str:
        """How a person gets the same toolchain, for the bundle and the errors."""
        return f"`pip install {' '.join(self.requirements)}` into a Python {self.python[0]}.{self.python[1]} venv"


@dataclass(frozen=True)
class Target:
    """One target of AKG: the MindSpore device it is, the builds that compile it, AKG's own name for it, what
    stops its pipeline on a machine without the device's code generator, and what its kernels may use."""

    name: str  # AKG's `process`: cpu, cuda, aicore
    device: str  # MindSpore's device_target, and how a bundle names the hardware
    device_article: str  # the device in a sentence: "a GPU"
    build_prefix: str  # the AKG builds of a wheel that compile it: lib/plugin/<build_prefix>*
    akg_name: str  # AKG's own target name (attrs["target"] of its composite build)
    target_info: Mapping[str, str] | None  # what MindSpore writes as `target_info` in a kernel JSON of it
    codegen: str = ""  # the code generator after AKG's passes outside AKG (NVCC, CCEC), '' when AKG emits it
    # AKG's log line where its pipeline stops on a machine without `codegen` (a standalone repro.py looks for it
    # too); '' when the stop is ours (the nvcc shim)
    codegen_stop: str = ""
    codegen_stop_means: str = ""  # what a compile that stops there reached, in a verdict
    codegen_stage: str = ""  # the code generator as a verdict names how far a compile got: "compiles up to nvcc"
    toolchain: Release | None = None  # installed when the running MindSpore does not ship its build
    runs_custom_ops: bool = False  # MindSpore of this machine's wheels runs a Custom op on the device
    runs_on_host: bool = False  # its kernels run on this machine's CPU (tvm's CPU runtime)
    general_intrinsics: bool = True  # its Hybrid DSL has MindSpore's "general" intrinsics (sin, erf, ...)
    unsupported_intrinsics: frozenset[str] = frozenset()  # Hybrid DSL intrinsics and dtypes its AKG cannot compile
    workarounds: tuple[str, ...] = ()  # what its users try (diagnosis/workarounds.py names them)
    # Which MindSpore wheel a maintainer installs to reproduce it ({build}: the AKG build the bundle used), and
    # what a fixed kernel's repro.py meets on a machine without `codegen`; in an ISSUE.md's steps.
    wheel: str = "CPU wheel"
    fixed_without_codegen: str = ""

    @property
    def stopped_reach(self) -> str:
        """How far a compile got that stopped before this target's code generator, in a verdict."""
        return f"up to {self.codegen_stage} (not run)"

    @property
    def template_device(self) -> str:
        """The hardware as MindSpore's issue template writes it (`/device cpu|gpu|ascend`): its bot labels the
        issue only from the lowercase word."""
        return self.device.lower()


_COMMON_WORKAROUNDS = ("manual tiling, whole loops", "manual tiling, tile 1", "auto-inline off", "auto-fuse off")
_HOST_WORKAROUNDS = (
    *_COMMON_WORKAROUNDS,
    "vectorisation off",
    "common subexpression elimination off",
    "float32 instead of float16/float64",
)

CPU = Target(
    name="cpu",
    device="CPU",
    device_article="a CPU",
    build_prefix="cpu",
    akg_name="llvm",
    target_info=MappingProxyType({"arch": "x86_64", "cpu": "core-avx2", "feature": "avx", "system": "linux"}),
    runs_custom_ops=True,
    runs_on_host=True,
    unsupported_intrinsics=frozenset({"atan2", "expm1", "float16"}),
    workarounds=_HOST_WORKAROUNDS,
)
CUDA = Target(
    name="cuda",
    device="GPU",
    device_article="a GPU",
    build_prefix="gpu",
    akg_name="cuda",
    target_info=None,
    codegen=NVCC,
    codegen_stage="nvcc",
    runs_custom_ops=True,
    workarounds=_HOST_WORKAROUNDS,
    wheel="the wheel ships AKG's GPU builds, `lib/plugin/{build}`; on a GPU machine, MindSpore for GPU",
)
AICORE = Target(
    name="aicore",
    device="Ascend",
    device_article="an Ascend NPU",
    build_prefix="ascend",
    akg_name="cce",
    target_info=None,
    codegen=CCEC,
    # AKG's Ascend pipeline ran to its end and handed the CCE source to CANN's compiler (ccec), which is not
    # here: AKG then fails to read the object ccec did not write (akg::codegen::BinFile2String <- CompileCce).
    codegen_stop=r"\[build_cce\.cc:\d+\].*inputfile\.is_open\(\)",
    codegen_stop_means="reaches CCE code generation, which needs CANN's compiler",
    codegen_stage="CCE",
    toolchain=Release("2.7.2", "ascend", (3, 11)),
    general_intrinsics=False,
    wheel=(
        "the CPU wheel for Python 3.11: MindSpore 2.7's CPU wheels ship AKG's Ascend build, `lib/plugin/ascend`, "
        "later ones do not; on an Ascend machine, MindSpore for Ascend with CANN"
    ),
    fixed_without_codegen=(
        "Without CANN, a fixed kernel stops at CCE code generation (`build_cce.cc` cannot read what CANN's `ccec` "
        "would have written), which counts as compiling; with CANN the compile goes on through `ccec`."
    ),
    workarounds=(
        *_COMMON_WORKAROUNDS,
        "manual tiling, small tiles",
        "rescheduling off",
        "loop partition off",
        "double buffering off",
        "multi-core off",
        "self-dependence removal off",
        "float16 instead of float32",
    ),
)
TARGETS: Mapping[str, Target] = MappingProxyType({t.name: t for t in (CPU, CUDA, AICORE)})
DEFAULT = CPU  # what a kernel JSON without `process` and a crash.yaml without `target` compile for
NAMES = tuple(TARGETS)


def target_named(name: object, where: str = "field 'target'") -> Target:
    """The target called `name`; InputError naming the ones known otherwise."""
    if isinstance(name, str) and name in TARGETS:
        return TARGETS[name]
    raise InputError(f"{where}: unknown target {name!r}; expected one of {', '.join(NAMES)}")


def with_toolchain() -> list[Target]:
    """The targets that get a toolchain of their own where the running MindSpore lacks their build."""
    return [t for t in TARGETS.values() if t.toolchain is not None]
