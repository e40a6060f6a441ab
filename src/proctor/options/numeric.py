"""The one place numeric options are checked. Every command's parsed options (`proctor.cli.main`), the API's
keyword arguments (`api.grade`, `api.compare`, `BackendConfig`, `GradeOptions`, `ImportOptions`, ...) and
the experiment file's keys go through `number_problem`, so NaN, infinities and out-of-range values are refused
with the same words everywhere, before anything is read or written."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from proctor.errors import UsageError


@dataclass(frozen=True)
class Rule:
    """What one option accepts: a finite number (an integer with `integer`) within [low, high]; `open_low` /
    `open_high` leave the bound itself out."""

    low: float | None = None
    high: float | None = None
    integer: bool = False
    open_low: bool = False
    open_high: bool = False
    unit: str = ""

    def words(self) -> str:
        """How the accepted values are named in messages."""
        if self.integer:
            return range_words(int(self.low or 0), None if self.high is None else int(self.high))
        unit = f" {self.unit}" if self.unit else ""
        if self.low is not None and self.high is not None:
            left, right = ("(" if self.open_low else "["), (")" if self.open_high else "]")
            return f"a finite number in {left}{self.low:g}, {self.high:g}{right}"
        if self.low == 0 and self.open_low:
            return f"a finite positive number{unit}"
        if self.low is not None:
            return f"a finite number{unit}, {self.low:g} or more"
        return f"a finite number{unit}"

    def accepts(self, value: float) -> bool:
        """True when `value` (a finite number) is within the bounds."""
        if self.low is not None and (value < self.low or (self.open_low and value == self.low)):
            return False
        return self.high is None or not (value > self.high or (self.open_high and value == self.high))


def range_words(low: int, high: int | None = None) -> str:
    """`low..high` or `low or more`: how an integer range is named (also by the CLI's `int_in`)."""
    return f"{low}..{high}" if high is not None else f"{low} or more"


POSITIVE_SECONDS = Rule(0, open_low=True, unit="of seconds")
POSITIVE = Rule(0, open_low=True)
AT_LEAST_0 = Rule(0, integer=True)
AT_LEAST_1 = Rule(1, integer=True)

MAX_RESAMPLES = 100_000
"""The most bootstrap resamples or random repetitions of any command (`leaderboard --resamples`, `correlate
--bootstrap` and `--repeats`, `calibrate --repeats`, `compare --samples`; beyond it the percentiles, means and
p-values no longer move)."""

RULES: dict[str, Rule] = {
    # seconds and rates (backends, grading, the store's lock, batch polling)
    "timeout": POSITIVE_SECONDS, "backoff_max": POSITIVE_SECONDS, "progress_every": POSITIVE_SECONDS,
    "batch_poll": POSITIVE_SECONDS, "commit_seconds": POSITIVE_SECONDS, "rpm": POSITIVE, "tpm": POSITIVE,
    "lock_timeout": Rule(0, unit="of seconds"),
    # thresholds, levels and prices
    "prefilter_below": Rule(-1, 1), "alpha": Rule(0, 1, open_low=True, open_high=True),
    "confidence": Rule(0, 1, open_low=True, open_high=True), "floor_graded": Rule(0, 1),
    "price_in": Rule(0), "price_out": Rule(0),
    # counts
    "concurrency": AT_LEAST_1, "batch_size": AT_LEAST_1, "max_retries": AT_LEAST_0, "max_context_chars": AT_LEAST_1,
    "depth": AT_LEAST_1, "max_queries": AT_LEAST_1, "max_passages": AT_LEAST_1, "max_attempts": AT_LEAST_1,
    "ray_workers": AT_LEAST_1, "workers": AT_LEAST_1, "commit_every": AT_LEAST_1, "batch_max_requests": AT_LEAST_1,
    "batch_max_bytes": AT_LEAST_1, "word_budget": AT_LEAST_1, "min_questions": AT_LEAST_1,
    "judged_relevant": AT_LEAST_1, "shown": AT_LEAST_1, "floor_queries": AT_LEAST_0,
    # resampling counts: one bound for all
    "bootstrap": Rule(0, MAX_RESAMPLES, integer=True), "repeats": Rule(1, MAX_RESAMPLES, integer=True),
    "resamples": Rule(1, MAX_RESAMPLES, integer=True), "samples": Rule(100, MAX_RESAMPLES, integer=True),
    # random seeds (numpy's generators take no negative seed)
    "seed": AT_LEAST_0,
}
"""Numeric options by their Python name (`--backoff-max` is `backoff_max`); the same name means the same thing
in every command, the API and the experiment file."""


def option_name(name: str) -> str:
    """`backoff_max` → `--backoff-max`."""
    return "--" + name.replace("_", "-")


def number_problem(name: str, value: Any) -> str | None:
    """What is wrong with `value` for option `name` (`must be ... (got ...)`), or None when it is fine or the
    option is not numeric."""
    rule = RULES.get(name)
    if rule is None or value is None:
        return None
    return rule_problem(rule, value)


def rule_problem(rule: Rule, value: Any) -> str | None:
    """What is wrong with `value` under `rule` (`must be ... (got ...)`), or None when it is fine."""
    wrong = f"must be {rule.words()} (got {value!r})"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return wrong
    if rule.integer and not isinstance(value, int):
        return wrong
    if not math.isfinite(value) or not rule.accepts(value):
        return wrong
    return None


def check_number(name: str, value: Any) -> None:
    """Raise a `UsageError` naming the option when `value` is not acceptable for it (as the parameter from Python,
    as the flag from the command line: `errors.UsageError`'s markers)."""
    problem = number_problem(name, value)
    if problem is not None:
        raise UsageError("{" + name + "} " + problem, params=(name,))


def check_numbers(values: Mapping[str, Any]) -> None:
    """`check_number` for every numeric option among `values` (an argparse namespace's `vars`, keyword
    arguments, a dataclass's fields); other keys are left alone."""
    for name, value in values.items():
        check_number(name, value)
