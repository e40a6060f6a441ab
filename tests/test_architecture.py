"""The shape we promise: small modules and functions, no import circles, readers and backends that never
touch the store, and SQL only in the store."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

SRC = ROOT / "src"
PACKAGE = SRC / "proctor"


def _modules() -> dict[str, tuple[Path, ast.Module]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        out[name] = (path, ast.parse(path.read_text(encoding="utf-8")))
    return out


def _imports(tree: ast.Module, known: set[str]) -> set[str]:
    """Proctor modules a module imports (at the top or inside functions)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("proctor"):
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("proctor")}
    return found & known


def test_no_module_over_400_lines_and_no_function_over_60():
    too_long = []
    for name, (path, tree) in _modules().items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > 400:
            too_long.append(f"{name}: {lines} lines")
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if size > 60:
                    too_long.append(f"{name}.{node.name}: {size} lines")
    assert too_long == []


def test_no_import_circles():
    modules = _modules()
    graph = {name: _imports(tree, set(modules)) - {name} for name, (_, tree) in modules.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(name: str, stack: list[str]) -> None:
        state[name] = 1
        stack.append(name)
        for dep in sorted(graph[name]):
            if state.get(dep) == 1:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, stack)
        stack.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
    assert cycles == []


FORBIDDEN = {
    "proctor.io": ("proctor.store", "proctor.cli", "proctor.grading", "proctor.bank"),  # readers return records
    "proctor.llm": ("proctor.store", "proctor.cli", "proctor.grading"),
}


def test_readers_and_backends_never_touch_the_store_the_engine_or_the_cli():
    modules = _modules()
    offenders = []
    for name, (_, tree) in modules.items():
        for package, forbidden in FORBIDDEN.items():
            if name == package or name.startswith(package + "."):
                bad = {m for m in _imports(tree, set(modules)) if m.startswith(forbidden)}
                offenders += [f"{name} imports {m}" for m in sorted(bad)]
    assert offenders == []


def test_sql_lives_in_the_store_only():
    offenders = []
    for name, (_, tree) in _modules().items():
        if name.startswith("proctor.store"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("execute", "executemany", "executescript"):
                offenders.append(f"{name}:{node.lineno}")
    assert offenders == []
