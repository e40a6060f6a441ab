"""`proctor analyze --store S --official OFFICIAL --out DIR`: the whole meta-evaluation in one command."""

from __future__ import annotations

import argparse
from typing import get_args

from proctor import api
from proctor.cli.common import GRADE, add_floor_options, add_store, floor_of, int_in, note, readable_store
from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import add_options

DESCRIPTION = """\
Sweep tau = 1..5 x measures (P@20, nDCG@10, RR, AP, Rprec) for EXAM-Qrels and tau = 1..5 for EXAM-Cover,
for every method/model in the store; correlate every leaderboard with the official one; compute agreement
with the store's human judgments; correlate query by query; draw the plots. Writes into DIR:
  report.md, report.html (self-contained, plots embedded as SVG, long tables folded), correlations.tsv/.json,
  agreement.md/.json, per_query_*.tsv and plots/*.png (300 dpi) with a .pdf and an .svg of each.
The scatter and renormalised plots show the configuration chosen with --plot-measure and --plot-tau (the
first measure and tau 3 by default), never the best of the sweep; their captions say so. A grade set
without grades gets a note instead of plots."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `analyze` command."""
    p = commands.add_parser("analyze", help="meta-evaluation report: correlations, agreement, plots",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    p.add_argument("--official", required=True, metavar="FILE",
                   help="official leaderboard: JSON {run: rank} or TSV of scores")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the report (created if missing)")
    add_options(p, EvaluationOptions, "judged_relevant")
    p.add_argument("--measures", default=",".join(api.DEFAULT_MEASURES), help="comma-separated measures")
    p.add_argument("--budget", type=int_in(1), default=20, metavar="K", help="EXAM-Cover budget (default 20)")
    p.add_argument("--missing", choices=get_args(api.Missing), default="zero",
                   help="EXAM-Cover: queries a system did not answer (default zero)")
    p.add_argument("--per-query-measure", default="nDCG@10", help="measure of the per-query correlation")
    p.add_argument("--per-query-tau", type=GRADE, default=3, help="τ of the per-query correlation (binary measures)")
    p.add_argument("--plot-measure", help="EXAM-Qrels measure of the scatter and renormalised plots (default: the "
                   "first of --measures)")
    p.add_argument("--plot-tau", type=GRADE, default=3, help="τ of the plotted EXAM-Qrels and EXAM-Cover leaderboards "
                   "(default 3)")
    p.add_argument("--human-qrels", metavar="official|reviewers|FILE", help="add the prediction-powered leaderboard "
                   "of the plotted measure (as `leaderboard --human-qrels`; docs/trust.md)")
    p.add_argument("--human-topics", metavar="N|T1,T2,...", help="--human-qrels: draw N judged topics (seeded by "
                   "--seed) or name them (default: every topic the humans judged)")
    p.add_argument("--seed", type=int, default=0, help="--human-topics N: random seed of the draw (default 0)")
    add_floor_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Analyse and write the report."""
    request = api.analyze_request(args.official, args.out, judged_relevant=args.judged_relevant,
                                  measures=args.measures, budget=args.budget, missing=args.missing,
                                  per_query_measure=args.per_query_measure, per_query_tau=args.per_query_tau,
                                  plot_measure=args.plot_measure, plot_tau=args.plot_tau,
                                  floor=floor_of(args), human_qrels=args.human_qrels,
                                  human_topics=args.human_topics, seed=args.seed)
    # checked (and the official file read) before the store
    with readable_store(args.store, args.lock_timeout) as store:
        report = request.run(store)
    for warning in report.warnings:
        note(f"warning: {warning}")
    note(f"wrote {len(report.files)} files to {args.out} (open report.html)")
    return 0
