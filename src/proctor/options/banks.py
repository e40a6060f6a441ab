"""The bank options: generating a bank with an LLM (`proctor bank generate`, `api.generate_bank`), what a changed
bank does (`bank impact`, `api.bank_impact`) and writing a stored bank (`bank export`), one field each."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from proctor.options.evaluation import LEADERBOARD_MEASURE, EvaluationOptions
from proctor.options.model import GRADE, NOT_IN_TOML, Checked, borrow, option

BANK_FORMATS = ("items", "questions", "yaml", "nuggetizer", "autojudge")
"""What `bank export` writes: the workbench's `items` and older `questions` JSONL, editable YAML, nuggetizer's
nuggets JSONL, the TREC AutoJudge nugget-bank JSONL."""


@dataclass(frozen=True, kw_only=True)
class BankGenerationOptions(Checked):
    """How a bank is generated: from which queries (or the judged pool), in which style, how many items."""

    queries: str | None = option(toml=NOT_IN_TOML, help="query file (DL) or CAR topics JSONL (not with --from-pool)")
    from_pool: bool = option(
        False, action="store_true", toml=NOT_IN_TOML,
        help="with --nuggets and --store: AutoNuggetizer-style nuggets from each query's judged relevant passages "
        "(nuggetizer's creator prompt over windows of 10 passages), then importance")
    min_relevance: int = option(
        2, metavar="R", toml=NOT_IN_TOML,
        help="--from-pool: passages judged R or more are read (default {default}, as nuggetizer's --min-judgment)")
    max_nuggets: int = option(30, metavar="N", toml=NOT_IN_TOML,
                              help="--from-pool: most nuggets kept per query (default {default}, as nuggetizer)")
    dedup: bool = option(
        False, action="store_true", toml=NOT_IN_TOML,
        help="--from-pool: drop a nugget the creator's reply repeats before the next window's prompt (Proctor's own; "
        "nuggetizer, the default, keeps the reply's list as it is); recorded in the bank's creator info")
    style: str = option("dl", choices=("dl", "car"), toml=NOT_IN_TOML, help="prompt style (default {default})")
    nuggets: bool = option(False, action="store_true", toml=NOT_IN_TOML,
                           help="generate nuggets (key facts) instead of questions")
    importance: bool = option(
        True, action=argparse.BooleanOptionalAction, toml=NOT_IN_TOML,
        help="with --nuggets: label every nugget vital or okay with nuggetizer's scorer prompt (AutoNuggetizer; "
        "default on)")
    per_query: int = option(10, metavar="N", toml=NOT_IN_TOML, help="items per query (default {default})")
    retries: int = option(3, toml=NOT_IN_TOML,
                          help="asks again when a reply holds no usable list (default {default})")
    out: str | None = option(toml=NOT_IN_TOML, help="bank file to write (JSONL, workbench `items` format)")


@dataclass(frozen=True, kw_only=True)
class BankImpactOptions(Checked):
    """What changing bank A into B does: the measure and level it is judged by, what is listed."""

    measure: str = option(LEADERBOARD_MEASURE, toml=NOT_IN_TOML, kind="measure",
                          help="leaderboard measure (default {default})")
    min_grade: int = option(3, parse=GRADE, metavar="T", toml=NOT_IN_TOML, help="relevance level τ (default {default})")
    official: str | None = borrow(EvaluationOptions, "official")
    name: str | None = option(
        toml=NOT_IN_TOML,
        help="name of bank B in the store (default: the name of A's bank, so B becomes its next version; else the "
        "bank that holds B's ids; else B's file name)")
    listed: int = option(50, flag="--limit", toml=NOT_IN_TOML,
                         help="changed labels listed in text/md (default {default})")


@dataclass(frozen=True, kw_only=True)
class BankExportOptions(Checked):
    """How a stored bank is written."""

    bank_format: str = option("items", flag="--as", metavar="FMT", choices=BANK_FORMATS, toml=NOT_IN_TOML,
                      help="output format (default {default})")
    out: str | None = option(toml=NOT_IN_TOML, help="file to write")
    bank: str | None = option(metavar="NAME[@VERSION]", toml=NOT_IN_TOML,
                              help="only this bank (its latest version unless named; default: every bank's latest "
                              "version)")


__all__ = ["BANK_FORMATS", "BankExportOptions", "BankGenerationOptions", "BankImpactOptions"]
