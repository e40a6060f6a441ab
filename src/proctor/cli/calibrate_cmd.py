"""`proctor calibrate --grade-set ID --budget N`: learn the labelling rule from a few human-judged topics."""

from __future__ import annotations

import argparse

from proctor import api
from proctor.api import commands
from proctor.api.types import Calibration
from proctor.cli.common import add_format, add_store, emit, note, readable_store
from proctor.options.calibration import CalibrationOptions
from proctor.options.model import add_options, from_args

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
    add_options(p, CalibrationOptions, "grade_set", "qrels")
    add_options(p, CalibrationOptions, "budgets", budgets=None)
    p._option_string_actions["--budget"].required = True  # the shell names its budgets (the API: 5 topics)
    add_options(p, CalibrationOptions, "repeats", "seed", "judged_relevant", "measure", "plot", "ppi", "min_grade",
                "confidence")
    add_format(p, Calibration.formats, "json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compute, print, plot."""
    request = commands.calibration_request(from_args(CalibrationOptions, args))  # checked before the store is opened
    with readable_store(args.store, args.lock_timeout) as store:
        result = request.run(store)
    if result.plotted is not None:
        curve = "prediction-powered calibration curve" if args.ppi else "calibration curve"
        note(f"{curve} drawn in {result.plotted}")
    emit(api.render(result, args.format), args.format)
    return 0
