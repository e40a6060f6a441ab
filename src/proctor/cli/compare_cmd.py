"""`proctor compare LEADERBOARD`: which differences between systems are significant (paired t-test and
randomization test over queries, corrected for multiple comparisons)."""

from __future__ import annotations

import argparse
from typing import get_args

from proctor import api
from proctor.api.types import TableFormat
from proctor.cli.common import add_format, emit, note
from proctor.options.model import add_options, from_args
from proctor.options.significance import SignificanceOptions

DESCRIPTION = """\
Significance between the systems of a leaderboard, as IR papers report it: for every pair of systems (or every
system against --baseline RUN), a two-sided paired t-test and a paired randomization (permutation) test over
the queries both were scored on, each family of p-values corrected for multiple comparisons (Holm by
default, or Bonferroni). A difference is significant when its adjusted p-value is below --alpha.

LEADERBOARD: a file with per-query scores: `proctor leaderboard --format json --per-query`, `--format trec`/`tot`,
`ir-measures` or `jsonl`, or trec_eval's `-q` output (several runs concatenated); a file holding several measures
is read for the one --measure names. The same table is printed by `proctor leaderboard ... --significance`."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `compare` command."""
    p = commands.add_parser("compare", help="significance tests between the systems of a leaderboard",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("leaderboard", metavar="LEADERBOARD", help="leaderboard file with per-query scores")
    add_options(p, SignificanceOptions, "measure")
    add_significance_options(p)
    add_format(p, get_args(TableFormat), "tsv")
    p.set_defaults(func=run)


def add_significance_options(p: argparse.ArgumentParser) -> None:
    """The options `compare` and `leaderboard --significance` share (`SignificanceOptions`)."""
    add_options(p, SignificanceOptions, "test", "correction", "alpha", "baseline", "samples", "seed")


def significance_settings(args: argparse.Namespace) -> SignificanceOptions:
    """The significance options the command line gives (`leaderboard --significance`: its boards are in memory, so
    its `--measure` names what they score, not what a file is read for)."""
    return from_args(SignificanceOptions, args, measure=None)


def run(args: argparse.Namespace) -> int:
    """Read the leaderboard, test every pair, print the table."""
    report = api.compare(args.leaderboard, from_args(SignificanceOptions, args))
    for line in report.comparison.notes:
        note(line)
    emit(api.render(report, args.format), args.format)
    return 0
