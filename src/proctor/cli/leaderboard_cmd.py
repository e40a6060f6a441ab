"""`proctor leaderboard --store S ...`: EXAM-Qrels (a measure over labels from grades or human judgments)
or EXAM-Cover leaderboards."""

from __future__ import annotations

import argparse
import sys

from proctor.cli.common import GRADE, add_format, add_store, int_in, note, readable_store
from proctor.cli.qrels_cmd import add_label_options
from proctor.cli.render import to_json, to_markdown, to_tsv
from proctor.errors import UsageError
from proctor.evaluate.cover import CoverTable
from proctor.evaluate.leaderboard import Leaderboard, cover_leaderboard, measure_leaderboard
from proctor.evaluate.measures import MeasureSpec, known_measures, parse_measure
from proctor.evaluate.runs import Ranked
from proctor.evaluate.sources import (
    describe,
    exam_qrels,
    grade_rows,
    load_runs,
    official_or_file_qrels,
    resolve_grade_set,
)
from proctor.store import Store

DESCRIPTION = f"""\
Score systems and print a leaderboard, best first.

EXAM-Qrels:  --measure M --min-grade T   labels = max grade over the query's questions; a passage is
             relevant for binary measures when its label >= T (nDCG uses the labels as gains).
             --qrels official            score with the imported human judgments instead
             --qrels FILE                score with any qrels file
EXAM-Cover:  --metric cover --min-grade T --budget K [--missing zero|skip] [--normalize pool]
             per query, the fraction of its questions answered (grade >= T) by the first K passages.

Measures: {known_measures()}.
Runs come from the store, or from --runs (files or folders of TREC runs).
TSV output: a header `system<TAB>score<TAB>stderr<TAB>n_queries`, then one row per system; notes go to
standard error."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `leaderboard` command."""
    p = commands.add_parser("leaderboard", help="EXAM-Qrels or EXAM-Cover leaderboard of the runs",
                            description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store(p)
    p.add_argument("--metric", choices=("qrels", "cover"), default="qrels",
                   help="qrels: a retrieval measure over labels (default); cover: EXAM-Cover")
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
    p.add_argument("--normalize", choices=("pool",), help="cover: n-EXAM, divided by what the whole pool covers")
    p.add_argument("--gold", metavar="RUN", help="cover: n-EXAM, divided by what this run (e.g. gold articles) covers")
    p.add_argument("--runs", nargs="+", metavar="DIR|FILE", help="score these run files instead of stored rankings")
    add_format(p, ("tsv", "json", "md"), "tsv")
    p.add_argument("--per-query", action="store_true", help="json: add every system's per-query scores")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the leaderboard and print it."""
    spec = check_options(args)
    with readable_store(args.store, args.lock_timeout) as store:
        runs = load_runs(store, args.runs)
        board = cover_board(store, runs, args) if spec is None else qrels_board(store, runs, spec, args)
    for line in board.notes:
        note(line)
    if args.format == "tsv":
        sys.stdout.write(to_tsv(board))
    elif args.format == "json":
        sys.stdout.write(to_json(board, per_query=args.per_query))
    else:
        sys.stdout.write(to_markdown(board))
    return 0


def check_options(args: argparse.Namespace) -> MeasureSpec | None:
    """Refuse contradictory options before any work; returns the measure (None for cover)."""
    if args.per_query and args.format != "json":
        raise UsageError("--per-query needs --format json")
    if args.metric == "cover":
        if args.measure or args.qrels:
            raise UsageError("--metric cover takes no --measure or --qrels (it reads the grades directly)")
        if args.min_grade is None:
            raise UsageError("--metric cover needs --min-grade T (the smallest grade that answers a question)")
        if args.budget < 1:
            raise UsageError("--budget must be at least 1")
        if args.gold and args.normalize:
            raise UsageError("--gold RUN and --normalize pool are two different normalisers: choose one")
        return None
    if args.gold:
        raise UsageError("--gold applies to --metric cover only")
    if not args.measure:
        raise UsageError("--metric qrels needs --measure M (e.g. P@20 or ndcg_cut.10)")
    if args.normalize:
        raise UsageError("--normalize applies to --metric cover only")
    spec = parse_measure(args.measure)
    if spec.rel is not None and args.min_grade is not None and spec.rel != args.min_grade:
        raise UsageError(f"{args.measure} names rel={spec.rel} but --min-grade is {args.min_grade}")
    if (not args.qrels and spec.rel is None and args.min_grade is None and spec.measure.uses_relevance_level):
        raise UsageError(f"{spec.name} on EXAM-Qrels needs --min-grade T (the smallest relevant grade)")
    return spec


def qrels_board(store: Store, runs: Ranked, spec: MeasureSpec, args: argparse.Namespace) -> Leaderboard:
    """EXAM-Qrels (or human-judgment) leaderboard."""
    if args.qrels:
        qrels = official_or_file_qrels(store, args.qrels)
        description = {"labels": "human judgments" if args.qrels == "official" else f"qrels file {args.qrels}"}
    else:
        grade_set = resolve_grade_set(store, args.grade_set, args.method, args.model, args.bank)
        qrels = exam_qrels(store, grade_set, min_questions=args.min_questions, facets=args.facets)
        description = describe(store, grade_set)
        description["label_rule"] = ("max grade over questions" if args.min_questions == 1
                                     else f"{args.min_questions}-th largest grade")
    missing = args.missing or "skip"
    return measure_leaderboard(runs, qrels, spec, args.min_grade, missing=missing, description=description)


def cover_board(store: Store, runs: Ranked, args: argparse.Namespace) -> Leaderboard:
    """EXAM-Cover leaderboard."""
    grade_set = resolve_grade_set(store, args.grade_set, args.method, args.model, args.bank)
    if args.gold and args.gold not in runs:
        raise UsageError(f"--gold {args.gold}: no such run (runs: {', '.join(sorted(runs))})")
    table = CoverTable.build(grade_rows(store, grade_set), args.min_grade)
    return cover_leaderboard(runs, table, budget=args.budget, missing=args.missing or "zero",
                             normalize=args.normalize, gold=args.gold, description=describe(store, grade_set))
