"""The doors we promise: every command goes through `proctor.api` (a CLI module imports only the API, the CLI,
the options, the error types and the citations), and `Store` is a small facade over its repositories."""

from __future__ import annotations

import ast

from conftest import ROOT
from proctor.store import Store

CLI = ROOT / "src" / "proctor" / "cli"
DOOR = ("proctor.api", "proctor.cli", "proctor.options", "proctor.errors", "proctor.papers")
"""What a CLI module may import: the door, the CLI itself, the option models (the parse step), the error types
and how `--help` cites the papers. `proctor` alone is the API's names loaded on first use."""


def _proctor_imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.startswith("proctor")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("proctor"):
            names.add(node.module)
    return names


def test_commands_import_nothing_past_the_door():
    past = {}
    for path in sorted(CLI.glob("*.py")):
        imported = _proctor_imports(ast.parse(path.read_text(encoding="utf-8")))
        outside = sorted(n for n in imported if n != "proctor" and not any(n == d or n.startswith(d + ".")
                                                                           for d in DOOR))
        if outside:
            past[path.name] = outside
    assert past == {}


def test_store_is_a_small_facade_over_repositories(tmp_path):
    store = Store.create_or_open(tmp_path / "s.db")
    try:
        public = sorted(a for a in dir(store) if not a.startswith("_"))
        assert len(public) <= 30, public
        for area in ("corpus", "banks", "grades", "tallies", "caches", "imports", "review", "batches", "probes"):
            repository = getattr(store, area)
            assert type(repository).__module__.startswith("proctor.store.")
        assert not hasattr(store, "upsert_queries")  # the repositories' methods are not the facade's
    finally:
        store.close()
