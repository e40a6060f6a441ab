"""`proctor calibrate --grade-set ID --budget N`: learn the labelling rule from a few human-judged topics."""

from __future__ import annotations

import argparse

from proctor import api
from proctor.cli.common import add_format, add_store, emit, int_in, note, readable_store

DESCRIPTION = """\
Calibration on a few human labels: sample N topics that have human judgments, choose on them the labelling rule
(relevant when the grade reached by at least m questions is >= tau; a direct method's cut tau) that agrees best
with the humans (Cohen's kappa), apply it to the other topics, and report held-out Cohen's kappa, Krippendorff's
alpha and the Kendall tau of the held-out P@k leaderboard with the human one. Repeated --repeats times per
budget; --budget 1,2,3,5,10,20 draws the curve (JSON `curve`, a table, and a plot with --plot).
Judgments (--qrels): official (imported), reviewers (verdicts recorded in `proctor review`),
official+reviewers (verdicts replace imported judgments), or a qrels file."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `calibrate` command."""
    p = commands.add_parser("calibrate", help="learn the labelling rule from a few judged topics; held-out kappa",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    p.add_argument("--grade-set", metavar="ID", help="the grade set (id or unique prefix; default: the only one)")
    p.add_argument("--qrels", default="official", metavar="official|reviewers|official+reviewers|FILE",
                   help="the human judgments (default official)")
    p.add_argument("--budget", required=True, metavar="N[,N...]", help="judged topics to learn from, e.g. 5 or "
                   "1,2,3,5,10,20")
    p.add_argument("--repeats", type=int_in(1), default=10, metavar="R",
                   help="samples per budget (default 10, at most 100000)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the samples (default 0)")
    p.add_argument("--judged-relevant", type=int_in(1), default=1, metavar="J",
                   help="a judgment >= J counts as relevant (default 1; TREC DL: 2)")
    p.add_argument("--measure", default="P@20", help="the leaderboard whose Kendall tau is reported: P@k "
                   "(default P@20)")
    p.add_argument("--plot", metavar="FILE.png", help="also draw the curve as a PNG (PDF and SVG beside it)")
    add_format(p, api.Calibration.formats, "json")
    p.set_defaults(func=run, param_flags={"budgets": "--budget"})


def run(args: argparse.Namespace) -> int:
    """Compute, print, plot."""
    request = api.calibration_request(args.grade_set, qrels=args.qrels, budgets=args.budget, repeats=args.repeats,
                                      seed=args.seed, judged_relevant=args.judged_relevant, measure=args.measure,
                                      plot=args.plot)  # checked before the store is opened
    with readable_store(args.store, args.lock_timeout) as store:
        result = request.run(store)
    if result.plotted is not None:
        note(f"calibration curve drawn in {result.plotted}")
    emit(api.render(result, args.format), args.format)
    return 0
