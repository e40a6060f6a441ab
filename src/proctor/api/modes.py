"""The modes the API's functions take, as `Literal` types: the CLI derives its `choices` from them
(`typing.get_args(LeaderboardFormat)`), so the shell and Python accept the same words."""

from __future__ import annotations

from typing import Literal

Missing = Literal["zero", "skip"]
"""A query a system did not answer: counts 0, or is left out of its mean."""

LeaderboardFormat = Literal["tsv", "json", "md", "trec", "tot", "ir-measures", "jsonl"]
"""How leaderboards are written (`tot` is `trec`, as AutoJudge names it)."""

TableFormat = Literal["tsv", "json", "md"]
"""Reports written as TSV rows, JSON or Markdown tables (significance, correlation, agreement, calibration)."""

TextFormat = Literal["text", "json"]
"""Listings written as lines a person reads or as JSON (store info, grade sets, ensembles)."""

Tests = Literal["both", "t", "randomization"]
"""Which paired significance tests run."""

Correction = Literal["holm", "bonferroni", "none"]
"""The multiple-comparison correction of each test's p-values."""

Ties = Literal["average", "random"]
"""Tied predicted scores in a correlation: average ranks (scipy), or broken at random and averaged."""

Rule = Literal["mean", "median", "max", "min", "majority"]
"""How an ensemble combines its members' grades of a cell."""
