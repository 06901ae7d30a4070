"""The values every layer passes around: Case (everything a pass may change), TensorSpec, Expectation and
Mismatch. Imports nothing of ours but the digest helper; loading and writing them is reducer.inputs' job."""

from __future__ import annotations

import json
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any

from reducer.core.files import json_digest
from reducer.core.targets import DEFAULT

DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")
MAX_DIM = 2**31 - 1
DEFAULT_TIMEOUT = 60.0  # seconds per compile when neither crash.yaml nor --timeout says


@dataclass(frozen=True)
class TensorSpec:
    """One kernel input: its shape and dtype."""

    shape: tuple[int, ...]
    dtype: str

    def to_dict(self) -> dict[str, Any]:
        return {"shape": list(self.shape), "dtype": self.dtype}


@dataclass(frozen=True)
class Expectation:
    """What the failure must look like; `exact` when learned from a run rather than written by a user."""

    kind: str
    message: str = ""
    where: str = ""
    frame: str = ""  # the innermost AKG frame of the failure (where a crash died)
    exact: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": self.message,
            "where": self.where,
            **({"frame": self.frame} if self.frame else {}),
        }


@dataclass(frozen=True)
class Mismatch:
    """A wrong-result case: the kernel compiled by AKG and run is compared with its kind's reference (a
    Hybrid DSL kernel run as plain Python, a fused graph evaluated with numpy) or, with `against`, with
    the same kernel compiled by AKG with other attrs."""

    tolerance: float | None = None  # |akg - reference| <= tolerance * (1 + |reference|); None: by dtype
    against: str | None = None  # JSON of the other attrs set; None: the kind's reference

    @property
    def against_attrs(self) -> dict[str, Any] | None:
        return None if self.against is None else json.loads(self.against)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {} if self.tolerance is None else {"tolerance": self.tolerance}
        if self.against is not None:
            data["against"] = {"attrs": self.against_attrs}
        return data


DEFAULT_FUNC_TYPE = "hybrid"
# Fields added after the first cases were keyed: at their default they are left out of the content, so that
# the keys of older cases (the cache's, the night's) stay what they were.
_LEFT_OUT_AT_DEFAULT = ("akg_build", "func_type", "op_attrs")


@dataclass(frozen=True)
class Case:
    """One compile problem: a Custom op's function (Hybrid DSL, TeLang or ir_builder: `func_type`) or a fused
    graph, its inputs, attrs, env and how to run the compiler."""

    name: str
    source: str
    function: str
    inputs: tuple[TensorSpec, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    target: str = DEFAULT.name  # a name of core/targets.py
    python: str | None = None
    compiler: str | None = None
    timeout: float | None = None  # None: the reducer chooses (see session.adaptive_timeout)
    memory: int = 4096
    expect: Expectation | None = None
    mismatch: Mismatch | None = None  # a wrong-result case: what "compiling" it means is running it
    graph: str | None = None  # a fused graph (the .info JSON); then source and function are empty
    akg_build: str | None = None  # the AKG build (lib/plugin/<name>) that compiles it; None: chosen by target
    func_type: str = DEFAULT_FUNC_TYPE  # of a Custom op's function: kernels/kinds.py tells its kind by it
    # A Custom op's attrs (CustomRegOp().attr with a value), in order: AKG hands them to the function after its
    # inputs (Hybrid DSL: positionally; TeLang: by name; ir_builder: as its attrs dict).
    op_attrs: dict[str, Any] = field(default_factory=dict)
    # A Hybrid DSL candidate may read elements it never wrote or leave outputs unwritten (--allow-ill-formed,
    # or an original that does); not part of content(): the compiler does not see it.
    allow_ill_formed: bool = False

    @property
    def time_limit(self) -> float:
        """Seconds one compile of this case may take."""
        return DEFAULT_TIMEOUT if self.timeout is None else self.timeout

    @property
    def bundle_name(self) -> str:
        """The folder of its bundle: the name, with the target when it is not the default, so that one kernel
        reduced for cpu and for cuda into one OUT gives two bundles."""
        return self.name if self.target == DEFAULT.name else f"{self.name}-{self.target}"

    def with_(self, **changes: Any) -> Case:
        return replace(self, **changes)

    def content(self) -> dict[str, Any]:
        """What the compiler sees: the key of the cache and of 'same candidate'."""
        return {
            **({"graph": self.graph} if self.graph is not None else {}),
            "source": self.source,
            "function": self.function,
            "inputs": [t.to_dict() for t in self.inputs],
            "attrs": self.attrs,
            "env": self.env,
            "target": self.target,
            **{name: getattr(self, name) for name in _LEFT_OUT_AT_DEFAULT if getattr(self, name) != _DEFAULTS[name]},
            **({"mismatch": self.mismatch.to_dict()} if self.mismatch else {}),
        }

    def key(self) -> str:
        return json_digest(self.content())


_DEFAULTS = {
    f.name: f.default if f.default_factory is MISSING else f.default_factory()  # type: ignore[misc]
    for f in fields(Case)
}
