"""The kernel kinds as objects: a Hybrid DSL function (checked by running it as Python), a TeLang or ir_builder
function (checked by evaluating it with AKG's tvm) and a fused graph (checked by shape inference).
`kind_of(case)` is the one place that tells them apart; everything that differs between them (outputs, input
names, setting dims and dtypes, size, the `.info`, how the bundle names them) is a method of the kind, and
callers ask the kind instead of branching on the Case."""

from __future__ import annotations

import json
from typing import Any, Protocol

from reducer.core.case import Case, Mismatch, TensorSpec
from reducer.core.errors import InvalidKernel
from reducer.core.targets import CPU, TARGETS, Target
from reducer.core.words import counted
from reducer.in_mindspore import graph_numpy
from reducer.kernels import graph as graphs
from reducer.kernels.graph_domains import input_domains
from reducer.kernels.hybrid import infer_outputs, loop_nest_extents, parse_function
from reducer.kernels.hybrid import padding_effect as hybrid_padding
from reducer.kernels.info import custom_info
from reducer.kernels.padding import Dim, PaddingEffect
from reducer.kernels.roles import graph_roles, source_roles
from reducer.kernels.size import Size, function_size, graph_size
from reducer.kernels.telang import AKG_FUNC_TYPE, HYBRID_FUNC, IR_BUILDER, TVM_COMPUTE, akg_func_type, evaluate
from reducer.kernels.telang import padding_effect as telang_padding
from reducer.kernels.well_formed import IllFormed

# The ordinary dtype of each unusual one: what a reduced case should use when the failure allows it.
SIMPLER_DTYPE = {"float16": "float32", "float64": "float32", "int64": "int32", "int8": "int32", "int16": "int32"}


class KernelKind(Protocol):
    name: str  # "hybrid" | "telang" | "ir_builder" | "graph": the key of the pass schedules
    func_type: str  # what a Case and a crash.yaml say of a Custom op's function; '' for a fused graph
    tiling_repository: bool  # AKG merges attrs from a tiling repository keyed by its ops into its attrs
    graph_kernel_flags: bool  # MindSpore's graph-kernel flags (MS_DEV_GRAPH_KERNEL_FLAGS) change it in a run
    told_from_source: bool  # MindSpore tells its language from the source (a Custom op of func_type "akg")
    unit: str  # what its size is counted in for a person: "ops", "tokens"
    label: str  # in messages: "not a valid <label>"
    kernel_file: str  # the bundle's file the kernel is in
    custom_func_type: str  # what `ops.Custom(func, ..., func_type=)` takes for it; '' for a fused graph
    # The `mindspore.ops` decorator a Custom op script wraps the function in, which also takes the build attrs
    # ('' for none: they go in the op's func_compile_attrs)
    custom_wrapper: str
    python_function: bool  # a Python function of a Custom op (source and inputs), not a graph
    well_formedness: str  # how a valid kernel is known well-formed, for an issue report ('' to say nothing)
    results_reference: str  # what a wrong-result check compares AKG's results with
    results_run: str  # how a wrong-result check runs the kernel AKG built
    error_model: bool  # its check bounds each element by an error model (graph_bounds.py), not a tolerance
    results_slack: str  # what its check allows beyond the tolerance, for an issue report ('' for nothing)

    def uncheckable(self, case: Case) -> str:
        """Why a wrong-result check cannot run `case` here ('' when it can)."""
        ...

    def check_spec(self, case: Case, outputs: tuple[TensorSpec, ...]) -> dict[str, Any]:
        """The kernel's part of a wrong-result check's spec (in_mindspore/mismatch_run.py); with "reference"
        when the check loads in_mindspore/graph_numpy.py."""
        ...

    def drawn_inputs(self, case: Case) -> list[dict[str, Any]]:
        """The wrong-result check's inputs: shape, dtype and, where the kernel's ops need it, the domain to
        draw from ("low", "high", "nonzero": see in_mindspore/mismatch_run.make_inputs)."""
        ...

    def padding_effect(self, case: Case, dims: list[Dim]) -> PaddingEffect:
        """What zero-padding `dims` of the inputs, outputs cut back, does to the results (padding.py)."""
        ...

    def smallest(self, target: str) -> Case:
        """The smallest wrong-result case of this kind on `target`: what a check runner warms up with."""
        ...

    def ops(self, case: Case) -> str:
        """What the kernel computes with, in a stable order: a wrong result's place (compile/identity.py),
        so two kernels that compute wrong in different ops are two bugs."""
        ...

    def outputs(self, case: Case) -> tuple[TensorSpec, ...]:
        """The output tensors; InvalidKernel if MindSpore would not hand this kernel to AKG."""
        ...

    def input_names(self, case: Case) -> list[str]:
        """The inputs as their user knows them."""
        ...

    def ill_formed(self, case: Case) -> str:
        """Why the kernel is not well-formed (reads memory it never wrote, leaves outputs unwritten); ''
        when it is, or when it runs too long as Python to tell."""
        ...

    def undecided(self, case: Case) -> tuple[str, ...]:
        """What the well-formedness check of a valid `case` could not decide (each a sentence); () when it
        decided everything."""
        ...

    def on_target(self, case: Case, target: str) -> Case:
        """The same kernel compiled for `target` (cpu, cuda, aicore), as MindSpore would hand it to AKG there."""
        ...

    def with_dims(self, case: Case, dims: list[Dim], value: int) -> Case:
        """`case` with every input dim of `dims` set to `value` (an invalid result is rejected by the oracle)."""
        ...

    def with_dtypes(self, case: Case, new: dict[str, str]) -> Case | None:
        """Every tensor of a dtype in `new` made `new[dtype]`; None if that is not a valid kernel."""
        ...

    def size(self, case: Case) -> Size: ...

    def info(self, case: Case, outputs: tuple[TensorSpec, ...]) -> dict[str, Any]:
        """The AKG kernel JSON MindSpore would write for `case`."""
        ...

    def loop_extents(self, case: Case) -> list[int]:
        """The extents of the deepest loop nest, outermost first; [] when the kind has no loops to tile."""
        ...

    def amount(self, size: Size) -> str:
        """The size in the unit a person follows: '12 ops', '130 tokens'."""
        ...

    def count(self, size: Size) -> int:
        """The size in `unit`."""
        ...

    def size_in_full(self, size: Size) -> str:
        """Every part of the size a report names: '3 ops, 2 inputs and 96 tensor elements'."""
        ...

    def kernel_text(self, case: Case, outputs: tuple[TensorSpec, ...]) -> str:
        """What the bundle's `kernel_file` holds."""
        ...

    def crash_yaml_fields(self, case: Case) -> dict[str, Any]:
        """The kind's fields of a crash.yaml that loads back to `case` (inputs/crash_yaml.py)."""
        ...

    def wrong_inputs(self, case: Case) -> str:
        """Why the inputs listed do not fit the kernel ('' when they do)."""
        ...

    def describe(self, case: Case) -> str:
        """What kind of kernel this is, for an issue report."""
        ...

    def listing(self, case: Case) -> str:
        """The kernel as text beside its source, for an issue report ('' when the source says it all)."""
        ...


class _CustomFunction:
    """What the kinds of a Custom op's Python function share: the inputs are its parameters, the size is its
    source's, the `.info` is a Custom op's."""

    def undecided(self, case: Case) -> tuple[str, ...]:
        return ()

    tiling_repository = False
    graph_kernel_flags = False
    unit = "tokens"

    kernel_file = "kernel.py"
    python_function = True

    def with_dims(self, case: Case, dims: list[Dim], value: int) -> Case:
        shapes = [list(t.shape) for t in case.inputs]
        for i, axis in dims:
            shapes[i][axis] = value
        inputs = tuple(TensorSpec(tuple(s), t.dtype) for s, t in zip(shapes, case.inputs, strict=True))
        return case.with_(inputs=inputs)

    def on_target(self, case: Case, target: str) -> Case:
        return case.with_(target=target)

    def with_dtypes(self, case: Case, new: dict[str, str]) -> Case | None:
        return case.with_(inputs=tuple(TensorSpec(t.shape, new.get(t.dtype, t.dtype)) for t in case.inputs))

    def size(self, case: Case) -> Size:
        return function_size(case)

    def info(self, case: Case, outputs: tuple[TensorSpec, ...]) -> dict[str, Any]:
        return custom_info(case, outputs)

    def amount(self, size: Size) -> str:
        return f"{size.tokens} tokens"

    def count(self, size: Size) -> int:
        return size.tokens

    def size_in_full(self, size: Size) -> str:
        return f"{size.tokens} tokens, {size.statements} statements and {size.volume} input elements"

    def kernel_text(self, case: Case, outputs: tuple[TensorSpec, ...]) -> str:
        return case.source

    def crash_yaml_fields(self, case: Case) -> dict[str, Any]:
        """Its func_type always: a Hybrid DSL source that contains 'compute' would otherwise read back as
        TeLang, as MindSpore reads a Custom op of func_type 'akg'."""
        return {
            "func_type": self.func_type,
            "function": case.function,
            "inputs": [{"shape": list(t.shape), "dtype": t.dtype} for t in case.inputs],
            **({"op_attrs": dict(case.op_attrs)} if case.op_attrs else {}),
        }

    def wrong_inputs(self, case: Case) -> str:
        params = parse_function(case.source).args.args
        if len(params) == len(case.inputs) + len(case.op_attrs):
            return ""
        if case.op_attrs:
            return (
                f"{case.function} takes {len(params)} parameters; {len(case.inputs)} inputs and "
                f"{len(case.op_attrs)} op attrs are listed"
            )
        return f"{case.function} takes {len(params)} inputs, {len(case.inputs)} are listed"

    def listing(self, case: Case) -> str:
        return ""

    def input_names(self, case: Case) -> list[str]:
        """The function's parameters, one per input (the op attrs follow them)."""
        return [arg.arg for arg in parse_function(case.source).args.args][: len(case.inputs)]

    def drawn_inputs(self, case: Case) -> list[dict[str, Any]]:
        """Anywhere: the kernel is checked against itself run as Python, which is as defined as it is."""
        return [t.to_dict() for t in case.inputs]

    def check_spec(self, case: Case, outputs: tuple[TensorSpec, ...]) -> dict[str, Any]:
        device = TARGETS[case.target].device
        return {"kernel": self.name, "source": case.source, "function": case.function, "device": device}

    def ops(self, case: Case) -> str:
        """Each store's role and operators (roles.py), then the inputs' dtypes."""
        dtypes = ",".join(sorted({t.dtype for t in case.inputs}))
        return f"{'; '.join(source_roles(case.source))} / {dtypes}"


class HybridKernel(_CustomFunction):
    name = "hybrid"

    def padding_effect(self, case: Case, dims: list[Dim]) -> PaddingEffect:
        return hybrid_padding(case, dims)

    func_type = HYBRID_FUNC
    told_from_source = False
    label = "Hybrid DSL kernel"
    custom_func_type = "hybrid"
    custom_wrapper = "kernel"
    results_reference = "the same kernel run as plain Python"
    error_model = False
    results_slack = ""
    results_run = 'run through MindSpore (`ops.Custom(..., func_type="hybrid")`)'
    well_formedness = (
        "it writes every element of its outputs and reads no element of a tensor it allocates before writing it "
        "(checked by running it as Python)"
    )

    def outputs(self, case: Case) -> tuple[TensorSpec, ...]:
        return infer_outputs(case)

    def smallest(self, target: str) -> Case:
        """A copy of one float."""
        source = (
            "def warm_up(x):\n    y = output_tensor(x.shape, x.dtype)\n"
            "    for i in range(x.shape[0]):\n        y[i] = x[i]\n    return y\n"
        )
        return Case("warm_up", source, "warm_up", (TensorSpec((1,), "float32"),), target=target, mismatch=Mismatch())

    def ill_formed(self, case: Case) -> str:
        try:
            infer_outputs(case.with_(allow_ill_formed=False))
        except IllFormed as exc:
            return str(exc)
        return ""

    def loop_extents(self, case: Case) -> list[int]:
        return loop_nest_extents(case)

    def uncheckable(self, case: Case) -> str:
        if case.op_attrs:
            return (
                f"a wrong-result check runs a {self.label} without op attrs ({', '.join(case.op_attrs)}); "
                "write their values into the kernel"
            )
        return _runs_on(case, [t for t in TARGETS.values() if t.runs_custom_ops], self.label)  # through MindSpore

    def describe(self, case: Case) -> str:
        return "Hybrid DSL kernel (Custom op, func_type='hybrid')"


class TeLangKernel(_CustomFunction):
    """A TeLang function (`func_type` tvm_compute): called with one placeholder per input, it returns the
    output tensors of its `tvm.compute` stages. Every output element is defined by its compute, and one that
    reads a tensor outside its shape where the read's condition holds (padding reads past the edge only where
    it does not) is no valid kernel: every valid one is well-formed."""

    name = "telang"
    func_type = TVM_COMPUTE
    told_from_source = True
    label = "TeLang kernel"
    custom_func_type = "akg"
    custom_wrapper = ""
    reference = "telang_numpy"  # mismatch_run.REFERENCES: its compute definition evaluated in numpy
    results_reference = (
        "its compute definition evaluated in numpy, every float in float64 (no lowering, no code generation: "
        "nothing it shares with AKG's passes; plain TVM's build where numpy has no rule for an intrinsic)"
    )
    results_slack = (
        ", plus twice the distance of the same evaluation with each op rounded to its declared dtype (the "
        "rounding a right kernel at its own precision carries)"
    )
    results_run = (
        "built by MindSpore's AKG from its Custom op's .info (`akg.composite.build`, as a compile does) and run "
        "through tvm's CPU runtime, each tensor followed by a guard of poison"
    )
    error_model = False
    well_formedness = (
        "every element of every output is defined by its `tvm.compute` (by construction), and no read indexes a "
        "tensor outside its shape where its condition holds (checked for every candidate by tvm's bound analysis, "
        "or at every point where a condition is not a comparison of an axis with a constant)"
    )

    def outputs(self, case: Case) -> tuple[TensorSpec, ...]:
        return evaluate(case).outputs

    def padding_effect(self, case: Case, dims: list[Dim]) -> PaddingEffect:
        return telang_padding(case, dims)

    def ill_formed(self, case: Case) -> str:
        """Always '': a kernel reading a tensor outside its shape is refused as invalid (telang_probe.py)."""
        return ""

    def undecided(self, case: Case) -> tuple[str, ...]:
        """The reads whose bounds the probe could not decide: under a condition that reads data and does not
        keep them within the shape without it, or over too many points to check one by one."""
        return evaluate(case).unchecked

    def uncheckable(self, case: Case) -> str:
        """Built by AKG and run through tvm's CPU runtime, compared with its reference."""
        return _runs_on(case, [t for t in TARGETS.values() if t.runs_on_host], self.label)

    def check_spec(self, case: Case, outputs: tuple[TensorSpec, ...]) -> dict[str, Any]:
        return {
            "kernel": self.name,
            "info": self.info(case, outputs),
            "reference": self.reference,
            "run_target": CPU.akg_name,  # tvm's name of the CPU the plain build is for
            "source": case.source,
            "function": case.function,
            "func_type": case.func_type,
            "op_attrs": dict(case.op_attrs),
        }

    def smallest(self, target: str) -> Case:
        """A copy of one float."""
        source = "def warm_up(x):\n    return tvm.compute(x.shape, lambda i: x[i], name='y')\n"
        inputs = (TensorSpec((1,), "float32"),)
        return Case("warm_up", source, "warm_up", inputs, func_type=self.func_type, target=target, mismatch=Mismatch())

    def loop_extents(self, case: Case) -> list[int]:
        """The first output's axes: the loop nest of its compute."""
        try:
            return list(evaluate(case).outputs[0].shape)
        except InvalidKernel:
            return []

    def describe(self, case: Case) -> str:
        return "TeLang (TVM compute) kernel, Custom op func_type='akg'"


class IrBuilderKernel(TeLangKernel):
    """An ir_builder function (`func_type` ir_builder): called with the list of input placeholders and the
    op's attrs, it returns the `tvm.extern` tensors whose IR it builds statement by statement."""

    name = "ir_builder"
    func_type = IR_BUILDER
    label = "ir_builder kernel"
    well_formedness = ""  # its IR may read what it never wrote; nothing here checks it
    # Its IR is statements, not a compute definition numpy could evaluate: plain TVM builds it.
    reference = "telang_plain"
    results_reference = (
        "the same function built by plain TVM for the CPU (its default schedule, LLVM, none of AKG's passes) and "
        "run on its inputs widened (float16 to float32, float32 to float64)"
    )
    results_slack = (
        ", plus twice the distance of the same plain-TVM run at the kernel's own dtypes from the widened one (the "
        "rounding a right kernel at its own precision carries)"
    )

    def input_names(self, case: Case) -> list[str]:
        params = parse_function(case.source).args.args
        inputs = params[0].arg if params else "inputs"
        return [f"{inputs}[{i}]" for i in range(len(case.inputs))]

    def wrong_inputs(self, case: Case) -> str:
        """Always '': its first parameter is the list of inputs, of any length."""
        return ""

    def smallest(self, target: str) -> Case:
        """The TeLang kind's: the check builds and runs both kinds the same way."""
        return TELANG.smallest(target)

    def describe(self, case: Case) -> str:
        return "ir_builder (TVM IR builder) kernel, Custom op func_type='akg'"


class GraphKernel:
    name = "graph"
    func_type = ""
    tiling_repository = True
    graph_kernel_flags = True
    told_from_source = False
    unit = "ops"
    label = "fused graph"
    kernel_file = "kernel.info"
    custom_func_type = ""
    custom_wrapper = ""
    python_function = False
    well_formedness = ""
    results_reference = "a numpy evaluation of the graph's ops (independent of AKG's op_dsl)"
    error_model = True
    results_slack = ""
    results_run = (
        "built by MindSpore's AKG (`akg.composite.build`, as AKG's composite tests do) and run through tvm's CPU "
        "runtime, each tensor followed by a guard of poison"
    )

    def outputs(self, case: Case) -> tuple[TensorSpec, ...]:
        return graph_specs(graphs.infer(self.graph(case))["output_desc"])

    def input_names(self, case: Case) -> list[str]:
        return [t["tensor_name"] for t in graphs.graph_inputs(self.graph(case))]

    def ill_formed(self, case: Case) -> str:
        """Always '': an op computes its whole output and shape inference refuses an op reading a tensor
        nothing computed (graphs.checked), so every valid graph is well-formed."""
        return ""

    def undecided(self, case: Case) -> tuple[str, ...]:
        return ()

    def with_dims(self, case: Case, dims: list[Dim], value: int) -> Case:
        """Shapes inferred again; when that fails the case is returned anyway, and the oracle rejects it as
        invalid without a compile."""
        edited = graphs.set_input_dims(self.graph(case), dims, value)
        try:
            return with_graph(case, edited)
        except InvalidKernel:
            return case.with_(graph=graphs.dumps(edited), inputs=graph_specs(graphs.graph_inputs(edited)))

    def padding_effect(self, case: Case, dims: list[Dim]) -> PaddingEffect:
        return PaddingEffect.untold_because("fused graphs have no padding check yet")

    def on_target(self, case: Case, target: str) -> Case:
        """The graph with its `process` and the `target_info` MindSpore writes for that device (cpu only)."""
        graph = {k: v for k, v in self.graph(case).items() if k != "target_info"}
        graph["process"] = target
        if (target_info := TARGETS[target].target_info) is not None:
            graph["target_info"] = dict(target_info)
        return case.with_(target=target, graph=graphs.dumps(graph))

    def with_dtypes(self, case: Case, new: dict[str, str]) -> Case | None:
        graph = self.graph(case)
        for old, dtype in new.items():
            graph = graphs.replace_dtype(graph, old, dtype)
        try:
            return with_graph(case, graph)
        except InvalidKernel:
            return None

    def size(self, case: Case) -> Size:
        return graph_size(case)

    def info(self, case: Case, outputs: tuple[TensorSpec, ...]) -> dict[str, Any]:
        return self.graph(case)  # a fused graph is its own .info

    def uncheckable(self, case: Case) -> str:
        """Built by AKG and run through tvm's CPU runtime, compared with graph_numpy's evaluation."""
        missing = graph_numpy.unsupported(self.graph(case))
        if missing:
            why = [f"; {op}: {reason}" for op, (_, reason) in graph_numpy.UNSUPPORTED_ON.items()
                   if any(m.startswith(f"{op} on ") for m in missing)]  # fmt: skip
            return (
                f"the numpy reference of fused graphs has no rule for {', '.join(missing)}{''.join(why)} (it "
                f"covers {len(graph_numpy.SUPPORTED)} ops: reducer/in_mindspore/graph_numpy.py)"
            )
        return _runs_on(case, [t for t in TARGETS.values() if t.runs_on_host], self.label)

    def drawn_inputs(self, case: Case) -> list[dict[str, Any]]:
        """Each input inside the domain where every op reading it is defined (graph_domains.py)."""
        domains = input_domains(self.graph(case))
        return [{**t.to_dict(), **d.to_dict()} for t, d in zip(case.inputs, domains, strict=True)]

    def check_spec(self, case: Case, outputs: tuple[TensorSpec, ...]) -> dict[str, Any]:
        return {"kernel": self.name, "info": self.graph(case), "reference": "graph_numpy"}

    def smallest(self, target: str) -> Case:
        """Abs of two floats."""
        tensor = {"data_type": "float32", "format": "DefaultFormat", "shape": [2]}
        graph = {
            "composite": True,
            "id": 0,
            "op": "Fused_Abs_warm_up",
            "input_desc": [[{**tensor, "tensor_name": "input_0"}]],
            "op_desc": [
                {
                    "attr": None,
                    "name": "Abs",
                    "input_desc": [[{**tensor, "name": "x", "tensor_name": "input_0"}]],
                    "output_desc": [{**tensor, "name": "output", "tensor_name": "output_0_0"}],
                }
            ],
            "output_desc": [{**tensor, "tensor_name": "output_0_0"}],
            "platform": "AKG",
            "process": target,
            "version": 2,
        }
        case = Case("warm_up", "", "", (TensorSpec((2,), "float32"),), graph=graphs.dumps(graph), target=target)
        return self.on_target(case, target).with_(mismatch=Mismatch())

    def ops(self, case: Case) -> str:
        """Each op with the dtypes of its outputs, a reduction with its axes (roles.py):
        `Cast:float32 ReduceSum(reduce 1/2):float32`."""
        return " ".join(graph_roles(self.graph(case)))

    def loop_extents(self, case: Case) -> list[int]:
        return []

    def amount(self, size: Size) -> str:
        return counted(size.ops, "op")

    def count(self, size: Size) -> int:
        return size.ops

    def size_in_full(self, size: Size) -> str:
        return f"{counted(size.ops, 'op')}, {counted(size.inputs, 'input')} and {size.volume} tensor elements"

    def kernel_text(self, case: Case, outputs: tuple[TensorSpec, ...]) -> str:
        return json.dumps(self.info(case, outputs), indent=4)

    def crash_yaml_fields(self, case: Case) -> dict[str, Any]:
        """None: the `.info` holds the inputs."""
        return {}

    def wrong_inputs(self, case: Case) -> str:
        return ""

    def describe(self, case: Case) -> str:
        return (
            f"fused graph kernel of {counted(len(self.graph(case)['op_desc']), 'op')} (MindSpore graph-kernel fusion)"
        )

    def listing(self, case: Case) -> str:
        return graphs.describe(self.graph(case))

    @staticmethod
    def graph(case: Case) -> graphs.Graph:
        return graphs.loads(case.graph or "")


def results_unchecked(case: Case) -> str:
    """Why what `case` computes cannot be checked on this machine ('' when it can): its kernel must run on this
    machine's CPU, and its kind must have a reference there."""
    target = TARGETS[case.target]
    if not target.runs_on_host:
        return f"{case.target} kernels run on {target.device_article}, which this machine lacks"
    if case.compiler is not None:
        return f"the case compiles with its own entry ({case.compiler}); the check would build with MindSpore's AKG"
    return kind_of(case).uncheckable(case.with_(mismatch=Mismatch()))


def _runs_on(case: Case, targets: list[Target], label: str) -> str:
    """Why a wrong-result check cannot run `case` when its kernel runs on `targets` only ('' when it can)."""
    if TARGETS[case.target] in targets:
        return ""
    return (
        f"a wrong result needs the kernel run, and {case.target} {label}s run on "
        f"{TARGETS[case.target].device_article} only "
        f"(a wrong-result check of a {label} takes target {' or '.join(t.name for t in targets)})"
    )


HYBRID = HybridKernel()
TELANG = TeLangKernel()
IR_BUILDER_KIND = IrBuilderKernel()
GRAPH = GraphKernel()
_FUNCTION_KINDS: dict[str, KernelKind] = {HYBRID_FUNC: HYBRID, TVM_COMPUTE: TELANG, IR_BUILDER: IR_BUILDER_KIND}
FUNC_TYPES = (*_FUNCTION_KINDS, AKG_FUNC_TYPE)  # what a crash.yaml's func_type may say


def kind_of(case: Case) -> KernelKind:
    if case.graph is not None:
        return GRAPH
    return _FUNCTION_KINDS.get(case.func_type, HYBRID)


def function_kind(func_type: str | None, source: str) -> KernelKind:
    """The kind of a Custom op's function of `func_type`; "akg" or None: told from the source, as MindSpore
    tells a Custom op of func_type "akg" (`akg_func_type`)."""
    told = akg_func_type(source) if func_type in (None, AKG_FUNC_TYPE) else func_type
    return _FUNCTION_KINDS.get(told, HYBRID)


def kind_of_info(info: dict[str, Any]) -> KernelKind | None:
    """The kind of a kernel JSON as MindSpore writes it: a fused graph, or a Custom op of the func_type its
    first op names; None for a Custom op AKG does not compile from source."""
    if graphs.is_graph(info):
        return GRAPH
    op = (info.get("op_desc") or [{}])[0]
    attrs = {a.get("name"): a.get("value") for a in op.get("attr") or [] if isinstance(a, dict)}
    return _FUNCTION_KINDS.get(attrs.get("func_type"))


def outputs_of(case: Case) -> tuple[TensorSpec, ...]:
    """The kernel's output tensors; InvalidKernel if MindSpore would not hand this kernel to AKG."""
    return kind_of(case).outputs(case)


def size_of(case: Case) -> Size:
    return kind_of(case).size(case)


def info_text(case: Case, outputs: tuple[TensorSpec, ...]) -> str:
    """The `.info` file AKG compiles for `case`."""
    return json.dumps(kind_of(case).info(case, outputs), indent=4)


def graph_specs(tensors: list[graphs.Tensor]) -> tuple[TensorSpec, ...]:
    return tuple(TensorSpec(tuple(t["shape"]), t["data_type"]) for t in tensors)


def with_graph(case: Case, graph: graphs.Graph) -> Case:
    """`case` holding `graph` (checked and pruned: InvalidKernel if it is not a valid graph)."""
    graph = graphs.checked(graph)
    return case.with_(graph=graphs.dumps(graph), inputs=graph_specs(graphs.graph_inputs(graph)))


def as_float32(case: Case) -> Case | None:
    """`case` with float16 and float64 tensors in float32; None if it has none or that is not valid."""
    unusual = [d for d in ("float16", "float64") if any(t.dtype == d for t in case.inputs)]
    return kind_of(case).with_dtypes(case, dict.fromkeys(unusual, "float32")) if unusual else None


def as_float16(case: Case) -> Case | None:
    """`case` with float32 tensors in float16 (what Ascend's vector emitters demand for some reductions);
    None if it has none or that is not valid."""
    has = any(t.dtype == "float32" for t in case.inputs)
    return kind_of(case).with_dtypes(case, {"float32": "float16"}) if has else None


def linked_groups(case: Case) -> list[list[Dim]]:
    """Input dims with one value shared by several places, biggest value first: they usually must stay equal."""
    by_value: dict[int, list[Dim]] = {}
    for i, t in enumerate(case.inputs):
        for axis, d in enumerate(t.shape):
            if d > 1:
                by_value.setdefault(d, []).append((i, axis))
    return [dims for _, dims in sorted(by_value.items(), reverse=True) if len(dims) > 1]


def with_shapes(case: Case, shapes: list[tuple[int, ...]]) -> Case:
    """`case` with its inputs of `shapes` (of the same ranks), each dim that differs set by its kind."""
    kind = kind_of(case)
    for i, shape in enumerate(shapes):
        for axis, value in enumerate(shape):
            if case.inputs[i].shape[axis] != value:
                case = kind.with_dims(case, [(i, axis)], value)
    return case
