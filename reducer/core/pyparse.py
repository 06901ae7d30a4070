"""Python parsing for every module of the reducer: `ast.parse` behind one lock. CPython 3.11's parser
is not safe in two threads at once: a `-j 2` reduction, whose compile threads build `.info` files and
infer outputs while the search parses candidates, failed with `SystemError: AST constructor recursion
depth mismatch`."""

from __future__ import annotations

import ast
import threading

_lock = threading.Lock()


def parse(source: str) -> ast.Module:
    with _lock:
        return ast.parse(source)
