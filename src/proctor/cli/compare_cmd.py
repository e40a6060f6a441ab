"""`proctor compare LEADERBOARD`: which differences between systems are significant (paired t-test and
randomization test over queries, corrected for multiple comparisons)."""

from __future__ import annotations

import argparse
from typing import get_args

from proctor import api
from proctor.cli.common import add_format, emit, int_in, note

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
    p.add_argument("--measure", help="the measure to read when LEADERBOARD holds several (trec_eval or ir_measures "
                   "name)")
    add_significance_options(p)
    add_format(p, get_args(api.TableFormat), "tsv")
    p.set_defaults(func=run)


def add_significance_options(p: argparse.ArgumentParser) -> None:
    """The options `compare` and `leaderboard --significance` share."""
    p.add_argument("--test", choices=get_args(api.Tests), default="both",
                   help="paired t-test, randomization test, or both (default)")
    p.add_argument("--correction", choices=get_args(api.Correction), default="holm",
                   help="multiple-comparison correction of each test's p-values (default holm)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--baseline", metavar="RUN", help="compare every system with this one only (default: all pairs)")
    p.add_argument("--samples", type=int_in(100), default=10_000, metavar="N",
                   help="randomization test: random sign assignments (default 10000; all 2^n when that is fewer)")
    p.add_argument("--seed", type=int, default=0, help="randomization test: seed (default 0)")


def significance_settings(args: argparse.Namespace) -> api.SignificanceSettings:
    """The significance settings the options name."""
    return api.SignificanceSettings(test=args.test, correction=args.correction, alpha=args.alpha,
                                    baseline=args.baseline, samples=args.samples, seed=args.seed)


def run(args: argparse.Namespace) -> int:
    """Read the leaderboard, test every pair, print the table."""
    report = api.compare(args.leaderboard, significance_settings(args), measure=args.measure)
    for line in report.comparison.notes:
        note(line)
    emit(api.render(report, args.format), args.format)
    return 0
