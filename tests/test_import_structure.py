"""The import direction of loglin: no cycle between modules, and none between packages.

Every module under ``src/loglin`` is parsed with :mod:`ast` (nothing is imported), and the graph of its
*module-level* imports is built: statements at the top of the module, including those inside module-level
``if`` / ``try`` blocks and class bodies, since they all run when the module is first imported. Imports
inside functions are lazy - they run when the function is called, after every module has loaded - and
are allowed to point anywhere; so are imports under ``if TYPE_CHECKING:``.

Two graphs must be acyclic:

* modules (``loglin.solvers.eg`` -> ``loglin.duality``);
* packages: each subpackage of loglin (data, kernels, solvers, structured, parsing, tagging, experiments,
  features, ...) is one node, every top-level module (``loglin.problem``, ``loglin.cli``, ...) is a node
  of its own, and ``loglin/__init__.py`` is the node ``loglin``.

A cycle fails the test with the cycle spelled out, e.g. ``loglin.solvers -> loglin.structured -> loglin.solvers``.
"""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "loglin"

KNOWN_PACKAGE_CYCLES: list = []     # none: a new cycle fails the test


def _modules(src=SRC):
    """{dotted name: (path, is_package)} for every .py file of the package."""
    out = {}
    for path in sorted((src / ROOT).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


def _is_type_checking(test) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level_imports(body):
    """Import statements that run when the module is imported (not those inside functions)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _module_level_imports(node.body)
            yield from _module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _module_level_imports(block)
        elif isinstance(node, (ast.With, ast.ClassDef)):
            yield from _module_level_imports(node.body)


def import_graph(src=SRC) -> dict[str, set[str]]:
    """{module: modules of loglin it imports at module level}."""
    modules = _modules(src)
    graph = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        deps = set()
        for node in _module_level_imports(ast.parse(path.read_text(), str(path)).body):
            if isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            for alias in node.names:          # `from pkg import submodule` imports the submodule
                sub = f"{target}.{alias.name}"
                deps.add(sub if sub in modules else target)
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def package_of(module: str) -> str:
    """loglin.solvers.eg -> loglin.solvers; loglin.problem -> loglin.problem; loglin -> loglin."""
    return ".".join(module.split(".")[:2])


def package_graph(graph) -> dict[str, set[str]]:
    out = {}
    for module, deps in graph.items():
        node = out.setdefault(package_of(module), set())
        node.update(package_of(d) for d in deps if package_of(d) != package_of(module))
    return out


def strongly_connected(graph) -> list[list[str]]:
    """The components with more than one node (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def a_cycle(graph, component) -> str:
    """One cycle through the component, as 'a -> b -> a'."""
    members = set(component)
    start = component[0]
    path, seen = [start], {start}
    while True:
        nxt = sorted(d for d in graph[path[-1]] if d in members)
        back = [d for d in nxt if d in seen]
        step = back[0] if back else nxt[0]
        if step in seen:
            cycle = path[path.index(step):] + [step]
            return " -> ".join(cycle)
        path.append(step)
        seen.add(step)


def test_no_import_cycle_between_modules():
    graph = import_graph()
    cycles = [a_cycle(graph, c) for c in strongly_connected(graph)]
    assert not cycles, "module-level import cycles:\n" + "\n".join(cycles)


def test_no_import_cycle_between_packages():
    graph = package_graph(import_graph())
    cycles = [a_cycle(graph, c) for c in strongly_connected(graph) if frozenset(c) not in KNOWN_PACKAGE_CYCLES]
    assert not cycles, "import cycles between packages:\n" + "\n".join(cycles)


def test_the_checker_finds_a_cycle(tmp_path):
    """The graph builder sees relative, absolute and module-level-but-nested imports, and ignores lazy ones."""
    pkg = tmp_path / ROOT
    (pkg / "a").mkdir(parents=True)
    (pkg / "b").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "b" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("try:\n    from ..b.y import f\nexcept ImportError:\n    pass\n")
    (pkg / "b" / "y.py").write_text("import loglin.c\n\ndef f():\n    from ..a import x\n")
    (pkg / "c.py").write_text("from .a import x\n")
    graph = import_graph(tmp_path)
    assert graph["loglin.a.x"] == {"loglin.b.y"} and graph["loglin.b.y"] == {"loglin.c"}
    assert graph["loglin.c"] == {"loglin.a.x"}
    cycle = a_cycle(graph, strongly_connected(graph)[0])
    assert cycle.split(" -> ")[0] == cycle.split(" -> ")[-1] and len(cycle.split(" -> ")) == 4
    packages = package_graph(graph)
    assert sorted(strongly_connected(packages)[0]) == ["loglin.a", "loglin.b", "loglin.c"]
    (pkg / "c.py").write_text("def g():\n    from .a import x\n")          # lazy: allowed
    assert strongly_connected(import_graph(tmp_path)) == []
