"""MindSpore's static checks of a Hybrid DSL function, which `ops.Custom(func_type="hybrid")` runs before it
hands a kernel to AKG (`VariableUsage` in mindspore/ops/operations/_ms_kernel.py, 2.10), mirrored rule for
rule: a candidate that fails them never reaches AKG in real use, so it is refused without a compile.

Why a copy and not a call: this check runs on every candidate in the reducer's process, hundreds per
reduction at well under a millisecond each, and that process does not import MindSpore (importing
`_ms_kernel` costs ~2 s and ~400 MB, the case's interpreter may be another Python, and the warm workers
must not carry MindSpore's runtime into their forks). tests/kernels/test_hybrid_vs_mindspore.py runs
MindSpore's own checker on one kernel per rule and on the corpus kernels and requires the same verdicts;
bench/hybrid_checker.py compares the two on every candidate of the corpus reductions.

Beyond MindSpore's rules, `PREFILTER` refuses constructs AKG's Hybrid DSL parser has no rule for (MindSpore
lets them through and AKG then fails with a parser error, never the bug being reduced). The one place where
we knowingly differ: a tensor with a 0 in its shape (e.g. `output_tensor((n - 4,), ...)` once n shrinks to
4) runs fine in MindSpore's auto-infer, but hybrid.py refuses it: a reduction ending on a kernel whose
tensors hold no elements reproduces nothing a user runs."""

from __future__ import annotations

import ast

from reducer.core.errors import InvalidKernel
from reducer.core.targets import TARGETS, Target

BUFFERS = {"allocate", "output_tensor"}
# MindSpore 2.10 defines both as `_allocate(shape, dtype='float32', scope='global')`. Its static check (run for
# @kernel-decorated functions only) wants exactly two; its own custom-op tests pass a plain function with a
# scope, allocate(shape, dtype, 'local'), which reaches AKG unchecked. A .info does not say which it was.
BUFFER_ARGS = range(1, 4)
LOOPS = ("range", "serial", "vectorize", "parallel", "reduce")  # loop intrinsics with range() semantics
SCOPES = {"attr", "block_realize"}
UNARY_BASIC = {"sqrt", "sign", "log", "tanh", "exp", "abs", "int32", "float16", "float32"}
BINARY_BASIC = {"power"}
# MindSpore's "general" intrinsics: not on Ascend. atan2 is counted as unary there, so it takes one input.
UNARY_GENERAL = {"rsqrt", "erf", "isnan", "int8", "int16", "int64", "float64", "sin", "cos", "isinf"}
UNARY_GENERAL |= {"isfinite", "atan", "atan2", "expm1", "floor", "ceil", "trunc", "round"}
BINARY_GENERAL = {"ceil_div"}
GENERAL = UNARY_GENERAL | BINARY_GENERAL
CALLABLE = BUFFERS | set(LOOPS) | {"grid"} | SCOPES | UNARY_BASIC | BINARY_BASIC | GENERAL
CALLABLE |= {"max", "min", "len", "kernel", "ms_kernel"}
PREFILTER = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Import, ast.ImportFrom)
PREFILTER += (ast.Global, ast.Nonlocal, ast.Try, ast.Raise, ast.Yield, ast.YieldFrom, ast.Await)


class _VariableUsage(ast.NodeVisitor):
    """MindSpore's visitor: names declared before use and used inside the loop that declared them, loop
    variables never assigned, only intrinsics called (with their arity), `with` only over attr and
    block_realize, tensors declared once, attributes only .shape/.dtype of declared tensors, returns of
    inputs and every output_tensor."""

    def __init__(self, target: Target) -> None:
        self.unsupported = target.unsupported_intrinsics | (set() if target.general_intrinsics else GENERAL)
        self.device = target.device
        self.scopes: list[ast.AST] = []
        self.args: set[str] = set()
        self.declared: dict[str, ast.AST] = {}  # name -> the scope (function or loop) it was first stored in
        self.outputs: list[str] = []
        self.temps: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.scopes.append(node)
        self.args = {a.arg for a in node.args.args}
        for stmt in node.body:
            self.visit(stmt)

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self.scopes.append(node)
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.args:
            return
        loop_vars = [_loop_var(s) for s in self.scopes if isinstance(s, ast.For)]
        if node.id in loop_vars:
            if isinstance(node.ctx, ast.Store):
                raise InvalidKernel(f"the loop variable {node.id} is assigned")
            return
        if node.id not in self.declared:
            if not isinstance(node.ctx, ast.Store):
                raise InvalidKernel(f"undeclared variable {node.id}")
            self.declared[node.id] = self.scopes[-1]
        elif self.declared[node.id] not in self.scopes:
            raise InvalidKernel(f"variable {node.id} used outside the loop that defines it")

    def visit_Call(self, node: ast.Call) -> None:
        if not isinstance(node.func, ast.Name):
            raise InvalidKernel(f"call to {ast.unparse(node.func)} is not a Hybrid DSL intrinsic")
        name = node.func.id
        if name not in CALLABLE:
            raise InvalidKernel(f"call to {name} is not a Hybrid DSL intrinsic")
        if name in self.unsupported:
            raise InvalidKernel(f"{name} is not supported on {self.device}")
        if name in UNARY_BASIC | UNARY_GENERAL and len(node.args) != 1:
            raise InvalidKernel(f"{name} called with {len(node.args)} arguments, expects 1")
        if name in BINARY_BASIC | BINARY_GENERAL and len(node.args) != 2:
            raise InvalidKernel(f"{name} called with {len(node.args)} arguments, expects 2")
        if name in BUFFERS and len(node.args) not in BUFFER_ARGS:
            raise InvalidKernel(f"{name} called with {len(node.args)} arguments, expects shape, dtype and scope")
        for arg in node.args:
            self.visit(arg)

    def visit_With(self, node: ast.With) -> None:
        context = node.items[0].context_expr
        name = context.func.id if isinstance(context, ast.Call) and isinstance(context.func, ast.Name) else ""
        args = context.args if isinstance(context, ast.Call) else []
        if name == "attr":
            if len(args) != 2 or not _constant(args[0], str) or not _constant(args[1], str, int, float, bool):
                raise InvalidKernel("attr(...) takes a string and a string, number or bool")
        elif name == "block_realize":
            if len(args) != 1 or not isinstance(args[0], ast.Name):
                raise InvalidKernel("block_realize(...) takes one tensor name")
        else:
            raise InvalidKernel(f"with {ast.unparse(context)} is not a Hybrid DSL scope")
        for stmt in node.body:
            if not (isinstance(stmt, ast.Expr) and _constant(stmt.value, str)):
                self.visit(stmt)

    def visit_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) > 1:
            raise InvalidKernel("multiple assignment targets")
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            if target.id in self.outputs + self.temps:
                raise InvalidKernel(f"tensor {target.id} is redefined")
            if value.func.id == "allocate":
                self.temps.append(target.id)
            elif value.func.id == "output_tensor":
                self.outputs.append(target.id)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if not isinstance(node.value, ast.Name) or node.value.id not in {*self.outputs, *self.temps, *self.args}:
            raise InvalidKernel(f"{ast.unparse(node)}: attributes are read of declared tensors only")
        if node.attr not in ("shape", "dtype"):
            raise InvalidKernel(f"attribute {ast.unparse(node)} is not .shape or .dtype of a tensor")

    def visit_Return(self, node: ast.Return) -> None:
        value = node.value
        if isinstance(value, ast.Name):
            names = [value.id]
        elif isinstance(value, ast.Tuple) and all(isinstance(e, ast.Name) for e in value.elts):
            names = [e.id for e in value.elts if isinstance(e, ast.Name)]
        else:
            raise InvalidKernel("the return value must be tensor names")
        if not set(names) <= self.args | set(self.outputs):
            raise InvalidKernel("a returned name is neither an input nor an output_tensor")
        if not set(self.outputs) <= set(names):
            raise InvalidKernel("an output_tensor is not returned")

    def visit_While(self, node: ast.While) -> None:
        raise InvalidKernel("keyword while is not accepted in the Hybrid DSL")

    def visit_Break(self, node: ast.Break) -> None:
        raise InvalidKernel("keyword break is not accepted in the Hybrid DSL")

    def visit_Continue(self, node: ast.Continue) -> None:
        raise InvalidKernel("keyword continue is not accepted in the Hybrid DSL")


def _loop_var(loop: ast.For) -> str:
    if not isinstance(loop.target, ast.Name):
        raise InvalidKernel("a loop variable must be one name")
    return loop.target.id


def _constant(node: ast.AST, *types: type) -> bool:
    return isinstance(node, ast.Constant) and node.value is not None and isinstance(node.value, types)


def static_check(func: ast.FunctionDef, target: str) -> None:
    """InvalidKernel unless `func` passes MindSpore's static checks for `target` and the pre-filter."""
    for node in ast.walk(func):
        if isinstance(node, PREFILTER):
            raise InvalidKernel(f"{type(node).__name__} is not Hybrid DSL")
    _VariableUsage(TARGETS[target]).visit(func)
    if not any(isinstance(n, ast.Return) for n in ast.walk(func)):
        # MindSpore's checks let it through, but its auto-infer reads the dtype of what the kernel returns.
        raise InvalidKernel("the kernel has no return statement")
