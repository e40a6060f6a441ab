"""The evaluation options: how grades become labels and leaderboards, and what an experiment evaluates, one
field each, from which the flags of `leaderboard`, `qrels` and `correlate` (and the coverage floors of every
command that prints a number), the experiment file's `[evaluate]` keys and the AutoJudge settings that pass
them are derived. A command whose default differs says so where it adds the option."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.options.model import GRADE, INTS, NOT_IN_TOML, Checked, borrow, fraction, int_in, option
from proctor.papers import EXAM

LEADERBOARD_MEASURE = "P@20"
"""The one measure of a command that draws one leaderboard (`bank impact`, `calibrate`), when none is named."""


@dataclass(frozen=True, kw_only=True)
class EvaluationOptions(Checked):
    """Every evaluation option, in the order of the experiment file's keys; those it does not take come last."""

    measure: tuple[str, ...] = option(
        ("P@20", "nDCG@10"), action="append", metavar="M", toml_key="measures", kind="any measure",
        help="retrieval measure for --metric qrels (repeatable), e.g. P@20, nDCG@10, RR, AP, Rprec, R@100, bpref, "
        "infAP, Judged@10 — any ir_measures or trec_eval name")
    min_grade: int = option(
        4, parse=GRADE, metavar="T", toml=INTS,
        help="τ: smallest grade that counts (relevance level of binary measures; cover threshold)")
    budget: int = option(20, parse=int_in(1), metavar="K", toml=INTS, toml_key="cover_budget",
                         help="cover: passages per query read (default {default})")
    missing: str = option(
        "zero", choices=("zero", "skip"),
        help="a query a system did not answer: counts 0 or is skipped (default: zero for cover, as the papers; "
        "skip for measures, as trec_eval without -c)")
    min_questions: int = option(
        1, parse=int_in(1), metavar="M",
        help="label = the grade reached by at least M questions (the M-th largest; default {default}: max)")
    official: str | None = option(metavar="FILE", help="official leaderboard: JSON {{run: rank}} or TSV of scores")
    judged_relevant: int = option(
        1, parse=int_in(1), metavar="J",
        help="a human judgment >= J is relevant for binary measures (default {default}, as trec_eval's -l; TREC DL "
        "uses 2)")
    human: bool = option(True, cli=False, help="also the leaderboards of the human judgments")
    leaderboards: tuple[str, ...] = option(("tsv", "json"), cli=False, choices=("tsv", "json", "md"),
                                           help="the formats of the leaderboard files written")
    qrels: bool = option(True, cli=False, help="write the EXAM-Qrels of every grade set")
    correlations: bool = option(True, cli=False, help="correlate with the official leaderboard")
    report: bool = option(False, cli=False, help="write the `analyze` report")
    bootstrap: int = option(1000, parse=int_in(0), metavar="B",
                            help="bootstrap samples over queries (0 = none; default {default}, at most 100000; "
                            "needs per-query values)")
    seed: int = option(0, cli=False, help="the seed of every random draw")
    floor_queries: int = option(
        10, parse=int_in(0), metavar="N", toml=NOT_IN_TOML,
        help="warn when a number rests on fewer than N queries (default {default}; 0: never)")
    floor_graded: float = option(
        0.9, parse=fraction, metavar="F", toml=NOT_IN_TOML,
        help="warn when less than this fraction of the pool pairs has a label (default {default}; 0: never)")


@dataclass(frozen=True, kw_only=True)
class LeaderboardOptions(Checked):
    """`proctor leaderboard`'s own flags: the measures (or the older `--metric` modes, translated into measure
    strings by `api.commands.leaderboard_measures`), the labels they read, the runs, and what the output adds."""

    metric: str = option(
        "qrels", choices=("qrels", "cover", "nuggets", "citations"),
        help="qrels: a retrieval measure over labels (default); cover: EXAM-Cover; nuggets: AutoNuggetizer scores; "
        "citations: citation support of generated answers (each also a --measure: Cover(rel=T)@K, "
        "Nuggets(score=S), Citations(score=S))")
    score: str | None = option(help="nuggets: all, vital, strict_all, strict_vital or weighted; citations: "
                               "support_precision, support_precision_partial or citation_coverage")
    measure: tuple[str, ...] = option(
        (), action="append", metavar="M", kind="any measure",
        help="the measure (repeatable: one leaderboard each), e.g. P@20, nDCG@10, RR, AP, Rprec, R@100, bpref, "
        "Judged@10 (any ir_measures or trec_eval name), Cover(rel=3)@20, NEXAM(rel=3,norm=pool)@20, "
        "Nuggets(score=strict_vital), Citations(score=support_precision)")
    min_grade: int | None = option(
        parse=GRADE, metavar="T",
        help="τ: smallest grade that counts (relevance level of binary measures that name no rel=; cover threshold)")
    judgments: str | None = option(flag="--qrels", metavar="official|FILE",
                                   help="score with human judgments (`official`) or a qrels file instead of grades")
    budget: int = borrow(EvaluationOptions, "budget")
    missing: str | None = option(
        choices=("zero", "skip"),
        help="a query a system did not answer: counts 0 or is skipped (default: zero for cover and nuggets, as the "
        "papers; skip for measures over labels, as trec_eval without -c)")
    normalize: str | None = option(
        choices=("pool", "pool-per-query"),
        help=f"cover: n-EXAM ({EXAM}, §3.1.3): pool = the sum over queries of the system's cover divided by the sum "
        "of what the whole pool covers (keeps EXAM's order); pool-per-query = the mean of per-query ratios instead, "
        "as exam_pp's n-exam (a query the pool covers nothing of counts 0; not the paper's definition; can reorder "
        "systems)")
    gold: str | None = option(metavar="RUN", help="cover: n-EXAM, divided by what this run (e.g. gold articles) covers")
    runs: tuple[str, ...] | None = option(nargs="+", metavar="DIR|FILE",
                                          help="score these run files instead of stored rankings")
    per_query_scores: bool = option(False, action="store_true", flag="--per-query",
                                    help="json: add every system's per-query scores")
    significance: bool = option(
        False, action="store_true",
        help="json/md: add paired t-tests and randomization tests between the systems, corrected for multiple "
        "comparisons (see `proctor compare --help`; its options below)")


@dataclass(frozen=True, kw_only=True)
class QrelsOptions(Checked):
    """`proctor qrels`' own flags: graded labels, or 1/0 at a threshold."""

    binary: bool = option(False, action="store_true", help="write 1 for labels >= --min-grade, else 0")
    min_grade: int | None = option(parse=GRADE, metavar="T", help="with --binary: the smallest relevant label")
