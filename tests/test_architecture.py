"""The shape we promise: small modules and functions, no import circles, readers and backends that never
touch the store, and SQL only in the store."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import code_shape
from conftest import ROOT

SRC = ROOT / "src"
PACKAGE = SRC / "proctor"


@cache
def _modules() -> dict[str, tuple[Path, ast.Module]]:
    """{module name: (its file, its syntax tree)}: every module parsed once per test process, the trees those of
    `code_shape.modules` (read only)."""
    trees = code_shape.modules()
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        out[name] = (path, trees[name])
    return out


def _imports(tree: ast.Module, known: set[str]) -> set[str]:
    """Proctor modules a module imports (at the top or inside functions)."""
    return set(_proctor_imports(tree)) & known


@cache
def _proctor_imports(tree: ast.Module) -> frozenset[str]:
    """Every `proctor...` name a module imports, walked once per tree."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("proctor"):
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("proctor")}
    return frozenset(found)


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


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles a depth-first walk of `graph` meets (none when the graph has no circle)."""
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
    return cycles


def test_no_import_circles():
    modules = _modules()
    graph = {name: _imports(tree, set(modules)) - {name} for name, (_, tree) in modules.items()}
    assert _cycles(graph) == []


LAYERS = (
    ("errors", "papers", "markdown"),  # plain helpers
    ("records", "outputs"),  # plain records, file writing
    ("options",),  # the options models (backend, grading, evaluation, output) and their one adapter
    ("io", "llm", "store"),  # readers and writers of files, LLM backends, the SQLite store
    ("methods", "import_checks"),  # prompts and parsers; what an import may change
    ("importing", "exporting", "grading", "bank"),  # inputs -> store -> files; store -> grades; banks (phase 1)
    ("gradesets",),  # which grade set a command reads, derived grade sets (ensembles), management
    ("evaluate",),  # grade set -> labels -> leaderboards (with coverage and intervals)
    ("stats", "analyze", "robustness"),  # meta-evaluation: significance, correlation and agreement, probes
    ("trust",),  # calibration on a few human labels, the review queue
    ("api",),  # the door
    ("review", "experiment"),  # built on the door: the human in the loop (new bank versions), experiment files
    ("autojudge", "demo"),  # built on the door: the TREC AutoJudge judge, the bundled example
    ("cli",),  # the shell's door
    ("__main__",),  # `python -m proctor`
)
"""The package layers, lowest first (docs/architecture.md, "Import rules"): a package (or top-level module)
imports only packages of lower layers, so data flows one way and no two packages import each other. `proctor`
itself (`__version__`, and the API's names loaded on first use) stands outside the layers."""


def _unit(module: str) -> str:
    """The package a module belongs to (`proctor.evaluate.labels` -> `evaluate`); a top-level module is its own."""
    return module.split(".")[1] if "." in module else module


@cache
def _package_graph() -> dict[str, dict[str, set[str]]]:
    """{package: {imported package: the module imports behind the edge}} (imports inside functions count);
    built once per test session (read only)."""
    modules = _modules()
    graph: dict[str, dict[str, set[str]]] = {_unit(name): {} for name in modules if name != "proctor"}
    for name, (_, tree) in modules.items():
        for target in _imports(tree, set(modules)) - {"proctor"}:
            if name != "proctor" and _unit(target) != _unit(name):
                graph[_unit(name)].setdefault(_unit(target), set()).add(f"{name} imports {target}")
    return graph


def test_every_package_has_a_layer():
    declared = [unit for layer in LAYERS for unit in layer]
    assert len(declared) == len(set(declared))
    assert sorted(set(_package_graph()) - set(declared)) == []  # a new package or module: give it a layer
    assert sorted(set(declared) - set(_package_graph())) == []


def test_no_package_import_circles():
    graph = _package_graph()
    assert _cycles({unit: set(targets) for unit, targets in graph.items()}) == []


def test_packages_import_only_lower_layers():
    layer = {unit: level for level, units in enumerate(LAYERS) for unit in units}
    upward = []
    for unit, targets in sorted(_package_graph().items()):
        for target, why in sorted(targets.items()):
            if layer.get(target, len(LAYERS)) >= layer.get(unit, -1):
                upward += sorted(why)
    assert upward == []


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


CLI_DOOR = ("proctor.api", "proctor.cli", "proctor.options", "proctor.errors", "proctor.papers", "proctor.__version__")
"""What a command (a `proctor.cli` module) may import: the door, the CLI itself, the option models (the parse
step), the error types and how `--help` cites the papers; `proctor` alone is the API's names loaded on first use,
and its version."""


def test_commands_import_nothing_past_the_door():
    past = {name: sorted(n for n in _proctor_imports(tree)
                         if n != "proctor" and not any(n == d or n.startswith(d + ".") for d in CLI_DOOR))
            for name, (_, tree) in _modules().items() if name == "proctor.cli" or name.startswith("proctor.cli.")}
    assert {name: names for name, names in past.items() if names} == {}


PLUMBING_USERS = ("proctor.cli", "proctor.review", "proctor.api")
"""Who may use the command plumbing (`proctor.api.commands`: checked requests, whole-command reports, what the
review app alone needs): the command line, the review app and the API itself; a notebook, an experiment or the
AutoJudge judge use the verbs of `proctor.api`."""


def test_only_the_command_line_and_the_review_app_use_the_command_plumbing():
    users = sorted(name for name, (_, tree) in _modules().items() if "proctor.api.commands" in _proctor_imports(tree)
                   and not any(name == u or name.startswith(u + ".") for u in PLUMBING_USERS))
    assert users == []
BUILT_ON_THE_DOOR = ("proctor.review", "proctor.experiment", "proctor.autojudge", "proctor.demo")
DOOR = ("proctor.api", "proctor.options", "proctor.errors", "proctor.papers", "proctor.records", "proctor.__version__")
"""What a package built on the door may import besides itself: the API (its verbs, and for experiments and the
judge `api.experiments` and `api.autojudge`), the option models, the error types, how messages cite the papers,
the plain records the API's results are made of, and the version; `proctor` alone is the doors of the packages
built on the API (`proctor.run_experiment`, which the demo runs)."""
def test_the_review_app_experiments_the_judge_and_the_demo_import_nothing_past_the_door():
    past = {}
    for name, (_, tree) in _modules().items():
        own = next((p for p in BUILT_ON_THE_DOOR if name == p or name.startswith(p + ".")), None)
        if own is not None:
            past[name] = sorted(n for n in _proctor_imports(tree)
                                if n != "proctor" and not any(n == d or n.startswith(d + ".") for d in (*DOOR, own)))
    assert {name: names for name, names in past.items() if names} == {}
