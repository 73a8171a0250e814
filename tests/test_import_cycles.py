"""One-way layers: the module import graph, built from the source (module-level and function-level
imports alike, without ``if TYPE_CHECKING:`` blocks), has no cycle inside a package or across
them, and no module imports upward in the package order bundle_format < runtime_py < liteexport."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imported(tree: ast.Module, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``module``'s source imports (a name imported from a package
    counts as its submodule when there is one)."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # a submodule imported from its package is an edge to the submodule, a name to the package
            found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                         for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    resolved: set[str] = set()
    for name in found:
        # ``import a.b.c`` runs a, a.b and a.b.c; the innermost known one is the edge that matters
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module:
            resolved.add(name)
    return resolved


LAYERS = ("bundle_format", "runtime_py", "liteexport")  # each may import the ones before it only


def import_graph(*packages: str) -> dict[str, set[str]]:
    files = {_module_name(path): path for package in packages for path in (ROOT / package).rglob("*.py")}
    known = set(files)
    return {name: _imported(ast.parse(path.read_text(encoding="utf-8")), name, path.name == "__init__.py", known)
            for name, path in files.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [_cycle_in(graph, set(component)) for component in components]


def _cycle_in(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for other in sorted(graph[node] & component):
                if other == start:
                    return paths[node] + [start]
                if other not in paths:
                    paths[other] = paths[node] + [other]
                    following.append(other)
        frontier = following
    return sorted(component)  # pragma: no cover (a component always has a cycle)


def test_find_cycles_names_the_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", ["liteexport", "runtime_py", "bundle_format"])
def test_no_import_cycles(package: str) -> None:
    cycles = find_cycles(import_graph(package))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def test_no_import_cycles_across_the_packages() -> None:
    cycles = find_cycles(import_graph(*LAYERS))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def test_no_package_imports_one_above_it() -> None:
    rank = {package: n for n, package in enumerate(LAYERS)}
    upward = sorted(f"{module} imports {imported}" for module, imports in import_graph(*LAYERS).items()
                    for imported in imports
                    if rank[imported.split(".")[0]] > rank[module.split(".")[0]])
    assert not upward, "upward imports (order: " + " < ".join(LAYERS) + "):\n" + "\n".join(upward)
