"""What each part of a kernel does, for a wrong result's identity (compile/identity.py): each store of a Python
kernel and each op of a fused graph, with its role (elementwise, a broadcast, a reduction over which axes) and
the operators it computes with. A role never holds a size: one kernel computing wrong at several sizes is one
bug, and an elementwise `x + x` and a sum over an axis that both compute wrong are two, though both are an Add.

A reduced axis is a position in the tensor it reduces and that tensor's rank (`reduce 1/3`: the second of three
axes). In a Python kernel it is an index position of a tensor read with a loop variable (a `for`, an
ir_builder's `with ... as i`, a TeLang `reduce_axis`) that the store's target is not indexed by; a read indexed
by only some of the target's loop variables is a broadcast."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from reducer.core import pyparse
from reducer.kernels import graph as graphs

# A store: the loop variables its target is indexed by, the value stored, the loop variables bound around it.
_Store = tuple[set[str], ast.expr, set[str]]


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _indices(read: ast.Subscript) -> list[ast.expr]:
    return list(read.slice.elts) if isinstance(read.slice, ast.Tuple) else [read.slice]


def _stores(node: ast.AST, bound: set[str]) -> Iterator[_Store]:
    """The stores under `node`: subscript assignments inside loops, and the bodies of TeLang's compute lambdas
    (indexed by their arguments)."""
    if isinstance(node, ast.For):
        bound = bound | _names(node.target)
    elif isinstance(node, ast.With):
        bound = bound | {n for item in node.items if item.optional_vars for n in _names(item.optional_vars)}
    elif isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                yield _names(target.slice) & bound, node.value, bound
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript):
        # `out[i] += x[i, j]` is `out[i] = out[i] + x[i, j]`
        yield _names(node.target.slice) & bound, ast.BinOp(node.target, node.op, node.value), bound
    elif isinstance(node, ast.Lambda):
        args = {a.arg for a in node.args.args}
        yield args, node.body, bound | args
    for child in ast.iter_child_nodes(node):
        yield from _stores(child, bound)


def _operators(value: ast.expr) -> list[str]:
    """The operators (Add, Lt, USub) and the functions called (exp, tvm.sum) in a stored value."""
    found: set[str] = set()
    for node in ast.walk(value):
        if isinstance(node, ast.BinOp | ast.UnaryOp | ast.BoolOp):
            found.add(type(node.op).__name__)
        elif isinstance(node, ast.Compare):
            found.update(type(op).__name__ for op in node.ops)
        elif isinstance(node, ast.Call):
            found.add(ast.unparse(node.func))
    return sorted(found)


def _role(target: set[str], value: ast.expr, bound: set[str]) -> str:
    reads = [n for n in ast.walk(value) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)]
    reduced = {
        f"{position}/{len(_indices(read))}"
        for read in reads
        for position, index in enumerate(_indices(read))
        if (_names(index) & bound) - target
    }
    if reduced:
        return f"reduce {','.join(sorted(reduced))}"
    if any(_names(read.slice) & bound < target for read in reads):
        return "broadcast"
    return "elementwise"


def source_roles(source: str) -> list[str]:
    """Each store of a Python kernel as its role and operators (`reduce 1/2 Add`, `elementwise Mult`), sorted,
    once each; [] for a source that does not parse."""
    try:
        tree = pyparse.parse(source)
    except SyntaxError:
        return []
    # TeLang's reduce axes are bound by an assignment, not a loop: `k = tvm.reduce_axis((0, n))`.
    axes = {
        n
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
        if ast.unparse(node.value.func).endswith("reduce_axis")
        for target in node.targets
        for n in _names(target)
    }
    stores = {" ".join([_role(*store), *_operators(store[1])]) for store in _stores(tree, axes)}
    return sorted(stores)


def graph_roles(graph: graphs.Graph) -> list[str]:
    """Each kind of op with the dtypes of its outputs (`Transpose:float16`), a reduction with the axes it
    reduces (`ReduceSum(reduce 1/2):float32`), sorted, once each. The op's name says the role of the rest
    (elementwise, BroadcastTo, MatMul)."""
    typed = set()
    for op in graph["op_desc"]:
        dtypes = ",".join(o["data_type"] for o in op.get("output_desc", []))
        name = op["name"]
        if name in graphs.REDUCE:
            rank = len(graphs.op_inputs(op)[0].get("shape", []))
            axis = graphs.operand(op, "axis", 1)
            axes = axis if isinstance(axis, list) else [] if axis is None else [axis]
            reduced = sorted({a % max(rank, 1) for a in axes if isinstance(a, int)}) or range(rank)
            name = f"{name}(reduce {','.join(f'{a}/{rank}' for a in reduced)})"
        typed.add(f"{name}:{dtypes}")
    return sorted(typed)
