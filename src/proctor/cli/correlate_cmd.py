"""`proctor correlate LEADERBOARD --official OFFICIAL`: how well a leaderboard agrees with the official one."""

from __future__ import annotations

import argparse

from proctor import api
from proctor.api.types import Correlation
from proctor.cli.common import add_floor_options, add_format, emit, flag_names, floor_of, note
from proctor.options.correlation import CorrelationOptions
from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import add_options, from_args

DESCRIPTION = """\
Correlate a leaderboard with the official one: Spearman's rho and Kendall's tau-b exactly as scipy computes
them (scores ranked with average ranks), tau_AP (top-weighted), and TREC AutoJudge's tauap_b and kendall@10
(tau-b over the official top 10) as autojudge-evaluate computes them. Systems found in one leaderboard only
are listed under `missing`, never dropped silently.

LEADERBOARD: any format `proctor leaderboard` writes (tsv, json, md, trec/tot, ir-measures, jsonl; per-query
rows or JSON with --per-query enable bootstrap confidence intervals over queries and per-query correlation),
trec_eval's output (`-q` or not; several runs concatenated, each named by its `runid` line), or any
`system<TAB>score` TSV. A file holding several measures is read for the one --measure names.
OFFICIAL: --official FILE (JSON {run: rank}, ties and fractional ranks allowed, a TSV of scores, or any of the
leaderboard formats above, e.g. trec_eval's output of the official runs, with --official-measure M), or
--official-qrels FILE --measure M (the official leaderboard computed from judgments and the runs of
--store S or --runs)."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `correlate` command."""
    p = commands.add_parser("correlate", help="rank correlation of a leaderboard with the official one",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("leaderboard", metavar="LEADERBOARD", help="leaderboard file (TSV or JSON)")
    add_options(p, EvaluationOptions, "official")
    add_options(p, CorrelationOptions, "official_measure", "official_qrels", "measure", "judged_relevant", "store",
                "runs")
    add_options(p, CorrelationOptions, "bootstrap", bootstrap=None)  # not given: the default, warned about less
    add_options(p, CorrelationOptions, "seed", "ties", "repeats")
    add_format(p, Correlation.formats, "json")
    add_floor_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compare and print."""
    result = api.correlate(args.leaderboard, args.official, from_args(CorrelationOptions, args), floor=floor_of(args))
    result = result.spelled(flag_names(args, ("bootstrap",)))
    for warning in result.warnings:
        note(f"warning: {warning}")
    if result.only_in_leaderboard or result.only_in_official:
        note(f"systems in one leaderboard only (left out of the correlation): "
             f"leaderboard {result.only_in_leaderboard}, official {result.only_in_official}")
    emit(api.render(result, args.format), args.format)
    return 0
