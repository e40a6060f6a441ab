"""`proctor correlate LEADERBOARD --official OFFICIAL`: how well a leaderboard agrees with the official one."""

from __future__ import annotations

import argparse
from typing import get_args

from proctor import api
from proctor.cli.common import add_floor_options, add_format, emit, flag_names, floor_of, int_in, note
from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import add_options
from proctor.papers import EXAM

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
    p.add_argument("--official-measure", metavar="M",
                   help="with --official: the measure read from the official file when it holds several "
                   "(e.g. trec_eval's output of the official runs)")
    p.add_argument("--official-qrels", metavar="FILE", help="compute the official leaderboard from these qrels")
    p.add_argument("--measure", help="the measure read from LEADERBOARD when it holds several (trec_eval or "
                   "ir_measures name); with --official-qrels also the measure computed, e.g. nDCG@10")
    add_options(p, EvaluationOptions, "judged_relevant")
    p.add_argument("--store", help="with --official-qrels: take the runs from this store")
    p.add_argument("--runs", nargs="+", metavar="DIR|FILE", help="with --official-qrels: take the runs from files")
    add_options(p, EvaluationOptions, "bootstrap", bootstrap=None)
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and of random tie-breaking (default 0)")
    p.add_argument("--ties", choices=get_args(api.Ties), default="average",
                   help="tied predicted scores: average ranks as scipy (default), or broken at random and the "
                   f"correlations averaged over --repeats repetitions ({EXAM}, §4.1.1)")
    p.add_argument("--repeats", type=int_in(1), default=10,
                   help="--ties random: repetitions (default 10, at most 100000)")
    add_format(p, api.Correlation.formats, "json")
    add_floor_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compare and print."""
    result = api.correlation(args.leaderboard, official=args.official, official_measure=args.official_measure,
                             official_qrels=args.official_qrels, measure=args.measure,
                             judged_relevant=args.judged_relevant, store=args.store, runs=args.runs,
                             bootstrap=args.bootstrap, seed=args.seed, ties=args.ties, repeats=args.repeats,
                             floor=floor_of(args))
    result = result.spelled(flag_names(args, ("bootstrap",)))
    for warning in result.warnings:
        note(f"warning: {warning}")
    if result.only_in_leaderboard or result.only_in_official:
        note(f"systems in one leaderboard only (left out of the correlation): "
             f"leaderboard {result.only_in_leaderboard}, official {result.only_in_official}")
    emit(api.render(result, args.format), args.format)
    return 0
