"""The options of running an experiment file (`proctor run`) and the bundled demo (`proctor demo`); the trial
limits and progress are the grading options'."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.options.model import NOT_IN_TOML, Checked, option


@dataclass(frozen=True, kw_only=True)
class RunOptions(Checked):
    """What a run of an experiment file does: all of it, one step, or only the plan with its estimates."""

    dry_run: bool = option(False, action="store_true", toml=NOT_IN_TOML,
                           help="print the plan and estimates; write nothing, call no LLM")
    only: str | None = option(metavar="STEP", toml=NOT_IN_TOML,
                              help="run one step: import, grade, grade:NAME or evaluate")
    price_in: float | None = option(metavar="USD", toml=NOT_IN_TOML,
                                    help="--dry-run: price per million prompt tokens")
    price_out: float | None = option(metavar="USD", toml=NOT_IN_TOML,
                                     help="--dry-run: price per million completion tokens")


@dataclass(frozen=True, kw_only=True)
class DemoOptions(Checked):
    """Where the demo writes its collection, store and reports."""

    out: str = option("demo-out", toml=NOT_IN_TOML, help="folder for the store and reports (default: {default})")


__all__ = ["DemoOptions", "RunOptions"]
