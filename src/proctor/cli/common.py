"""Pieces every command shares: the --store option, opening stores, atomic creation, output helpers."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from proctor.store import Store


def add_store(parser: argparse.ArgumentParser) -> None:
    """Add the required `--store PATH` option."""
    parser.add_argument("--store", required=True, metavar="PATH", help="the Proctor store (one SQLite file)")


def add_format(parser: argparse.ArgumentParser, choices: tuple[str, ...], default: str) -> None:
    """Add `--format` with the given choices."""
    parser.add_argument("--format", choices=choices, default=default,
                        help=f"output format (default: {default})")


@contextmanager
def writable_store(path: str) -> Iterator[Store]:
    """Open (or create) a store for writing; a store this command created is removed again if it fails."""
    target = Path(path)
    existed = target.exists()
    store = Store.create_or_open(target)
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
def readable_store(path: str) -> Iterator[Store]:
    """Open an existing store for reading."""
    store = Store.open(path)
    if store.migration_note:
        note(store.migration_note)
    try:
        yield store
    finally:
        store.close()


def note(message: str) -> None:
    """A note for the user on standard error (standard output stays machine-readable)."""
    print(f"proctor: {message}", file=sys.stderr)
