"""TeLang kernels (AKG's TVM tensor-expression language: `tvm.compute`, `tvm.reduce_axis`, `tvm.sum`, ...), and
the ir_builder kernels of the same Custom op: what a kernel of `ops.Custom(func, ..., func_type="akg")` is,
as MindSpore tells it from the source, and its outputs and validity, from evaluating it on placeholders with
AKG's own `tvm`. That runs in the interpreter and with the AKG build that compile the case
(in_mindspore/telang_probe.py, started by the launcher), in one long-lived probe per interpreter and build:
milliseconds per candidate once AKG is imported, and no compile."""

from __future__ import annotations

import atexit
import base64
import functools
import json
import signal
import subprocess
import threading
from dataclasses import dataclass

import numpy as np

from reducer.core.case import Case, TensorSpec
from reducer.core.errors import EnvironmentBroken, InvalidKernel
from reducer.core.targets import CPU
from reducer.in_mindspore.wire import BUILD_ENV
from reducer.kernels.padding import Dim, PaddingEffect, effect_of
from reducer.toolchain.launch import Launch, launch

TVM_COMPUTE, IR_BUILDER, HYBRID_FUNC = "tvm_compute", "ir_builder", "hybrid"
AKG_FUNC_TYPE = "akg"  # ops.Custom(func, ..., func_type="akg"): the language told from the source
ANSWER_SECONDS = 60.0  # one evaluation is milliseconds; a probe silent this long is stuck in the kernel's Python
READY_SECONDS = 300.0


def akg_func_type(source: str) -> str:
    """The func_type MindSpore gives a Custom op of func_type "akg" (custom_ops.py `_set_akg_kernel_type`):
    by what the source contains, "ir_builder" first."""
    if "ir_builder" in source:
        return IR_BUILDER
    if "compute" in source:
        return TVM_COMPUTE
    return HYBRID_FUNC


@dataclass(frozen=True)
class Evaluation:
    """A TeLang function evaluated on placeholders: its outputs, its named local tensors (the stages), and the
    reads whose bounds the probe could not decide (a condition that reads data, too many points)."""

    outputs: tuple[TensorSpec, ...]
    stages: dict[str, TensorSpec]
    unchecked: tuple[str, ...] = ()


class _Probe:
    """One telang_probe process and its line protocol; one request at a time."""

    def __init__(self, started: Launch) -> None:
        self.launch = started
        self.python = started.argv[0]
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        """The probe, started and ready; EnvironmentBroken, naming the interpreter, when it cannot be: an
        interpreter that is missing, dies as it starts, has no AKG, or never says it is ready says nothing
        about the kernel."""
        try:
            proc = subprocess.Popen(
                self.launch.argv,
                env=self.launch.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                start_new_session=True,  # a Ctrl-C of the reducer must not kill it mid-answer
            )
        except OSError as exc:
            raise EnvironmentBroken(f"field 'python': cannot start {self.python}: {exc.strerror}") from None
        first = self._answer(proc, READY_SECONDS)
        if "ready" in first:
            return proc
        proc.kill()
        code = proc.wait()
        if "unavailable" in first:
            why = f"it has no AKG to evaluate TeLang with ({first['unavailable']})"
        elif code < 0 and code != -signal.SIGKILL:
            why = f"it died of {signal.Signals(-code).name} as it started"
        elif code == -signal.SIGKILL:
            why = f"it did not start within {READY_SECONDS:g} s"
        else:
            why = f"it exited with code {code} as it started"
        raise EnvironmentBroken(f"field 'python': {self.python} cannot evaluate TeLang: {why}")

    def _answer(self, proc: subprocess.Popen[str], seconds: float) -> dict[str, object]:
        assert proc.stdout is not None
        timer = threading.Timer(seconds, proc.kill)
        timer.start()
        try:
            line = proc.stdout.readline()
        finally:
            timer.cancel()
        if not line:
            proc.kill()
            proc.wait()
            return {"invalid": "evaluating it kills AKG's tvm, or runs too long"}
        return json.loads(line)

    def ask(self, request: dict[str, object]) -> dict[str, object]:
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self.proc = self._start()
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            answer = self._answer(self.proc, ANSWER_SECONDS)
            if self.proc.poll() is not None:
                self.proc = None
            return answer

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


_PROBES: dict[tuple[str, ...], _Probe] = {}
_PROBES_LOCK = threading.Lock()


@functools.cache
def _probe(python: str | None, compiler: str | None, target: str, akg_build: str | None) -> _Probe:
    """The probe of a case with these fields, as the launcher starts it: in the interpreter and with the AKG
    build that compile the case (its own variables play no part in evaluating it); one per interpreter and
    build."""
    case = Case("probe", "", "", (), target=target, python=python, compiler=compiler, akg_build=akg_build)
    started = launch(case, "telang_probe")
    with _PROBES_LOCK:
        return _PROBES.setdefault((*started.argv, started.env.get(BUILD_ENV, "")), _Probe(started))


@atexit.register
def stop_probes() -> None:
    """End every probe (they end with the reducer anyway; a test ends them as a reducer's exit would)."""
    for probe in _PROBES.values():
        probe.stop()


def _spec(pair: object) -> TensorSpec:
    shape, dtype = pair  # type: ignore[misc]
    return TensorSpec(tuple(shape), str(dtype))


@functools.lru_cache(maxsize=4096)
def _evaluate(
    probe: _Probe, source: str, function: str, func_type: str, inputs: tuple[TensorSpec, ...], attrs: str
) -> Evaluation:
    """One evaluation, cached by everything the probe is asked (`attrs`: the op attrs as JSON, hashable)."""
    answer = probe.ask(
        {
            "source": source,
            "function": function,
            "func_type": func_type,
            "inputs": [[list(t.shape), t.dtype] for t in inputs],
            "attrs": json.loads(attrs),
        }
    )
    if "invalid" in answer:
        raise InvalidKernel(str(answer["invalid"]))
    stages = answer["stages"]
    assert isinstance(stages, dict)
    return Evaluation(
        tuple(_spec(o) for o in answer["outputs"]),  # type: ignore[attr-defined]
        {k: _spec(v) for k, v in stages.items()},
        tuple(str(read) for read in answer.get("unchecked", [])),  # type: ignore[attr-defined]
    )


def evaluate(case: Case) -> Evaluation:
    """`case`'s TeLang function evaluated on placeholders of its inputs by AKG's tvm, in the interpreter and with
    the AKG build that compile it; InvalidKernel (not cached) when it is no kernel AKG can lower."""
    probe = _probe(case.python, case.compiler, case.target, case.akg_build)
    return _evaluate(probe, case.source, case.function, case.func_type, case.inputs, json.dumps(case.op_attrs))


def padding_effect(case: Case, dims: list[Dim]) -> PaddingEffect:
    """What padding `dims` of the inputs does to the kernel's results (padding.py), run by plain TVM on the CPU in
    a probe of the CPU build: padding is a property of the kernel, not of the target it fails on."""
    probe = _probe(case.python, case.compiler, CPU.name, None)

    def run(values: list[np.ndarray]) -> list[np.ndarray]:
        answer = probe.ask(
            {
                "source": case.source,
                "function": case.function,
                "func_type": case.func_type,
                "inputs": [[list(t.shape), t.dtype] for t in case.inputs],
                "attrs": case.op_attrs,
                "run": [[list(v.shape), str(v.dtype), base64.b64encode(v.tobytes()).decode()] for v in values],
                "run_target": CPU.akg_name,
            }
        )
        if "invalid" in answer:
            raise InvalidKernel(str(answer["invalid"]))
        results = answer["results"]
        assert isinstance(results, list)
        return [np.frombuffer(base64.b64decode(data), dtype).reshape(shape) for shape, dtype, data in results]

    try:
        return effect_of(run, case.inputs, dims)
    except InvalidKernel as exc:
        return PaddingEffect.untold_because(f"plain TVM cannot run it: {exc}")
