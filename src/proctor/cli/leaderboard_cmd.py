"""`proctor leaderboard --store S ...`: EXAM-Qrels (a measure over labels from grades or human judgments)
or EXAM-Cover leaderboards."""

from __future__ import annotations

import argparse
from typing import get_args

from proctor import api
from proctor.api import commands
from proctor.api.types import LeaderboardFormat, PPILeaderboard
from proctor.cli.common import (
    add_floor_options,
    add_format,
    add_store,
    emit,
    floor_of,
    note,
    readable_store,
    warn_coverage,
)
from proctor.cli.compare_cmd import add_significance_options, significance_settings
from proctor.cli.qrels_cmd import add_label_options, label_choice
from proctor.options.calibration import PPIOptions
from proctor.options.evaluation import EvaluationOptions, LeaderboardOptions
from proctor.options.intervals import IntervalOptions
from proctor.options.model import add_options, from_args

DESCRIPTION = f"""\
Score systems and print a leaderboard, best first.

Any measure: --measure M (repeatable), e.g. P@20 with --min-grade T, P(rel=3)@20, Cover(rel=3)@20,
             NEXAM(rel=3,norm=pool)@20, Nuggets(score=strict_vital), Citations(score=support_precision);
             the --metric forms below are the same measures spelled as flags.
EXAM-Qrels:  --measure M --min-grade T   labels = max grade over the query's questions; a passage is
             relevant for binary measures when its label >= T (nDCG uses the labels as gains).
             --measure is repeatable: --measure nDCG@10 --measure P@20 prints one leaderboard each.
             --qrels official            score with the imported human judgments instead
             --qrels FILE                score with any qrels file
EXAM-Cover:  --metric cover --min-grade T --budget K [--missing zero|skip] [--normalize pool|pool-per-query]
             per query, the fraction of its questions answered (grade >= T) by the first K passages.
Nuggets:     --metric nuggets --score all|vital|strict_all|strict_vital|weighted   AutoNuggetizer scores of
             generated answers from a nugget-assign grade set (partial support 0.5 unless strict;
             weighted: vital 2, okay 1, as Auto-ARGUE); mean over topics.
Citations:   --metric citations --score support_precision|support_precision_partial|citation_coverage
             from a citation-support grade set (see docs/nuggets.md).

Prediction-powered (docs/trust.md): --human-qrels official|reviewers|FILE [--human-topics N|T1,T2,...]
             the judge's scores on every topic corrected by human minus judge on the human-judged topics,
             with intervals for the humans' all-topic score (PPI; PPI++ from 15 judged topics), beside the
             judge-only and human-only scores, and rank intervals; --judged-relevant J for the humans.

Measures: {commands.known_measures()}.
Runs come from the store, or from --runs (files or folders of TREC runs).
TSV output: a header `system<TAB>score<TAB>stderr<TAB>n_queries<TAB>measure<TAB>labels`, then one row per
system (and measure): `measure` is the measure with its parameters (`P(rel=3)@20`), `labels` the grade set
id, `official` or the qrels file; with --intervals four more: `ci_low ci_high rank_low rank_high` (bootstrap over
topics: docs/trust.md). Notes go to standard error, and so do warnings when the scores rest on little (fewer
than --floor-queries queries, or less than --floor-graded of the pool pairs labelled); JSON carries the counts
as `coverage`.
Per topic: --format trec (trec_eval -q lines `run measure query value`, with `all` last; the same as
AutoJudge's `tot` format, also accepted as --format tot), ir-measures (`run<TAB>topic<TAB>measure<TAB>value`)
or jsonl ({{run_id, topic_id, measure, value}}), as TREC AutoJudge's evaluator reads leaderboards."""


def register(commands_: argparse._SubParsersAction) -> None:
    """Add the `leaderboard` command."""
    p = commands_.add_parser("leaderboard", help="EXAM-Qrels or EXAM-Cover leaderboard of the runs",
                             description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    add_options(p, LeaderboardOptions, "metric", "score", "measure", "min_grade", "judgments")
    add_label_options(p)
    add_options(p, LeaderboardOptions, "budget", "missing", "normalize", "gold", "runs")
    add_format(p, get_args(LeaderboardFormat), "tsv")
    add_options(p, LeaderboardOptions, "per_query_scores", "significance")
    add_significance_options(p)
    add_options(p, IntervalOptions, "intervals", "confidence", "resamples", confidence=None, resamples=None)
    add_human_options(p)
    add_floor_options(p)
    p.set_defaults(func=run, param_flags={"judgments": "--qrels", "measures": "--measure"})


def add_human_options(p: argparse.ArgumentParser) -> None:
    """`--human-qrels`, `--human-topics`, `--judged-relevant`: the prediction-powered leaderboard."""
    add_options(p, PPIOptions, "human_qrels", "human_topics", human_qrels=None)
    add_options(p, EvaluationOptions, "judged_relevant")


def run(args: argparse.Namespace) -> int:
    """Build the leaderboards (through the Python API) and print them."""
    labels = label_choice(args)
    if args.human_qrels or args.human_topics or args.judged_relevant != EvaluationOptions.judged_relevant:
        return run_ppi(args, labels)
    options = from_args(LeaderboardOptions, args, measure=tuple(args.measure or ()),
                        runs=tuple(args.runs) if args.runs else None)
    with readable_store(args.store, args.lock_timeout) as store:
        report = commands.leaderboard_report(
            store, options, labels=labels, intervals=from_args(IntervalOptions, args), fmt=args.format,
            significance=significance_settings(args) if args.significance else None, floor=floor_of(args))
    for board in report.boards:
        for line in board.notes:
            note(line)
        warn_coverage(board.coverage)
    for comparison in report.comparisons:
        for line in comparison.notes:
            note(line)
    emit(api.render(report, args.format), args.format)
    return 0


def run_ppi(args: argparse.Namespace, labels: api.LabelChoice) -> int:
    """The prediction-powered leaderboard (`--human-qrels`)."""
    conflicting = {"judgments": args.judgments, "intervals": args.intervals, "significance": args.significance,
                   "per_query": args.per_query_scores, "resamples": args.resamples, "score": args.score,
                   "metric": args.metric != "qrels", "budget": args.budget != LeaderboardOptions.budget,
                   "normalize": args.normalize, "gold": args.gold}
    if not args.human_qrels:
        raise api.UsageError("{human_topics} and {judged_relevant} need {human_qrels}",
                             params=("human_topics", "judged_relevant", "human_qrels"))
    if args.format not in PPILeaderboard.formats:
        raise api.UsageError("{human_qrels} needs {fmt} tsv, json or md", params=("human_qrels", "fmt"))
    with readable_store(args.store, args.lock_timeout) as store:
        report = api.ppi(
            store, measures=args.measure or [], min_grade=args.min_grade, labels=labels, human_qrels=args.human_qrels,
            human_topics=args.human_topics, seed=args.seed, confidence=args.confidence,
            judged_relevant=args.judged_relevant, runs=args.runs, missing=args.missing, floor=floor_of(args),
            conflicting=conflicting)
    for board in report.judge_boards:
        for line in board.notes:
            note(line)
        warn_coverage(board.coverage)
    for board in report.boards():
        note(f"human-judged topics ({board['n_judged']} of {board['n_topics']}): {', '.join(board['human_topics'])}")
    emit(api.render(report, args.format), args.format)
    return 0
