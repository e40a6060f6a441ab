"""`proctor leaderboard --store S ...`: EXAM-Qrels (a measure over labels from grades or human judgments)
or EXAM-Cover leaderboards."""

from __future__ import annotations

import argparse
from typing import get_args

from proctor import api
from proctor.cli.common import (
    add_floor_options,
    add_format,
    add_store,
    emit,
    floor_of,
    int_in,
    note,
    readable_store,
    warn_coverage,
)
from proctor.cli.compare_cmd import add_significance_options, significance_settings
from proctor.cli.qrels_cmd import add_label_options
from proctor.options.evaluation import EvaluationOptions
from proctor.options.model import add_options
from proctor.papers import EXAM

DESCRIPTION = f"""\
Score systems and print a leaderboard, best first.

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

Measures: {api.known_measures()}.
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


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `leaderboard` command."""
    p = commands.add_parser("leaderboard", help="EXAM-Qrels or EXAM-Cover leaderboard of the runs",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    p.add_argument("--metric", choices=get_args(api.Metric), default="qrels",
                   help="qrels: a retrieval measure over labels (default); cover: EXAM-Cover; nuggets: "
                   "AutoNuggetizer scores; citations: citation support of generated answers")
    p.add_argument("--score", help="nuggets: all, vital, strict_all, strict_vital or weighted; citations: "
                   "support_precision, support_precision_partial or citation_coverage")
    add_options(p, EvaluationOptions, "measure", "min_grade", min_grade=None)
    p.add_argument("--qrels", metavar="official|FILE",
                   help="score with human judgments (`official`) or a qrels file instead of grades")
    add_label_options(p)
    add_options(p, EvaluationOptions, "budget", "missing", missing=None)
    p.add_argument("--normalize", choices=get_args(api.Normalize),
                   help=f"cover: n-EXAM ({EXAM}, §3.1.3): pool = the sum over queries of the system's cover divided by "
                   "the sum of what the whole pool covers (keeps EXAM's order); pool-per-query = the mean of "
                   "per-query ratios instead, as exam_pp's n-exam (a query the pool covers nothing of counts 0; not "
                   "the paper's definition; can reorder systems)")
    p.add_argument("--gold", metavar="RUN", help="cover: n-EXAM, divided by what this run (e.g. gold articles) covers")
    p.add_argument("--runs", nargs="+", metavar="DIR|FILE", help="score these run files instead of stored rankings")
    add_format(p, get_args(api.LeaderboardFormat), "tsv")
    p.add_argument("--per-query", action="store_true", help="json: add every system's per-query scores")
    p.add_argument("--significance", action="store_true",
                   help="json/md: add paired t-tests and randomization tests between the systems, corrected for "
                   "multiple comparisons (see `proctor compare --help`; its options below)")
    add_significance_options(p)
    p.add_argument("--intervals", action="store_true",
                   help="bootstrap over topics: each system's score interval (percentile) and rank interval; TSV gains "
                   "ci_low ci_high rank_low rank_high, JSON those keys per system (seeded by --seed)")
    p.add_argument("--confidence", type=float, metavar="C", help="--intervals: confidence level (default 0.95)")
    p.add_argument("--resamples", type=int_in(1), metavar="B",
                   help="--intervals: bootstrap samples (default 1000, at most 100000)")
    add_human_options(p)
    add_floor_options(p)
    p.set_defaults(func=run, param_flags={"judgments": "--qrels"})


def add_human_options(p: argparse.ArgumentParser) -> None:
    """`--human-qrels`, `--human-topics`, `--judged-relevant`: the prediction-powered leaderboard."""
    p.add_argument("--human-qrels", metavar="official|reviewers|FILE",
                   help="prediction-powered leaderboard (docs/trust.md): the judge's scores on every topic corrected "
                   "by human minus judge on the human-judged topics, with intervals (PPI/PPI++), beside judge-only "
                   "and human-only; official, reviewers (verdicts in `proctor review`), official+reviewers or a "
                   "qrels file")
    p.add_argument("--human-topics", metavar="N|T1,T2,...",
                   help="--human-qrels: draw N judged topics at random (seeded by --seed) or name them (default: "
                   "every topic the humans judged)")
    add_options(p, EvaluationOptions, "judged_relevant")


def run(args: argparse.Namespace) -> int:
    """Build the leaderboards (through the Python API) and print them."""
    labels = api.LabelChoice(args.grade_set, args.method, args.model, args.bank, args.min_questions, args.facets)
    if args.human_qrels or args.human_topics or args.judged_relevant != EvaluationOptions.judged_relevant:
        return run_ppi(args, labels)
    with readable_store(args.store, args.lock_timeout) as store:
        report = api.leaderboard_report(
            store, measures=args.measure or [], min_grade=args.min_grade, metric=args.metric, labels=labels,
            judgments=args.qrels, budget=args.budget, missing=args.missing, normalize=args.normalize, gold=args.gold,
            runs=args.runs, score=args.score, floor=floor_of(args), fmt=args.format, per_query=args.per_query,
            significance=significance_settings(args) if args.significance else None, intervals=args.intervals,
            confidence=args.confidence, resamples=args.resamples, seed=args.seed)
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
    conflicting = {"judgments": args.qrels, "intervals": args.intervals, "significance": args.significance,
                   "per_query": args.per_query, "resamples": args.resamples, "score": args.score,
                   "metric": args.metric != "qrels", "budget": args.budget != 20, "normalize": args.normalize,
                   "gold": args.gold}
    if not args.human_qrels:
        raise api.UsageError("{human_topics} and {judged_relevant} need {human_qrels}",
                             params=("human_topics", "judged_relevant", "human_qrels"))
    if args.format not in api.PPILeaderboard.formats:
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
