"""`proctor calibrate --grade-set ID --budget N`: learn the labelling rule from a few human-judged topics."""

from __future__ import annotations

import argparse

from proctor import api
from proctor.cli.common import add_format, add_store, emit, int_in, note, readable_store
from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import add_options

DESCRIPTION = """\
Calibration on a few human labels: sample N topics that have human judgments, choose on them the labelling rule
(relevant when the grade reached by at least m questions is >= tau; a direct method's cut tau) that agrees best
with the humans (Cohen's kappa), apply it to the other topics, and report held-out Cohen's kappa, Krippendorff's
alpha and the Kendall tau of the held-out P@k leaderboard with the human one. Repeated --repeats times per
budget; --budget 1,2,3,5,10,20 draws the curve (JSON `curve`, a table, and a plot with --plot).
Judgments (--qrels): official (imported), reviewers (verdicts recorded in `proctor review`),
official+reviewers (verdicts replace imported judgments), or a qrels file.
--ppi validates prediction-powered leaderboards (`leaderboard --human-qrels`) instead: per budget, --repeats
draws of that many judged topics; empirical coverage of the humans' all-topic scores and median widths, beside
human-only t intervals and the judge-only error (JSON `curve_ppi`, a table, a plot); --measure any per-topic
mean (P@20, nDCG@10, ...), --min-grade the judge's threshold."""


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
    add_options(p, EvaluationOptions, "judged_relevant")
    p.add_argument("--measure", default="P@20", help="the leaderboard whose Kendall tau is reported: P@k "
                   "(default P@20)")
    p.add_argument("--plot", metavar="FILE.png", help="also draw the curve as a PNG (PDF and SVG beside it)")
    p.add_argument("--ppi", action="store_true", help="validate prediction-powered leaderboards instead "
                   "(`leaderboard --human-qrels`): per budget, coverage and width of their intervals over --repeats "
                   "draws of judged topics, beside human-only and judge-only (JSON `curve_ppi`; docs/trust.md)")
    p.add_argument("--min-grade", type=int_in(0), metavar="T", help="--ppi: the judge's relevance threshold for "
                   "binary measures (as `leaderboard --min-grade`)")
    p.add_argument("--confidence", type=float, metavar="C", help="--ppi: confidence level (default 0.95)")
    add_format(p, api.Calibration.formats, "json")
    p.set_defaults(func=run, param_flags={"budgets": "--budget"})


def run(args: argparse.Namespace) -> int:
    """Compute, print, plot."""
    if args.ppi:
        return run_ppi(args)
    if args.min_grade is not None or args.confidence is not None:
        raise api.UsageError("{min_grade} and {confidence} apply to {ppi} only", params=("min_grade", "confidence",
                                                                                          "ppi"))
    request = api.calibration_request(args.grade_set, qrels=args.qrels, budgets=args.budget, repeats=args.repeats,
                                      seed=args.seed, judged_relevant=args.judged_relevant, measure=args.measure,
                                      plot=args.plot)  # checked before the store is opened
    with readable_store(args.store, args.lock_timeout) as store:
        result = request.run(store)
    if result.plotted is not None:
        note(f"calibration curve drawn in {result.plotted}")
    emit(api.render(result, args.format), args.format)
    return 0


def run_ppi(args: argparse.Namespace) -> int:
    """`calibrate --ppi`: the validation curve of prediction-powered leaderboards."""
    confidence = 0.95 if args.confidence is None else args.confidence
    api.check_ppi_calibration(args.budget, args.repeats, args.seed, confidence, args.judged_relevant, args.measure,
                              args.plot)  # checked before the store is opened
    with readable_store(args.store, args.lock_timeout) as store:
        result = api.ppi_calibration(store, args.grade_set, qrels=args.qrels, budgets=args.budget,
                                     repeats=args.repeats, seed=args.seed, confidence=confidence, measure=args.measure,
                                     min_grade=args.min_grade, judged_relevant=args.judged_relevant, plot=args.plot)
    if result.plotted is not None:
        note(f"prediction-powered calibration curve drawn in {result.plotted}")
    emit(api.render(result, args.format), args.format)
    return 0
