"""The store options every command that reads or writes a store takes: which store, and how long to wait for
another process's lock."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.options.model import NOT_IN_TOML, Checked, option


@dataclass(frozen=True, kw_only=True)
class StoreOptions(Checked):
    """Which store a command works on, and how long it waits while another process writes to it."""

    store: str | None = option(metavar="PATH", toml=NOT_IN_TOML, help="the Proctor store (one SQLite file)")
    lock_timeout: float = option(
        60.0, metavar="SECONDS", toml=NOT_IN_TOML,
        help="how long to wait while another process writes to the store before giving up with exit status 2 "
        "(default {default:g})")


__all__ = ["StoreOptions"]
