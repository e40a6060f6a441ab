"""`proctor run` as one request (`proctor.experiment_request`): the options checked before anything is read,
then the plan (`--dry-run`) or the run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from proctor.api.results import DataResult
from proctor.errors import UsageError
from proctor.experiment.runner import RunResult, run_experiment
from proctor.options.numeric import check_numbers


@dataclass(frozen=True)
class Estimate(DataResult):
    """A dry run's plan: per grader the pairs to send, tokens and (with prices) cost, as `data`; `render(fmt)` is
    what `proctor run --dry-run --format FMT` prints."""

    formats: ClassVar[tuple[str, ...]] = ("text", "json")
    data: dict[str, Any]

    def as_text(self, fmt: str) -> str:
        """The plan as lines a person reads."""
        from proctor.experiment.dryrun import render

        return render(self.data)


@dataclass(frozen=True)
class ExperimentRequest:
    """A checked `proctor run`: the experiment file, its step selection and trial limits, and (dry run) prices."""

    path: str | Path
    dry_run: bool = False
    only: str | None = None
    max_queries: int | None = None
    max_passages: int | None = None
    price_in: float | None = None
    price_out: float | None = None
    progress: bool | None = None

    def plan(self) -> Estimate:
        """The plan and estimates before any LLM call; writes nothing."""
        from proctor.experiment.dryrun import dry_run

        return Estimate(dry_run(self.path, only=self.only, price_in=self.price_in, price_out=self.price_out,
                                max_queries=self.max_queries, max_passages=self.max_passages))

    def run(self, *, log: Callable[[str], None] | None = None) -> RunResult:
        """Run the steps whose inputs changed (`log` gets one line per step)."""
        return run_experiment(self.path, only=self.only, progress=self.progress, log=log,
                              max_queries=self.max_queries, max_passages=self.max_passages)


def experiment_request(path: str | Path, *, dry_run: bool = False, only: str | None = None,
                       max_queries: int | None = None, max_passages: int | None = None,
                       price_in: float | None = None, price_out: float | None = None,
                       progress: bool | None = None) -> ExperimentRequest:
    """`proctor run EXPERIMENT.toml`, checked: `only` one step (import, grade, grade:NAME, evaluate), trial limits
    `max_queries` and `max_passages`, and, with `dry_run` only, prices per million prompt and completion tokens.
    `.plan()` when `dry_run`, else `.run()`."""
    check_numbers({"max_queries": max_queries, "max_passages": max_passages, "price_in": price_in,
                   "price_out": price_out})
    for name, value in (("price_in", price_in), ("price_out", price_out)):
        if value is not None and not dry_run:
            raise UsageError(f"{{{name}}} needs {{dry_run}}", params=(name, "dry_run"))
    return ExperimentRequest(path, dry_run, only, max_queries, max_passages, price_in, price_out, progress)
