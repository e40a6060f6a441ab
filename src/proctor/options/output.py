"""The output options: the format a command prints (each command its own choices and default)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from proctor.options.model import NOT_IN_TOML, option, spec


@dataclass(frozen=True, kw_only=True)
class OutputOptions:
    """Every output option."""

    format: str = option("text", toml=NOT_IN_TOML, help="output format (default: {default}{extra})")


MD_NOTE = "; md on a terminal: aligned tables, escaped Markdown to a file or pipe"
"""What `--format` adds to its help where md is a choice."""


def add_format(parser: argparse.ArgumentParser, choices: tuple[str, ...], default: str) -> None:
    """Add `--format` with the given choices."""
    extra = MD_NOTE if "md" in choices else ""
    parser.add_argument("--format", choices=choices, default=default,
                        help=spec(OutputOptions, "format").help.format(default=default, extra=extra))
