"""crash.yaml: its schema (pydantic), loading it into a Case with errors that name the file and the field,
and writing a replayable one for a reduced Case."""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from reducer.core.case import DTYPES, MAX_DIM, Case, Expectation, Mismatch, TensorSpec
from reducer.core.errors import InputError
from reducer.core.targets import DEFAULT, TARGETS
from reducer.inputs.info_file import case_from_info
from reducer.inputs.source import function_source
from reducer.kernels.kinds import FUNC_TYPES, function_kind, kind_of

MAX_YAML_NODES = 100_000


def _one_of(value: str, known: Collection[str], what: str) -> str:
    """`value` when it is one of `known`; else the error naming them."""
    if value not in known:
        raise ValueError(f"unknown {what} {value!r}; expected one of {', '.join(known)}")
    return value


class _TensorModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    shape: list[int]
    dtype: str

    @field_validator("shape")
    @classmethod
    def _dims(cls, shape: list[int]) -> list[int]:
        for dim in shape:  # [] is a scalar tensor
            if dim < 1 or dim > MAX_DIM:
                raise ValueError(f"dimension {dim} is out of range; expected 1..{MAX_DIM}")
        return shape

    @field_validator("dtype")
    @classmethod
    def _dtype(cls, dtype: str) -> str:
        return _one_of(dtype, DTYPES, "dtype")


class _AgainstModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    attrs: dict[str, Any]


class _ExpectModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    kind: Literal["error", "signal", "timeout", "memory", "mismatch"]
    message: str = ""
    where: str = ""
    frame: str = ""
    tolerance: float | None = Field(default=None, gt=0, le=1e6)
    against: _AgainstModel | None = None

    @model_validator(mode="after")
    def _mismatch_only(self) -> _ExpectModel:
        if self.kind != "mismatch" and (self.tolerance is not None or self.against is not None):
            raise ValueError("'tolerance' and 'against' belong to kind 'mismatch'")
        return self


_AttrValue = bool | int | float | str


class _CrashModel(BaseModel):
    """A crash.yaml as written; `target` is a name of core/targets.py."""

    model_config = ConfigDict(extra="forbid", strict=True)
    name: str | None = None
    kernel: str
    function: str | None = None
    inputs: list[_TensorModel] | None = Field(default=None, min_length=1)
    attrs: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, str | int | float | bool] = Field(default_factory=dict)
    target: str = DEFAULT.name
    # of a Python kernel; "akg" (or none): told from the source as MindSpore does for ops.Custom(func_type="akg")
    func_type: str | None = None
    # a Custom op's attrs (CustomRegOp().attr with a value), handed to the function after its inputs
    op_attrs: dict[str, _AttrValue | list[_AttrValue]] = Field(default_factory=dict)
    akg_build: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+$")
    python: str | None = None
    compiler: str | None = None
    timeout: float | None = Field(default=None, gt=0, le=24 * 3600)
    memory: int = Field(default=4096, ge=64, le=1024 * 1024)
    expect: _ExpectModel | None = None

    @field_validator("func_type")
    @classmethod
    def _known_func_type(cls, func_type: str | None) -> str | None:
        return None if func_type is None else _one_of(func_type, FUNC_TYPES, "func_type")

    @field_validator("target")
    @classmethod
    def _known_target(cls, target: str) -> str:
        return _one_of(target, TARGETS, "target")


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(top level)"
    return f"field '{where}': {first['msg'].removeprefix('Value error, ')}"  # our validators say it all


def load_yaml(path: Path) -> Any:
    """Read a YAML file with a clear error for anything that is not readable YAML."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, expected a crash.yaml file") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if node is not None and _expanded_size(node, {}) > MAX_YAML_NODES:
            raise InputError(f"{path}: YAML expands to more than {MAX_YAML_NODES} values (alias bomb?)")
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark else ""
        raise InputError(f"{path}: not valid YAML{at}") from None
    except RecursionError:
        raise InputError(f"{path}: YAML nested too deeply") from None


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """How many values the document has once aliases are expanded (aliases share composed nodes)."""
    if id(node) in memo:
        return memo[id(node)]
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    memo[id(node)] = min(size, MAX_YAML_NODES + 1)
    return memo[id(node)]


def load_case(path: Path) -> Case:
    """Load and validate crash.yaml; any problem is an InputError naming the file and the field."""
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping of fields (name, kernel, inputs, ...)")
    try:
        model = _CrashModel.model_validate(data)
    except ValidationError as err:
        raise InputError(f"{path}: {_first_error(err)}") from None
    if model.kernel.endswith((".info", ".json")) and "\n" not in model.kernel:
        for said in ("func_type", "op_attrs"):
            if said in model.model_fields_set:
                raise InputError(f"{path}: field '{said}': {model.kernel} says it (leave it out)")
        base = _info_kernel(path, model)
    elif model.inputs is None:
        raise InputError(f"{path}: field 'inputs': required for a Python kernel")
    else:
        base = _python_kernel(path, model)
    expect = mismatch = None
    if model.expect is not None:
        expect = Expectation(model.expect.kind, model.expect.message, model.expect.where, model.expect.frame)
        if model.expect.kind == "mismatch":
            if why := kind_of(base).uncheckable(base.with_(target=model.target)):
                raise InputError(f"{path}: field 'expect.kind': {why}")
            against = model.expect.against
            mismatch = Mismatch(model.expect.tolerance, json.dumps(against.attrs, sort_keys=True) if against else None)
    compiler = str((path.parent / model.compiler).resolve()) if model.compiler else None
    return base.with_(
        name=model.name or (path.parent.name if path.stem == "crash" else path.stem),
        attrs=dict(model.attrs),
        env={k: _env_text(v) for k, v in model.env.items()},
        python=model.python,
        compiler=compiler,
        akg_build=model.akg_build,
        timeout=model.timeout,
        memory=model.memory,
        expect=expect,
        mismatch=mismatch,
    )


def _kernel_file(path: Path, kernel: str) -> tuple[Path, str]:
    """The kernel file a crash.yaml names, relative to it, and its text."""
    kernel_path = (path.parent / kernel).resolve()
    try:
        return kernel_path, kernel_path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        raise InputError(f"{path}: field 'kernel': file {kernel} not found") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: field 'kernel': {kernel} is not UTF-8 text") from None


def _info_kernel(path: Path, model: _CrashModel) -> Case:
    """The kernel of a crash.yaml whose `kernel` is a `.info` file; its inputs come from the file."""
    kernel_path, text = _kernel_file(path, model.kernel)
    case = case_from_info(kernel_path, text)
    if model.target != case.target:
        raise InputError(f"{path}: field 'target': {model.target}, but {model.kernel} is for {case.target}")
    listed = tuple(TensorSpec(tuple(t.shape), t.dtype) for t in model.inputs or [])
    if listed and listed != case.inputs:
        raise InputError(f"{path}: field 'inputs': differs from the inputs in {model.kernel} (leave it out)")
    return case


def _python_kernel(path: Path, model: _CrashModel) -> Case:
    assert model.inputs is not None
    if "def " in model.kernel and "\n" in model.kernel:
        text, origin = model.kernel, f"{path} (inline kernel)"
    else:
        kernel_path, text = _kernel_file(path, model.kernel)
        origin = str(kernel_path)
    source, function = function_source(text, model.function, origin)
    kind = function_kind(model.func_type, source)
    case = Case(
        name="",
        source=source,
        function=function,
        inputs=tuple(TensorSpec(tuple(t.shape), t.dtype) for t in model.inputs),
        target=model.target,
        func_type=kind.func_type,
        op_attrs=dict(model.op_attrs),
    )
    if why := kind.wrong_inputs(case):
        raise InputError(f"{path}: field 'inputs': {why}")
    return case


def _env_text(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def case_to_yaml(case: Case, kernel_file: str, expect: Expectation | None) -> str:
    """A replayable crash.yaml for `case`, its kernel stored next to it as `kernel_file` (a `.info` file
    for a fused graph, which holds the inputs itself)."""
    data: dict[str, Any] = {"name": case.name, "kernel": kernel_file, **kind_of(case).crash_yaml_fields(case)}
    data |= {
        "attrs": case.attrs,
        "env": case.env,
        "target": case.target,
        **({"akg_build": case.akg_build} if case.akg_build else {}),
        "memory": case.memory,
    }
    if case.timeout is not None:
        data["timeout"] = case.timeout
    if expect is not None:
        data["expect"] = {**expect.to_dict(), **(case.mismatch.to_dict() if case.mismatch else {})}
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=110)
