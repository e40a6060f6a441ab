"""Pieces every command shares: the --store option, opening stores, atomic creation, output helpers; the option
groups and argparse types of `proctor.options` every command takes (`add_format`, `int_in`, `GRADE`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from proctor.api import Floor
from proctor.api.stores import Store, open_store
from proctor.api.types import Coverage, Notice
from proctor.options.evaluation import EvaluationOptions
from proctor.options.grading import ResponseCacheOptions
from proctor.options.model import GRADE, add_options, from_args, int_in
from proctor.options.output import add_format
from proctor.options.store import StoreOptions

__all__ = ["GRADE", "add_format", "int_in"]


def add_store(parser: argparse.ArgumentParser) -> None:
    """Add the required `--store PATH` option and `--lock-timeout` (`StoreOptions`)."""
    store, _ = add_options(parser, StoreOptions, "store", "lock_timeout")
    store.required = True


def add_response_cache(parser: argparse.ArgumentParser) -> None:
    """Add `--cache-dir DIR` and `--cache-refresh`: a response cache of its own, shared by runs and stores."""
    add_options(parser.add_argument_group("response cache"), ResponseCacheOptions)


def cache_options(args: argparse.Namespace) -> ResponseCacheOptions:
    """The response cache options a command line gives (`--cache-refresh` needs `--cache-dir`: the model's rule)."""
    return from_args(ResponseCacheOptions, args)


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
    store = open_store(target, create=True, lock_timeout=lock_timeout)
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
    store = open_store(path, lock_timeout=lock_timeout)
    if store.migration_note:
        note(store.migration_note)
    try:
        yield store
    finally:
        store.close()




def note(message: str) -> None:
    """A note for the user on standard error (standard output stays machine-readable)."""
    print(f"proctor: {message}", file=sys.stderr)


def add_floor_options(parser: argparse.ArgumentParser) -> None:
    """Add `--floor-queries N` and `--floor-graded F`: below them a number is flagged (docs/trust.md)."""
    add_options(parser, EvaluationOptions, "floor_queries", "floor_graded")


def floor_of(args: argparse.Namespace) -> Floor:
    """The coverage floor the options name."""
    return Floor(args.floor_queries, args.floor_graded)


def warn_coverage(coverage: Coverage | None) -> None:
    """Print a coverage's warnings (what a number rests on, below the floor) on standard error."""
    if coverage is not None:
        for warning in coverage.warnings:
            note(f"warning: {warning}; {coverage.summary()}")
        if coverage.per_system:
            note(f"systems that rest on less: {coverage.systems_text()}")


def flag_names(args: argparse.Namespace, params: Sequence[str]) -> dict[str, str]:
    """How the shell writes each of `params`: the command's own flag (`_record_flags`, its `param_flags` first),
    else the option of that name (`min_grade` → `--min-grade`), as a parameter a layer below names that this
    command has no option for."""
    names = {**getattr(args, "flags", {}), **getattr(args, "param_flags", {})}
    return {p: names.get(p, "--" + p.replace("_", "-")) for p in params}


def spelled(args: argparse.Namespace, text: str) -> str:
    """A sentence of the API as the shell says it: a `Notice`'s parameters as the command's flags."""
    return text.spelled(flag_names(args, text.params)) if isinstance(text, Notice) else text
