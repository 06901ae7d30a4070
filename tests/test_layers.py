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
    "shapes",
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


PROGRAMS = ROOT / "in_mindspore"
# What a program run in MindSpore's interpreter may import of the programs beside it: the shared wire.py, and
# the check its runner runs and the references the check loads (the TeLang probe calls functions as the
# plain-TVM reference does). mismatch_run.py is a repro.py's body: it imports wire.py inside its functions (a
# repro.py registers a copy before it runs them). The op-semantics matrix holds the reference
# against MindSpore's own kernels. The check of a dispatch plan draws inputs and builds Custom ops as the
# wrong-result check does.
SIBLINGS = {"mismatch_runner": {"mismatch_run", "wire"},
            "mismatch_run": {"graph_bounds", "graph_numpy", "telang_numpy", "telang_plain", "wire"},
            "graph_numpy": set(), "graph_bounds": {"graph_numpy"}, "op_matrix": {"graph_numpy"},
            "dispatch_check": {"mismatch_run"}, "telang_plain": set(), "telang_numpy": {"graph_numpy"},
            "telang_probe": {"telang_plain", "wire"}}  # fmt: skip


def _top_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_the_programs_run_in_mindspore_import_nothing_of_ours_but_wire() -> None:
    programs = {p.stem for p in PROGRAMS.glob("*.py")} - {"__init__"}
    for path in PROGRAMS.glob("*.py"):
        imported = _top_imports(path)
        assert "reducer" not in imported, path.name
        if path.stem != "__init__":
            assert imported & programs <= SIBLINGS.get(path.stem, {"wire"}), path.name


def _touches_sys_path(path: Path) -> bool:
    return any(
        isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", "") == "sys"
        for node in ast.walk(ast.parse(path.read_text()))
    )


def test_only_the_programs_run_in_mindspore_make_akg_importable() -> None:
    """sys.path is changed where AKG is imported: wire.py."""
    touching = {str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py") if _touches_sys_path(p)}
    assert touching == {"in_mindspore/wire.py"}


def test_target_names_are_said_in_the_table_and_nowhere_else() -> None:
    """A target is one entry of core/targets.py; no other module compares or maps a target's name."""
    from reducer.core.targets import TARGETS

    names = {n for t in TARGETS.values() for n in (t.name, t.akg_name, t.build_prefix)}
    saying = sorted(
        str(p.relative_to(ROOT))
        for p in ROOT.rglob("*.py")
        if p.name != "targets.py"
        and any(isinstance(n, ast.Constant) and n.value in names for n in ast.walk(ast.parse(p.read_text())))
    )
    assert saying == []


KIND_OBJECTS = {"GRAPH", "HYBRID", "TELANG", "IR_BUILDER_KIND"}
KIND_FIELDS = {"func_type", "custom_func_type"}


def _kind_branches(path: Path) -> list[int]:
    """Lines that tell kernel kinds apart by name: a comparison with a kind object or a func_type, or a call
    of graph.is_graph."""

    def names_a_kind(node: ast.AST) -> bool:
        return (isinstance(node, ast.Name) and node.id in KIND_OBJECTS) or (
            isinstance(node, ast.Attribute) and node.attr in KIND_FIELDS
        )

    lines = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare) and any(names_a_kind(n) for n in [node.left, *node.comparators]):
            lines.add(node.lineno)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "is_graph":
            lines.add(node.lineno)
    return sorted(lines)


def test_kinds_are_told_apart_by_the_kind_objects_only() -> None:
    branches = {
        str(p.relative_to(ROOT)): lines
        for p in ROOT.rglob("*.py")
        if p.parent.name not in ("kernels", "in_mindspore") and (lines := _kind_branches(p))
    }
    assert branches == {}


def test_the_bundle_is_handed_facts_and_imports_only_value_types_from_compile() -> None:
    import importlib
    import inspect

    for path in (ROOT / "bundle").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("reducer.compile"):
                module = importlib.import_module(node.module or "")
                for alias in node.names:
                    assert inspect.isclass(getattr(module, alias.name)), f"{path.name} imports {alias.name}"


def test_the_structural_checks_see_what_they_look_for(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "import sys\nsys.path.insert(0, 'x')\nif kind_of(c) is GRAPH or c.func_type == 'x':\n    pass\n"
    )
    assert _touches_sys_path(tmp_path / "a.py")
    assert _kind_branches(tmp_path / "a.py") == [3]
