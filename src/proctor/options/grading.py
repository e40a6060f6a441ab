"""The grading options: what to grade and how, one field each, from which `proctor grade`'s flags, the
experiment file's `[[grade]]` keys (with the backend options), the AutoJudge settings that pass them and the
defaults of `grading.engine.GradeOptions` are derived."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from proctor.errors import UsageError
from proctor.options.model import NOT_IN_TOML, PATHS, Checked, int_in, option
from proctor.papers import FOUR_PROMPTS


@dataclass(frozen=True, kw_only=True)
class GradingOptions(Checked):
    """Every grading option, in the order of the experiment file's keys; those it does not take come last."""

    name: str | None = option(cli=False, help="the grader's name in an experiment (default: its method)")
    method: str | None = option(cli=False, help="the grading method (`proctor.methods.METHOD_NAMES`)")
    llm: str | None = option(
        metavar="SPEC", help="the backend: openai:MODEL, hf:PATH, llamacpp:PATH.gguf, ... (grade --method embedding: "
        "embed:minilm by default)")
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

    progress: bool | None = option(
        action=argparse.BooleanOptionalAction, toml=NOT_IN_TOML,
        help="show a progress bar (default: when standard error is a terminal; otherwise a log line every "
        "--progress-every seconds)")


@dataclass(frozen=True, kw_only=True)
class EngineOptions(Checked):
    """Where the requests of a grading run come from: this process, or Ray Data workers."""

    engine: str = option(
        "local", choices=("local", "ray"), toml=NOT_IN_TOML,
        help="local: requests from this process (default); ray: Ray Data workers render prompts and call the "
        "backend, this process alone writes the store (extra ray: pip install -e '.[ray]' in a Proctor checkout)")
    ray_address: str | None = option(metavar="ADDR", toml=NOT_IN_TOML,
                                     help="--engine ray: the cluster to join (default: a local Ray)")
    ray_workers: int | None = option(parse=int_in(1), metavar="N", toml=NOT_IN_TOML,
                                     help="--engine ray: worker actors (default: the cluster's CPUs)")


@dataclass(frozen=True, kw_only=True)
class BatchOptions(Checked):
    """Grading through batch files (OpenAI Batch API, vllm run_batch, any cluster job) instead of requests."""

    batch_export: Path | None = option(
        metavar="DIR", parse=Path, toml=NOT_IN_TOML,
        help="write the pending prompts of the grade set's next step as OpenAI batch JSONL shards into DIR instead "
        "of grading (--llm openai:MODEL names the model)")
    batch_import: tuple[Path, ...] = option(
        (), metavar="FILE", parse=Path, toml=NOT_IN_TOML, nargs="+",
        help="grade from batch result files (OpenAI's or vLLM's output format); a file imported before is skipped; "
        "errored lines are recorded as failures and exported again")
    batch_wait: bool = option(
        False, action="store_true", toml=NOT_IN_TOML,
        help="--llm openai-batch:MODEL: poll until every batch is finished and imported (default: submit, poll once "
        "and detach; the same command later resumes polling the batches in the store)")
    batch_poll: float = option(30.0, metavar="SECONDS", toml=NOT_IN_TOML,
                               help="--batch-wait: seconds between polls (default {default:g})")
    batch_max_requests: int = option(50_000, parse=int_in(1), metavar="N", toml=NOT_IN_TOML,
                                     help="--batch-export: at most N requests per shard (default {default})")
    batch_max_bytes: int = option(190_000_000, parse=int_in(1), metavar="B", toml=NOT_IN_TOML,
                                  help="--batch-export: at most B bytes per shard (default {default})")


@dataclass(frozen=True, kw_only=True)
class ResponseCacheOptions(Checked):
    """A response cache of its own, shared by runs and stores, instead of the store's."""

    cache_dir: str | None = option(
        metavar="DIR", toml=NOT_IN_TOML,
        help="keep the LLM's replies in DIR/proctor-llm-cache.db (SQLite, shared by runs, stores and processes) "
        "instead of the store, and answer from it what it holds (docs/grading.md)")
    cache_refresh: bool = option(
        False, action="store_true", toml=NOT_IN_TOML,
        help="--cache-dir: ask the LLM again instead of answering from the cache, and keep the new replies over the "
        "old")

    def check(self) -> None:
        """Refuse `cache_refresh` without a `cache_dir` to refresh (this model is a response cache of its own; the
        store's own cache is refreshed by `api.grade(..., cache_refresh=True)` without the model)."""
        if self.cache_refresh and not self.cache_dir:
            raise UsageError("{cache_refresh} refreshes the response cache of {cache_dir} DIR: name one",
                             params=("cache_refresh", "cache_dir"))


__all__ = ["BatchOptions", "EngineOptions", "GradingOptions", "ResponseCacheOptions"]
