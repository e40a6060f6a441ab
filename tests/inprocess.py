"""In-process helpers: `run_cli` runs a command in-process, as `conftest.run_process` runs it as a real
process, for the tests where a process is not the point and for fixtures wider than a test (where the `cli`
fixture is not available); `once` keeps what a session fixture built for the whole process; `copy_store`
copies a shared store for a test that writes."""

from __future__ import annotations

import io
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from conftest import Result
from proctor.cli import main
from proctor.store import Store


def run_cli(*args: Any) -> Result:
    """Run `proctor ARGS` in-process with stdout and stderr captured; returns a Result."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return Result(code, out.getvalue(), err.getvalue())


def copy_store(source: Path, target: Path) -> Path:
    """A copy of the store file `source` at `target` (SQLite's backup: complete whatever the journal)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    Store.copy_of(source, target).close()
    return target


_BUILT: dict[str, Any] = {}


def once(name: str, build: Callable[[], Any]) -> Any:
    """`build()` the first time `name` is asked for in this process: a fixture module imported by several
    test modules gives each its own session fixture, so the value itself is kept here."""
    if name not in _BUILT:
        _BUILT[name] = build()
    return _BUILT[name]
