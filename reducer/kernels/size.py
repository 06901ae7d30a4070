"""How big a Case of each kernel kind is (kinds.size_of picks the kind), used by the search (accept only
smaller), the bundle and the benchmarks. Sizes compare as tuples: ops first (a fused graph's op count; 0 for
a Custom op's Python function: Hybrid DSL, TeLang, ir_builder), then tokens (of the kernel source; of a
graph, the tensors its ops read), statements (a graph's op attrs, flags set counting twice), inputs, shape
volume (of the inputs; of a graph, of every tensor), attrs, env, the magnitude of literals (a graph's constant
operands), the text of attr and env values, and how unusual the dtypes are. Only well-formed candidates are
compared (well_formed.py: the oracle refuses the others as invalid before any size matters), unless the case
allows ill-formed ones."""

from __future__ import annotations

import ast
import io
import json
import math
import tokenize
from typing import NamedTuple

from reducer.core import pyparse
from reducer.core.case import Case
from reducer.kernels import graph as graphs

_SKIP_TOKENS = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
    tokenize.ENCODING,
}
# Lower is preferred: a reduced case should use the most ordinary dtype that still fails.
DTYPE_RANK = {"float32": 0, "int32": 1, "float16": 2, "int64": 2, "float64": 3}


class Size(NamedTuple):
    ops: int
    tokens: int
    statements: int
    inputs: int
    volume: int
    attrs: int
    env: int
    literals: int
    config_chars: int
    dtypes: int

    def to_dict(self) -> dict[str, int]:
        return self._asdict()


def count_tokens(source: str) -> int:
    """Python tokens of the source, comments and whitespace tokens not counted."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return sum(1 for tok in tokens if tok.type not in _SKIP_TOKENS)


def _literal_weight(tree: ast.AST) -> int:
    total = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            value = abs(float(node.value))
            if math.isfinite(value):
                total += min(int(value), 10**9) + (0 if float(value).is_integer() else 1)
    return total


def _constant_weight(values: list[object]) -> int:
    """Scalars by magnitude; lists (axes, perms, shapes) by how far each entry is from its position, so an
    identity perm or a leading axis weighs least."""
    total = 0
    for value in values:
        for i, v in enumerate(value) if isinstance(value, list) else [(0, value)]:
            if isinstance(v, (int, float)) and math.isfinite(v):
                total += min(abs(int(v) - i), 10**9)
    return total


def graph_size(case: Case) -> Size:
    graph = graphs.loads(case.graph or "")
    ops = graph["op_desc"]
    reads = [t for op in ops for t in graphs.op_inputs(op)]
    tensors = graphs.graph_inputs(graph) + [t for op in ops for t in op["output_desc"]]
    return Size(
        ops=len(ops),
        tokens=len(reads),
        statements=sum(
            len(op.get("attr") or []) + sum(a.get("value") is True for a in op.get("attr") or []) for op in ops
        ),
        inputs=len(case.inputs),
        volume=sum(math.prod(t["shape"]) for t in tensors),
        attrs=len(case.attrs),
        env=len(case.env),
        literals=_constant_weight([t["value"] for t in reads if graphs.is_constant(t)]),
        config_chars=len(json.dumps(case.attrs, default=str)) + len(json.dumps(case.env)),
        dtypes=sum(DTYPE_RANK.get(t["data_type"], 4) for t in tensors),
    )


def function_size(case: Case) -> Size:
    tree = pyparse.parse(case.source)
    return Size(
        ops=0,  # no graph ops
        tokens=count_tokens(case.source),
        statements=sum(1 for n in ast.walk(tree) if isinstance(n, ast.stmt)),
        inputs=len(case.inputs),
        volume=sum(math.prod(t.shape) for t in case.inputs),
        attrs=len(case.attrs) + len(case.op_attrs),
        env=len(case.env),
        literals=_literal_weight(tree),
        config_chars=len(json.dumps(case.attrs, default=str)) + len(json.dumps(case.env)),
        dtypes=sum(DTYPE_RANK.get(t.dtype, 4) for t in case.inputs),
    )
