"""The output options: the format a command prints (each command its own choices and default)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from proctor.options.model import NOT_IN_TOML, Checked, add_options, option, spec


@dataclass(frozen=True, kw_only=True)
class OutputOptions(Checked):
    """Every output option."""

    format: str = option("text", toml=NOT_IN_TOML, help="output format (default: {default})")


MD_NOTE = "; md on a terminal: aligned tables, escaped Markdown to a file or pipe"
"""What `--format` adds to its help where md is a choice."""


def add_format(parser: argparse.ArgumentParser, choices: tuple[str, ...], default: str) -> None:
    """Add `--format` with the given choices (each command prints its own formats; `default` is one of them)."""
    extra = MD_NOTE if "md" in choices else ""
    fmt, = add_options(parser, OutputOptions, "format", format=default)
    fmt.choices = choices
    fmt.help = spec(OutputOptions, "format").help.format(default=default + extra)
