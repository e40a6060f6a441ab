"""`proctor analyze --store S --official OFFICIAL --out DIR`: the whole meta-evaluation in one command."""

from __future__ import annotations

import argparse

from proctor.api import commands
from proctor.cli.common import add_store, note, readable_store
from proctor.options.analysis import AnalysisOptions, ReportFiles
from proctor.options.model import add_options, from_args

DESCRIPTION = """\
Sweep tau = 1..5 x measures (P@20, nDCG@10, RR, AP, Rprec) for EXAM-Qrels and tau = 1..5 for EXAM-Cover,
for every method/model in the store; correlate every leaderboard with the official one; compute agreement
with the store's human judgments; correlate query by query; draw the plots. Writes into DIR:
  report.md, report.html (self-contained, plots embedded as SVG, long tables folded), correlations.tsv/.json,
  agreement.md/.json, per_query_*.tsv and plots/*.png (300 dpi) with a .pdf and an .svg of each.
The scatter and renormalised plots show the configuration chosen with --plot-measure and --plot-tau (the
first measure and tau 3 by default), never the best of the sweep; their captions say so. A grade set
without grades gets a note instead of plots."""


def register(parsers: argparse._SubParsersAction) -> None:
    """Add the `analyze` command."""
    p = parsers.add_parser("analyze", help="meta-evaluation report: correlations, agreement, plots",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    for action in add_options(p, ReportFiles):
        action.required = True
    add_options(p, AnalysisOptions, "judged_relevant", "measures", "budget", "missing", "per_query_measure",
                "per_query_tau", "plot_measure", "plot_tau", "human_qrels", "human_topics", "seed", "floor_queries",
                "floor_graded")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Analyse and write the report."""
    request = commands.analyze_request(args.official, args.out, from_args(AnalysisOptions, args))
    # checked (and the official file read) before the store
    with readable_store(args.store, args.lock_timeout) as store:
        report = request.run(store)
    for warning in report.warnings:
        note(f"warning: {warning}")
    note(f"wrote {len(report.files)} files to {args.out} (open report.html)")
    return 0
