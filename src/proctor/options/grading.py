"""The grading options: what to grade and how, one field each, from which `proctor grade`'s flags, the
experiment file's `[[grade]]` keys (with the backend options), the AutoJudge settings that pass them and the
defaults of `grading.engine.GradeOptions` are derived."""

from __future__ import annotations

from dataclasses import dataclass

from proctor.options.model import NOT_IN_TOML, PATHS, int_in, option
from proctor.papers import FOUR_PROMPTS


@dataclass(frozen=True, kw_only=True)
class GradingOptions:
    """Every grading option, in the order of the experiment file's keys; those it does not take come last."""

    name: str | None = option(cli=False, help="the grader's name in an experiment (default: its method)")
    method: str | None = option(cli=False, help="the grading method (`proctor.methods.METHOD_NAMES`)")
    llm: str | None = option(help="backend spec (default for --method embedding: embed:minilm)")
    template: tuple[str, ...] | None = option(action="append", metavar="FILE.yaml", toml=PATHS,
                                              help="your variant of a step's template (repeat for several steps)")
    prefilter: str | None = option(metavar="SPEC", help="embedding pre-filter, e.g. embed:minilm")
    prefilter_below: float | None = option(
        metavar="S", help="pairs with similarity below S get grade 0 without an LLM call (recorded as such)")
    depth: int = option(20, parse=int_in(1), help="pool: top-k of every run (default {default})")
    max_queries: int | None = option(parse=int_in(1), help="trial runs: only the first N queries")
    max_passages: int | None = option(parse=int_in(1), help="trial runs: only the first N pool passages per query")
    bank: str | None = option(
        metavar="NAME[@VERSION]",
        help="grade this bank's questions (its latest version unless named; default: the only bank)")
    aggregate: str = option(
        "prompt", choices=("prompt", "sum", "naive-bayes"), applies=("four-prompts", "four-prompts-cot"),
        help="four-prompts: how the criterion grades become a label (default {default}, " + FOUR_PROMPTS
        + ", Table 3)")
    sum_thresholds: tuple[int, ...] = option(
        (10, 7, 5), cli_default="10,7,5", metavar="A,B,C", applies=("four-prompts", "four-prompts-cot"),
        help="four-prompts --aggregate sum: minimum sums for labels 3, 2, 1 (default {default})")
    verify: str = option(
        "edit-distance", choices=("edit-distance", "llm"), applies=("qa",),
        help="qa: check answers against the answer key by normalised edit distance (default) or by asking the "
        "same LLM whether they are equivalent")
    max_attempts: int = option(
        3, parse=int_in(1), metavar="N",
        help="a pair whose reply failed (error, empty, unparseable) is tried again by later runs until it has "
        "failed N times in all; then it stays failed with its last reason (default {default})")
    pairs_per_second: float | None = option(
        cli=False, help="the throughput the user states for this grader (dry-run time estimates only)")
    guard: str | None = option(
        choices=("detect", "harden"), toml=NOT_IN_TOML,
        help="detect: pool passages that address the judge or copy rubric text verbatim are flagged, not graded "
        "(listed, counted on leaderboards); harden: prompts fence the passage as data (a prompt version of "
        "ours); either makes a grade set of its own (docs/robustness.md)")
    progress_every: float = option(
        30.0, metavar="S", toml=NOT_IN_TOML,
        help="when standard error is not a terminal: a progress line (pairs done, rate, failures, ETA) every S "
        "seconds (default {default:g})")


__all__ = ["GradingOptions"]
