"""In-process helpers: `run_cli` runs a command in-process, as `conftest.run_process` runs it as a real
process, for fixtures wider than a test (where the `cli` fixture, which captures with pytest's capsys, is not
available; both run `run_main`); `once` keeps what a session fixture built for the whole process; `built_once`
builds a costly store once for the whole run, whatever the number of xdist workers; `copy_store` copies a shared
store for a test that writes."""

from __future__ import annotations

import fcntl
import io
import os
import shutil
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from proctor.cli import main
from proctor.store import Store

# argparse asks gettext for each of its own messages as every parser is built (a command line builds ~20: its
# command's and one per other command name); without LANGUAGE, gettext looks for catalogues of the locale's
# names (C.UTF-8, C.utf8, ...) on disk each time, a third of a parser's build (2 of 6 ms; ~2,000 commands a run).
# "C" answers at once, with the same (untranslated) messages; a LANGUAGE given wins.
os.environ.setdefault("LANGUAGE", "C")


class Result:
    """Exit status and captured output of one command."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


def run_main(*args: Any) -> int:
    """Run `proctor ARGS` in-process, output uncaptured; returns the exit status, as a process would (an exit
    from the parser, as for `--help` or a bad option, is its status)."""
    try:
        return main([str(a) for a in args])
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)


def run_cli(*args: Any) -> Result:
    """Run `proctor ARGS` in-process (`run_main`) with stdout and stderr captured; returns a Result."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = run_main(*args)
    return Result(code, out.getvalue(), err.getvalue())


def run_in_thread(*args: Any) -> Result:
    """`run_cli` on a thread of its own, for a test whose thread runs an event loop (Playwright's sync API) or
    that stands for another program beside a review server: the command's own loop and store connection, as a
    separate process would have, without starting an interpreter."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="proctor-command") as pool:
        return pool.submit(run_cli, *args).result()


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


def built_once(name: str, tmp_path_factory: Any, build: Callable[[Path], Path]) -> Path:
    """A private copy (for this process) of the store file `build(folder)` makes, built once per test run: the
    first xdist worker to ask builds it in a folder all workers of the run share, under a lock, and the others
    wait for it (without xdist the folder is the session's own). A build that failed leaves nothing behind
    and is tried again. What the build wrote beside the store (what it printed, the files it imported) is in the
    copy's folder."""

    def build_and_copy() -> Path:
        root = tmp_path_factory.getbasetemp()
        if os.environ.get("PYTEST_XDIST_WORKER"):
            root = root.parent  # pytest-of-USER/pytest-N: the run's folder, above each worker's own
        folder, done = root / f"built-{name}", root / f"built-{name}.done"
        with open(root / f"built-{name}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if not done.exists():
                    shutil.rmtree(folder, ignore_errors=True)
                    folder.mkdir()
                    done.write_text(build(folder).relative_to(folder).as_posix())
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        source = folder / done.read_text()
        mine = tmp_path_factory.mktemp(name)
        for extra in source.parent.iterdir():  # the build's other files and folders; the store's own (-wal) never
            if extra.is_dir():
                shutil.copytree(extra, mine / extra.name)
            elif extra.is_file() and not extra.name.startswith(source.name):
                shutil.copyfile(extra, mine / extra.name)
        return copy_store(source, mine / source.name)

    return once(f"built-{name}", build_and_copy)
