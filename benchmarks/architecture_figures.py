"""Figures of the code's structure (issue 26's before/after): CLI modules importing past `proctor.api`,
`Store`'s public attributes, package-level import circles, the largest classes, the number of tests.

Usage: python benchmarks/architecture_figures.py [--json] [--tests]   (--tests also collects the test suite)
Imports inside functions count, as in tests/test_architecture.py.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "proctor"
ALLOWED_FROM_CLI = {"proctor.api", "proctor.cli", "proctor.errors", "proctor.papers", "proctor.options"}
"""What a CLI module may import: the door (also as `proctor`, whose names are the API's), the CLI itself, the
error types, the citations of `--help` and the options models its flags are derived from."""


def _modules() -> dict[str, ast.Module]:
    """Every module of the package by dotted name, parsed."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = ast.parse(path.read_text(encoding="utf-8"))
    return found


def _imports(tree: ast.Module) -> set[str]:
    """The proctor modules a module imports, anywhere in it."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.startswith("proctor")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("proctor"):
            names.add(node.module)
    return names


def _package(module: str) -> str:
    """The package a module belongs to (`proctor.evaluate.labels` → `evaluate`; top-level modules are their own)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "proctor"


def _within(name: str, prefixes: set[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def cli_past_api(mods: dict[str, ast.Module]) -> dict[str, list[str]]:
    """CLI modules that import a proctor module other than the API, the CLI, errors and papers."""
    found = {}
    for name, tree in mods.items():
        if _within(name, {"proctor.cli"}):
            past = sorted(i for i in _imports(tree) if i != "proctor" and not _within(i, ALLOWED_FROM_CLI))
            if past:
                found[name] = past
    return found


def package_circles(mods: dict[str, ast.Module]) -> list[list[str]]:
    """Strongly connected groups of more than one package in the package import graph."""
    from scipy.sparse import lil_matrix
    from scipy.sparse.csgraph import connected_components

    edges = defaultdict(set)
    for name, tree in mods.items():
        for target in _imports(tree):
            a, b = _package(name), _package(target)
            if a != b and "proctor" not in (a, b):
                edges[a].add(b)
    nodes = sorted({n for n in edges} | {m for targets in edges.values() for m in targets})
    index = {n: i for i, n in enumerate(nodes)}
    graph = lil_matrix((len(nodes), len(nodes)))
    for a, targets in edges.items():
        for b in targets:
            graph[index[a], index[b]] = 1
    _, labels = connected_components(graph, directed=True, connection="strong")
    groups = defaultdict(list)
    for node, label in zip(nodes, labels, strict=True):
        groups[label].append(node)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def largest_classes(mods: dict[str, ast.Module], top: int = 8) -> list[dict]:
    """The largest classes by lines, with their number of public methods."""
    rows = []
    for name, tree in mods.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                methods = [f for f in node.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
                rows.append({"class": f"{name}.{node.name}", "lines": node.end_lineno - node.lineno + 1,
                             "public_methods": sum(not f.name.startswith("_") for f in methods)})
    return sorted(rows, key=lambda r: -r["lines"])[:top]


def store_public_attributes() -> list[str]:
    """The public attributes of an opened `Store` (methods, properties and instance attributes)."""
    sys.path.insert(0, str(ROOT / "src"))
    from proctor.store import Store

    with tempfile.TemporaryDirectory() as folder:
        store = Store.create_or_open(Path(folder) / "s.db")
        names = sorted(a for a in dir(store) if not a.startswith("_"))
        store.close()
    return names


def test_count() -> int:
    """The number of tests pytest collects."""
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                         cwd=ROOT, capture_output=True, text=True, check=False).stdout
    return sum(1 for line in out.splitlines() if "::" in line)


def main() -> None:
    """Print the figures (a table, or JSON with --json)."""
    mods = _modules()
    figures = {"cli_modules_past_api": cli_past_api(mods), "store_public_attributes": store_public_attributes(),
               "package_circles": package_circles(mods), "largest_classes": largest_classes(mods)}
    if "--tests" in sys.argv:
        figures["tests"] = test_count()
    if "--json" in sys.argv:
        print(json.dumps(figures, indent=1))
        return
    print(f"CLI modules importing past proctor.api: {len(figures['cli_modules_past_api'])}")
    for name, past in figures["cli_modules_past_api"].items():
        print(f"  {name}: {', '.join(past)}")
    print(f"Store public attributes: {len(figures['store_public_attributes'])}")
    print(f"package circles: {len(figures['package_circles'])}")
    for group in figures["package_circles"]:
        print(f"  {' ↔ '.join(group)}")
    print("largest classes:")
    for row in figures["largest_classes"]:
        print(f"  {row['class']}: {row['lines']} lines, {row['public_methods']} public methods")
    if "tests" in figures:
        print(f"tests collected: {figures['tests']}")


if __name__ == "__main__":
    main()
