"""Passes that know TeLang: drop a stage (its tensor replaced by an input or stage of the same shape, or its
compute inlined into its consumers), drop a reduce axis (the last one turns a reduction into a plain compute),
simplify an expression the TeLang way (an elementwise `tvm.*` call or an `if_then_else` by an operand, a cast
dropped), and shrink input dims together with the shape constants that carry the same value."""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from functools import partial

from reducer.core.case import Case
from reducer.core.errors import InvalidKernel
from reducer.kernels.kinds import Dim, kind_of, linked_groups
from reducer.kernels.telang import evaluate
from reducer.search.passes.ast_edit import (
    Replacement,
    Substitute,
    input_shapes,
    node_edits,
    parse,
    render,
    tvm_call,
)
from reducer.search.passes.base import Edit, Number, NumberPass, TransformPass, code
from reducer.search.passes.expressions import ExpressionToOperand, operands
from reducer.search.passes.tensors import DropIndex, dims_label

REDUCERS = {"sum", "max", "min"}  # tvm.<reducer>(expr, axis=...) is a reduction; tvm.max(a, b) is not
NOT_ELEMENTWISE = {"compute", "reduce_axis", "placeholder", "extern", "const", "var", "thread_axis", "comm_reducer"}


def _axis_argument(call: ast.Call) -> ast.expr | None:
    """The `axis` argument of a reducer call, by keyword or as its second argument."""
    for keyword in call.keywords:
        if keyword.arg == "axis":
            return keyword.value
    return call.args[1] if len(call.args) > 1 else None


def reduce_axes(func: ast.FunctionDef) -> set[str]:
    """The names the function binds to `tvm.reduce_axis(...)`."""
    return {
        node.targets[0].id
        for node in ast.walk(func)
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and tvm_call(node.value) == "reduce_axis"
    }


def _reduction(node: ast.AST, axes: set[str]) -> ast.Call | None:
    """`node` when it is a reduction: a reducer called with reduce axes, which `tvm.max(a, b)` is not (as
    TVM tells them: by whether the second argument is an IterVar or a list)."""
    if tvm_call(node) not in REDUCERS:
        return None
    assert isinstance(node, ast.Call)
    axis = _axis_argument(node)
    is_axis = (
        isinstance(axis, (ast.List, ast.Tuple))
        or (isinstance(axis, ast.Name) and axis.id in axes)
        or (axis is not None and tvm_call(axis) == "reduce_axis")
        or any(k.arg == "axis" for k in node.keywords)
    )
    return node if is_axis else None


def _telang_operands(axes: set[str]) -> Callable[[ast.AST], list[Replacement]]:
    """What a TeLang expression may become: an operand of an arithmetic or elementwise `tvm.*` call (a branch of
    `tvm.if_then_else`, the argument of `tvm.exp`, either side of `tvm.max(a, b)`), the value a cast converts."""

    def options(node: ast.AST) -> list[Replacement]:
        name = tvm_call(node)
        if name is not None:
            assert isinstance(node, ast.Call)
            if name in NOT_ELEMENTWISE or _reduction(node, axes) is not None:
                return []
            if name == "if_then_else":
                return list(node.args[1:])
            return [a for a in node.args if not isinstance(a, ast.Constant) or isinstance(a.value, (int, float))]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "astype":
            return [node.func.value]
        return operands(node)

    return options


class TeLangToOperand(ExpressionToOperand):
    def edits(self, case: Case) -> Iterator[Edit]:
        return node_edits(case, _telang_operands(reduce_axes(parse(case))))


class DropReduceAxis(TransformPass):
    """`tvm.sum(e, axis=[k, r])` -> `tvm.sum(e with r = 0, axis=[k])`; `tvm.sum(e, axis=k)` -> `e with k = 0`."""

    name = "reduce-axes"

    def edits(self, case: Case) -> Iterator[Edit]:
        func = parse(case)
        axes = reduce_axes(func)
        calls = [n for n in ast.walk(func) if _reduction(n, axes) is not None]
        for index, call in enumerate(calls):
            axis = _axis_argument(call)  # type: ignore[arg-type]
            axes = axis.elts if isinstance(axis, (ast.List, ast.Tuple)) else [axis]
            for k, dropped in enumerate(axes):
                if isinstance(dropped, ast.Name):
                    yield Edit(
                        f"line {call.lineno}: drop reduce axis {dropped.id} of {code(ast.unparse(call))}",
                        self._dropped(case, index, k, dropped.id),
                    )

    @staticmethod
    def _dropped(case: Case, index: int, k: int, name: str) -> Case:
        func = parse(case)
        axes = reduce_axes(func)
        call = [n for n in ast.walk(func) if _reduction(n, axes) is not None][index]
        assert isinstance(call, ast.Call)
        axis = _axis_argument(call)
        kept = [e for i, e in enumerate(axis.elts) if i != k] if isinstance(axis, (ast.List, ast.Tuple)) else []
        source = Substitute({name: ast.Constant(0)}).visit(call.args[0])
        if kept:
            call.args[0] = source
            new_axis = ast.List(kept, ast.Load()) if len(kept) > 1 else kept[0]
            call.keywords = [kw for kw in call.keywords if kw.arg != "axis"]
            call.args = call.args[:1]
            call.keywords.append(ast.keyword("axis", new_axis))
            return render(case, func)
        return render(case, _ReplaceNode(call, source).visit(func))


class _ReplaceNode(ast.NodeTransformer):
    def __init__(self, old: ast.AST, new: ast.AST) -> None:
        self.old, self.new = old, new

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.old:
            return self.new
        return self.generic_visit(node)


def _stages(func: ast.FunctionDef) -> list[tuple[int, str, ast.Call]]:
    """(statement index, name, call) of every `name = tvm.compute(...)` of the function body."""
    found = []
    for i, stmt in enumerate(func.body):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and tvm_call(stmt.value) == "compute"
        ):
            found.append((i, stmt.targets[0].id, stmt.value))
    return found  # type: ignore[return-value]


class _InlineStage(ast.NodeTransformer):
    """Every read `name[i, j]` becomes the stage's body with its lambda's parameters bound to `i`, `j`."""

    def __init__(self, name: str, params: list[str], body: ast.expr) -> None:
        self.name, self.params, self.body = name, params, body

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == self.name and isinstance(node.ctx, ast.Load):
            indices = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if len(indices) == len(self.params):
                return Substitute(dict(zip(self.params, indices, strict=True))).visit(copy.deepcopy(self.body))
        return node


def _inlinable(call: ast.Call, axes: set[str]) -> tuple[list[str], ast.expr] | None:
    """The lambda's parameters and body of a compute that may be inlined: plain parameters, no reduction."""
    fn = call.args[1] if len(call.args) > 1 else None
    if not isinstance(fn, ast.Lambda) or fn.args.vararg is not None or _reduction(fn.body, axes) is not None:
        return None
    return [a.arg for a in fn.args.args], fn.body


def _returned(func: ast.FunctionDef) -> tuple[int, list[ast.expr]] | None:
    """The index of the body's last statement, when it returns, and the outputs it returns."""
    last = func.body[-1] if func.body else None
    if not isinstance(last, ast.Return) or last.value is None:
        return None
    value = last.value
    return len(func.body) - 1, list(value.elts) if isinstance(value, (ast.List, ast.Tuple)) else [value]


def _output_edits(case: Case, stages: list[str]) -> Iterator[Edit]:
    """Fewer outputs, or an output that is a stage the returned one reads."""
    func = parse(case)
    found = _returned(func)
    if found is None:
        return
    index, outputs = found
    for k, output in enumerate(outputs):
        replacements: list[tuple[str, list[ast.expr]]] = []
        if len(outputs) > 1:
            replacements.append((f"drop output {code(ast.unparse(output))}", outputs[:k] + outputs[k + 1 :]))
        read = {n.id for n in ast.walk(output) if isinstance(n, ast.Name)}
        for stage in stages:
            if stage in read and not (isinstance(output, ast.Name) and output.id == stage):
                new = [*outputs[:k], ast.Name(stage, ast.Load()), *outputs[k + 1 :]]
                replacements.append((f"output {code(ast.unparse(output))} -> {stage}", new))
        for description, new in replacements:
            edited = parse(case)
            value = new[0] if len(new) == 1 else ast.List(new, ast.Load())
            edited.body[index] = ast.Return(copy.deepcopy(value))
            yield Edit(description, render(case, edited))


class DropStage(TransformPass):
    """A `tvm.compute` stage goes: its reads become reads of an input or earlier stage of the same shape, or its
    compute is inlined into the stages that read it; an output goes, or becomes a stage it reads."""

    name = "stages"

    def edits(self, case: Case) -> Iterator[Edit]:
        try:
            shapes = evaluate(case).stages
        except InvalidKernel:
            return
        func = parse(case)
        stages = _stages(func)
        axes = reduce_axes(func)
        yield from _output_edits(case, [name for _, name, _ in stages])
        params = input_shapes(func, case)
        for position, (index, name, call) in enumerate(stages):
            if (inline := _inlinable(call, axes)) is not None:
                edited = parse(case)
                del edited.body[index]
                inlined = render(case, _InlineStage(name, *inline).visit(edited))
                yield Edit(f"inline stage {name} into its readers", inlined)
            shape = shapes.get(name)
            earlier = {n for _, n, _ in stages[:position]}
            for other in [*params, *sorted(earlier)]:
                same = params.get(other) if other in params else getattr(shapes.get(other), "shape", None)
                if shape is not None and same == shape.shape:
                    edited = parse(case)
                    del edited.body[index]
                    yield Edit(
                        f"stage {name} -> {other}",
                        render(case, Substitute({name: ast.Name(other, ast.Load())}).visit(edited)),
                    )


def _computes(func: ast.FunctionDef) -> list[ast.Call]:
    """Every `tvm.compute(shape, lambda ...: ...)` call with a literal shape tuple, in walk order."""
    return [
        n
        for n in ast.walk(func)
        if tvm_call(n) == "compute"
        and isinstance(n, ast.Call)
        and len(n.args) > 1
        and isinstance(n.args[0], (ast.Tuple, ast.List))
        and isinstance(n.args[1], ast.Lambda)
        and n.args[1].args.vararg is None
        and len(n.args[1].args.args) == len(n.args[0].elts)
    ]


def _stage_name(func: ast.FunctionDef, call: ast.Call) -> str | None:
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and node.value is call and isinstance(node.targets[0], ast.Name):
            return node.targets[0].id
    return None


class DropStageAxes(TransformPass):
    """An axis of extent 1 of a `tvm.compute` goes: from its shape, its lambda (the parameter becomes 0) and the
    reads of its stage. Down to one axis: a compute has at least one."""

    name = "stage-axes"

    def edits(self, case: Case) -> Iterator[Edit]:
        for index, call in enumerate(_computes(parse(case))):
            shape = call.args[0].elts  # type: ignore[attr-defined]
            for axis, extent in enumerate(shape):
                if len(shape) > 1 and isinstance(extent, ast.Constant) and extent.value == 1:
                    yield Edit(f"line {call.lineno}: drop axis {axis} of a compute", self._dropped(case, index, axis))

    @staticmethod
    def _dropped(case: Case, index: int, axis: int) -> Case:
        func = parse(case)
        call = _computes(func)[index]
        shape, fn = call.args[0], call.args[1]
        assert isinstance(shape, (ast.Tuple, ast.List)) and isinstance(fn, ast.Lambda)
        rank = len(shape.elts)
        param = fn.args.args.pop(axis).arg
        del shape.elts[axis]
        fn.body = Substitute({param: ast.Constant(0)}).visit(fn.body)
        name = _stage_name(func, call)
        if name is not None:
            func = DropIndex(name, axis, rank).visit(func)
        return render(case, func)


class DropKeywords(TransformPass):
    """A keyword argument of a `tvm.*` call goes (`name=`, `dtype=`, `tag=`), but a reduction's `axis`."""

    name = "keywords"

    def edits(self, case: Case) -> Iterator[Edit]:
        def options(node: ast.AST) -> list[Replacement]:
            if tvm_call(node) is None:
                return []
            assert isinstance(node, ast.Call)
            dropped = []
            for k, keyword in enumerate(node.keywords):
                if keyword.arg != "axis":
                    edited = copy.deepcopy(node)
                    del edited.keywords[k]
                    dropped.append(edited)
            return dropped

        return node_edits(case, options)


class _Literals(ast.NodeTransformer):
    def __init__(self, old: int, new: int) -> None:
        self.old, self.new = old, new

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if type(node.value) is int and node.value == self.old:
            return ast.Constant(self.new)
        return node


class ShrinkDimsWithConstants(NumberPass):
    """Input dims that share a value, and the integer literals of that value (a shape written out, a reduce
    extent), shrunk together: a TeLang kernel's literals usually restate its input shapes."""

    name = "linked-constants"

    def numbers(self, case: Case) -> list[Number]:
        literals = {n.value for n in ast.walk(parse(case)) if isinstance(n, ast.Constant) and type(n.value) is int}
        groups = [dims for dims in linked_groups(case)]
        groups += [[(i, a)] for i, t in enumerate(case.inputs) for a, d in enumerate(t.shape) if d > 1]
        values = [case.inputs[dims[0][0]].shape[dims[0][1]] for dims in groups]
        return [
            Number(f"{dims_label(dims)} and literals", value, partial(_with_literals, case, dims, value))
            for dims, value in zip(groups, values, strict=True)
            if value in literals
        ]


def _with_literals(case: Case, dims: list[Dim], old: int, new: int) -> Case:
    func = _Literals(old, new).visit(parse(case))
    return kind_of(case).with_dims(render(case, func), dims, new)
