"""The evaluation options: how grades become labels and leaderboards, and what an experiment evaluates, one
field each, from which the flags of `leaderboard`, `qrels` and `correlate` (and the coverage floors of every
command that prints a number), the experiment file's `[evaluate]` keys and the AutoJudge settings that pass
them are derived. A command whose default differs says so where it adds the option."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.options.model import GRADE, INTS, NOT_IN_TOML, fraction, int_in, option


@dataclass(frozen=True, kw_only=True)
class EvaluationOptions:
    """Every evaluation option, in the order of the experiment file's keys; those it does not take come last."""

    measure: tuple[str, ...] = option(
        ("P@20", "nDCG@10"), action="append", metavar="M", toml_key="measures",
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
