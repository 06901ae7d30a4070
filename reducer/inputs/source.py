"""The Hybrid DSL function a user's file or a `.info`'s func_source_str holds, cut out as MindSpore does."""

from __future__ import annotations

import ast
import textwrap

from reducer.core import pyparse
from reducer.core.errors import InputError


def function_source(source: str, function: str | None, origin: str) -> tuple[str, str]:
    """Cut the named (or the only) function out of a module, as MindSpore does: from `def` on."""
    try:
        tree = pyparse.parse(source)
    except SyntaxError as exc:
        raise InputError(f"{origin}: Python syntax error at line {exc.lineno}: {exc.msg}") from None
    except (RecursionError, ValueError, MemoryError) as exc:
        raise InputError(f"{origin}: not a Python kernel ({type(exc).__name__})") from None
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if function is None:
        if len(funcs) != 1:
            names = ", ".join(f.name for f in funcs) or "none"
            raise InputError(f"{origin}: field 'function' is needed: the file defines {names}")
        node = funcs[0]
    else:
        matches = [f for f in funcs if f.name == function]
        if not matches:
            raise InputError(f"{origin}: field 'function': no function named {function!r} in the kernel")
        node = matches[0]
    segment = ast.get_source_segment(source, node, padded=True) or ""
    return textwrap.dedent(segment).rstrip() + "\n", node.name
