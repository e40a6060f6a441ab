"""Pieces every command shares: the --store option, opening stores, atomic creation, output helpers; the option
groups and argparse types of `proctor.options` every command takes (`add_format`, `int_in`, `GRADE`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import GRADE, add_options, int_in
from proctor.options.output import add_format
from proctor.store import DEFAULT_LOCK_TIMEOUT, Store

__all__ = ["GRADE", "add_format", "int_in"]


def add_store(parser: argparse.ArgumentParser) -> None:
    """Add the required `--store PATH` option and `--lock-timeout`."""
    parser.add_argument("--store", required=True, metavar="PATH", help="the Proctor store (one SQLite file)")
    parser.add_argument("--lock-timeout", type=float, default=DEFAULT_LOCK_TIMEOUT, metavar="SECONDS",
                        help="how long to wait while another process writes to the store before giving up with "
                        f"exit status 2 (default {DEFAULT_LOCK_TIMEOUT:g})")


def emit(text: str, fmt: str) -> None:
    """Write a command's result to standard output. Markdown on a terminal is shown as it reads (aligned tables,
    no escapes, through rich); to a file or a pipe it stays escaped Markdown, byte for byte."""
    if fmt != "md" or not sys.stdout.isatty():
        sys.stdout.write(text)
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console(file=sys.stdout, soft_wrap=False).print(Markdown(text))


@contextmanager
def writable_store(path: str, lock_timeout: float | None = None) -> Iterator[Store]:
    """Open (or create) a store for writing; a store this command created is removed again if it fails."""
    target = Path(path)
    existed = target.exists()
    store = Store.create_or_open(target, lock_timeout=_timeout(lock_timeout))
    if store.migration_note:
        note(store.migration_note)
    try:
        yield store
    except BaseException:
        store.close()
        if not existed:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{target}{suffix}").unlink(missing_ok=True)
        raise
    store.close()


@contextmanager
def readable_store(path: str, lock_timeout: float | None = None) -> Iterator[Store]:
    """Open an existing store for reading (read-only where the file cannot be written)."""
    store = Store.open(path, lock_timeout=_timeout(lock_timeout))
    if store.migration_note:
        note(store.migration_note)
    try:
        yield store
    finally:
        store.close()


def _timeout(value: float | None) -> float:
    return DEFAULT_LOCK_TIMEOUT if value is None else value


def check_judged_relevant(store: Store, value: int) -> None:
    """`--judged-relevant J` must be reachable by the store's judgments (else every passage is non-relevant)."""
    from proctor.api.verification import check_judged_relevant as check  # the API's check, spelled as flags

    check(store, value)


def note(message: str) -> None:
    """A note for the user on standard error (standard output stays machine-readable)."""
    print(f"proctor: {message}", file=sys.stderr)


def add_floor_options(parser: argparse.ArgumentParser) -> None:
    """Add `--floor-queries N` and `--floor-graded F`: below them a number is flagged (docs/trust.md)."""
    add_options(parser, EvaluationOptions, "floor_queries", "floor_graded")


def floor_of(args: argparse.Namespace) -> Any:
    """The coverage floor the options name."""
    from proctor.evaluate.coverage import Floor

    return Floor(args.floor_queries, args.floor_graded)


def warn_coverage(coverage: Any) -> None:
    """Print a coverage's warnings (what a number rests on, below the floor) on standard error."""
    if coverage is not None:
        for warning in coverage.warnings:
            note(f"warning: {warning}; {coverage.summary()}")
        if coverage.per_system:
            note(f"systems that rest on less: {coverage.systems_text()}")
