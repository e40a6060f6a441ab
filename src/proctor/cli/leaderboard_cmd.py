"""`proctor leaderboard --store S ...`: EXAM-Qrels (a measure over labels from grades or human judgments)
or EXAM-Cover leaderboards."""

from __future__ import annotations

import argparse
import sys

from proctor.cli.common import GRADE, add_format, add_store, int_in, note, readable_store
from proctor.cli.qrels_cmd import add_label_options
from proctor.errors import UsageError
from proctor.evaluate.measures import known_measures

DESCRIPTION = f"""\
Score systems and print a leaderboard, best first.

EXAM-Qrels:  --measure M --min-grade T   labels = max grade over the query's questions; a passage is
             relevant for binary measures when its label >= T (nDCG uses the labels as gains).
             --qrels official            score with the imported human judgments instead
             --qrels FILE                score with any qrels file
EXAM-Cover:  --metric cover --min-grade T --budget K [--missing zero|skip] [--normalize pool|pool-per-query]
             per query, the fraction of its questions answered (grade >= T) by the first K passages.
Nuggets:     --metric nuggets --score all|vital|strict_all|strict_vital|weighted   AutoNuggetizer scores of
             generated answers from a nugget-assign grade set (partial support 0.5 unless strict;
             weighted: vital 2, okay 1, as Auto-ARGUE); mean over topics.
Citations:   --metric citations --score support_precision|support_precision_partial|citation_coverage
             from a citation-support grade set (see docs/nuggets.md).

Measures: {known_measures()}.
Runs come from the store, or from --runs (files or folders of TREC runs).
Per topic, as TREC AutoJudge's evaluator reads leaderboards: --format tot (`run measure topic value`, as
trec_eval -q), ir-measures (`run<TAB>topic<TAB>measure<TAB>value`) or jsonl ({{run_id, topic_id, measure,
value}}); each run also gets an `all` row with its score.
TSV output: a header `system<TAB>score<TAB>stderr<TAB>n_queries`, then one row per system; notes go to
standard error."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `leaderboard` command."""
    p = commands.add_parser("leaderboard", help="EXAM-Qrels or EXAM-Cover leaderboard of the runs",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    p.add_argument("--metric", choices=("qrels", "cover", "nuggets", "citations"), default="qrels",
                   help="qrels: a retrieval measure over labels (default); cover: EXAM-Cover; nuggets: "
                   "AutoNuggetizer scores; citations: citation support of generated answers")
    p.add_argument("--score", help="nuggets: all, vital, strict_all, strict_vital or weighted; citations: "
                   "support_precision, support_precision_partial or citation_coverage")
    p.add_argument("--measure", help="retrieval measure for --metric qrels, e.g. P@20, nDCG@10, RR, AP, Rprec")
    p.add_argument("--min-grade", type=GRADE, metavar="T",
                   help="τ: smallest grade that counts (relevance level of binary measures; cover threshold)")
    p.add_argument("--qrels", metavar="official|FILE",
                   help="score with human judgments (`official`) or a qrels file instead of grades")
    add_label_options(p)
    p.add_argument("--budget", type=int_in(1), default=20, metavar="K",
                   help="cover: passages per query read (default 20)")
    p.add_argument("--missing", choices=("zero", "skip"),
                   help="a query a system did not answer: counts 0 or is skipped (default: zero for cover, "
                   "as the papers; skip for measures, as trec_eval without -c)")
    p.add_argument("--normalize", choices=("pool", "pool-per-query"),
                   help="cover: n-EXAM (001 §3.1.3): pool = the sum over queries of the system's cover divided by "
                   "the sum of what the whole pool covers (keeps EXAM's order); pool-per-query = the mean of "
                   "per-query ratios instead (not the paper's definition; can reorder systems)")
    p.add_argument("--gold", metavar="RUN", help="cover: n-EXAM, divided by what this run (e.g. gold articles) covers")
    p.add_argument("--runs", nargs="+", metavar="DIR|FILE", help="score these run files instead of stored rankings")
    add_format(p, ("tsv", "json", "md", "tot", "ir-measures", "jsonl"), "tsv")
    p.add_argument("--per-query", action="store_true", help="json: add every system's per-query scores")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the leaderboard (through the Python API) and print it."""
    from proctor import api

    if args.per_query and args.format != "json":
        raise UsageError("--per-query needs --format json")
    labels = api.LabelChoice(args.grade_set, args.method, args.model, args.bank, args.min_questions, args.facets)
    with readable_store(args.store, args.lock_timeout) as store:
        board = api.leaderboard(store, measure=args.measure, min_grade=args.min_grade, metric=args.metric,
                                labels=labels, judgments=args.qrels, budget=args.budget, missing=args.missing,
                                normalize=args.normalize, gold=args.gold, runs=args.runs, score=args.score)
    for line in board.notes:
        note(line)
    sys.stdout.write(api.render(board, args.format, per_query=args.per_query))
    return 0
