"""Pieces every command shares: the --store option, opening stores, atomic creation, output helpers."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from proctor.errors import UsageError
from proctor.store import DEFAULT_LOCK_TIMEOUT, Store


def add_store(parser: argparse.ArgumentParser) -> None:
    """Add the required `--store PATH` option and `--lock-timeout`."""
    parser.add_argument("--store", required=True, metavar="PATH", help="the Proctor store (one SQLite file)")
    parser.add_argument("--lock-timeout", type=float, default=DEFAULT_LOCK_TIMEOUT, metavar="SECONDS",
                        help="how long to wait while another process writes to the store before giving up with "
                        f"exit status 2 (default {DEFAULT_LOCK_TIMEOUT:g})")


def add_format(parser: argparse.ArgumentParser, choices: tuple[str, ...], default: str) -> None:
    """Add `--format` with the given choices."""
    extra = "; md on a terminal: aligned tables, escaped Markdown to a file or pipe" if "md" in choices else ""
    parser.add_argument("--format", choices=choices, default=default,
                        help=f"output format (default: {default}{extra})")


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


MAX_GRADE = 5
"""Grades and labels are 0-5 (direct relevance methods use part of that range)."""


def int_in(low: int, high: int | None = None):
    """An argparse type: an integer within [low, high]; anything else exits 2 naming the option and range."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            allowed = f"{low}..{high}" if high is not None else f"{low} or more"
            raise argparse.ArgumentTypeError(f"must be {allowed} (got {value})")
        return value
    parse.__name__ = "integer"
    return parse


GRADE = int_in(1, MAX_GRADE)
"""A threshold τ on grades: 1..5."""


def check_judged_relevant(store: Store, value: int) -> None:
    """`--judged-relevant J` must be reachable by the store's judgments (else every passage is non-relevant)."""
    top = store.max_judgment()
    if top is not None and value > top:
        raise UsageError(f"--judged-relevant {value}: no judgment reaches it (the store's judgments go up to {top})")


def note(message: str) -> None:
    """A note for the user on standard error (standard output stays machine-readable)."""
    print(f"proctor: {message}", file=sys.stderr)
