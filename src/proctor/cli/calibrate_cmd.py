"""`proctor calibrate --grade-set ID --budget N`: learn the labelling rule from a few human-judged topics."""

from __future__ import annotations

import argparse
import json

from proctor.cli.common import add_format, add_store, emit, int_in, note, readable_store
from proctor.errors import UsageError
from proctor.outputs import file_target

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
    p.add_argument("--repeats", type=int_in(1), default=10, metavar="R", help="samples per budget (default 10)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the samples (default 0)")
    p.add_argument("--judged-relevant", type=int_in(1), default=1, metavar="J",
                   help="a judgment >= J counts as relevant (default 1; TREC DL: 2)")
    p.add_argument("--measure", default="P@20", help="the leaderboard whose Kendall tau is reported: P@k "
                   "(default P@20)")
    p.add_argument("--plot", metavar="FILE.png", help="also draw the curve as a PNG (PDF and SVG beside it)")
    add_format(p, ("json", "tsv", "md"), "json")
    p.set_defaults(func=run)


def budgets(text: str) -> list[int]:
    """`--budget 5` or `--budget 1,2,3`: positive integers."""
    try:
        values = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise UsageError(f"--budget {text}: expected numbers of topics such as 5 or 1,2,3,5,10,20") from None
    if not values or min(values) < 1:
        raise UsageError(f"--budget {text}: expected positive numbers of topics such as 5 or 1,2,3,5,10,20")
    return values


def run(args: argparse.Namespace) -> int:
    """Compute, print, plot."""
    from proctor import api
    from proctor.trust.calibrate_render import markdown, plot, tsv

    wanted = budgets(args.budget)
    target = file_target(args.plot, "--plot") if args.plot else None
    if target is not None and target.suffix.lower() != ".png":
        raise UsageError(f"--plot {args.plot}: give a .png file name")
    with readable_store(args.store, args.lock_timeout) as store:
        result = api.calibrate(store, args.grade_set, qrels=args.qrels, budgets=wanted, repeats=args.repeats,
                               seed=args.seed, judged_relevant=args.judged_relevant, measure=args.measure)
    if target is not None:
        plot(result, target)
        note(f"calibration curve drawn in {target}")
    emit(json.dumps(result, indent=2) + "\n" if args.format == "json"
         else tsv(result) if args.format == "tsv" else markdown(result), args.format)
    return 0
