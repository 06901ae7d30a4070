"""The package layout is the architecture: each folder of reducer/ is one layer, imports point only down
the layers, and no modules import each other in a circle (imports inside functions count too)."""

from __future__ import annotations

import ast
from pathlib import Path

import reducer

ROOT = Path(reducer.__file__).parent
# Bottom to top; a module may import its own layer and the ones before it.
LAYERS = [
    "in_mindspore",
    "core",
    "toolchain",
    "kernels",
    "inputs",
    "compile",
    "search",
    "diagnosis",
    "bundle",
    "session",
    "capture",
    "nightly",
    "cli",
]
TOP = {"session": "session", "cli": "cli", "__main__": "cli", "__init__": "core"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    first = module.split(".")[1] if "." in module else "__init__"
    return TOP.get(first, first)


def imports(path: Path) -> set[str]:
    """Every module of ours that `path` imports, anywhere in the file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("reducer")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("reducer"):
            for alias in node.names:  # `from reducer.kernels import graph` imports a module
                sub = f"{node.module}.{alias.name}"
                found.add(sub if (ROOT.parent / sub.replace(".", "/")).with_suffix(".py").exists() else node.module)
    return found


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports(p) for p in sorted(ROOT.rglob("*.py"))}


def test_every_module_lives_in_a_known_layer() -> None:
    assert {layer(m) for m in graph()} <= set(LAYERS)
    assert not [p.name for p in ROOT.glob("*.py") if p.stem not in TOP], "top-level modules: session and cli only"


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    return [
        f"{m} ({layer(m)}) imports {i} ({layer(i)})"
        for m, targets in edges.items()
        for i in sorted(targets)
        if LAYERS.index(layer(i)) > LAYERS.index(layer(m))
    ]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            found.append([*path[path.index(module) :], module])
            return
        if module in done:
            return
        for target in sorted(edges.get(module, ())):
            visit(target, [*path, module])
        done.add(module)

    for module in edges:
        visit(module, [])
    return found


def test_imports_only_point_down_the_layers() -> None:
    assert upward_imports(graph()) == []


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_the_checks_catch_an_upward_import_and_a_cycle() -> None:
    edges = graph()
    assert "reducer.core.case" in edges["reducer.kernels.kinds"]  # the walk sees real imports
    edges["reducer.core.case"] = edges["reducer.core.case"] | {"reducer.search.oracle"}
    assert upward_imports(edges) == ["reducer.core.case (core) imports reducer.search.oracle (search)"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_every_package_says_what_lives_there_and_what_it_may_import() -> None:
    for init in ROOT.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert doc, init
        if init.parent != ROOT and init.parent.parent == ROOT:
            assert "May import" in doc, init
