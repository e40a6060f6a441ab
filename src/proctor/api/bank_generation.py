"""Making question and nugget banks through the door (`proctor bank generate`): from a topics file with the
prompts of RUBRIC Table 1, or AutoNuggetizer-style nuggets from a store's judged relevant passages; checked
before any LLM call, written as a workbench bank file."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from proctor.api.choices import check_choice
from proctor.api.results import JSON, format_of, json_text
from proctor.bank.generate import generate_bank as generate_bank  # `(query_id, text)` topics, in memory
from proctor.errors import UsageError
from proctor.options.backend import BackendOptions
from proctor.options.banks import BankGenerationOptions
from proctor.options.grading import ResponseCacheOptions
from proctor.options.model import names
from proctor.outputs import file_target
from proctor.store import Store

if TYPE_CHECKING:
    from proctor.bank.generate import Outcome
    from proctor.llm.config import BackendConfig

Style = Literal["dl", "car"]
"""Prompt style: TREC DL (break the query into questions) or CAR (one bank line per query subtopic)."""
TEXT_BACKENDS = ("openai", "hf", "llamacpp")
Log = Callable[[str], None]


@dataclass(frozen=True)
class GenerationRequest:
    """A checked `proctor bank generate`: what to generate from (a topics file, or a store's pool), with which
    backend, into which file."""

    out: str
    backend: BackendConfig
    queries: str | None = None
    store: str | None = None
    style: Style = BankGenerationOptions.style  # type: ignore[assignment]
    nuggets: bool = BankGenerationOptions.nuggets
    importance: bool = BankGenerationOptions.importance
    per_query: int = BankGenerationOptions.per_query
    retries: int = BankGenerationOptions.retries
    min_relevance: int = BankGenerationOptions.min_relevance
    max_nuggets: int = BankGenerationOptions.max_nuggets
    dedup: bool = BankGenerationOptions.dedup

    @property
    def from_pool(self) -> bool:
        """Nuggets from the store's judged relevant passages (else from the topics file)."""
        return self.store is not None


@dataclass(frozen=True)
class Generated:
    """What a generation did: the lines written to `out` (none written when no topic gave a usable reply), the
    topics asked, LLM calls, and the topics that never succeeded (`failures`, `importance_failures`);
    `render("text")` is what `proctor bank generate` says on standard error, `render("json")` what it prints."""

    formats: ClassVar[tuple[str, ...]] = ("text", "json")
    out: str
    kind: Literal["questions", "nuggets"]
    topics: int
    limit: int
    outcome: Outcome = field(repr=False)

    @property
    def written(self) -> bool:
        """Whether the bank file was written (some topic gave a usable reply)."""
        return bool(self.outcome.lines)

    def as_dict(self) -> dict[str, Any]:
        """The summary `proctor bank generate --format json` prints."""
        counts = [len(line["items"]) for line in self.outcome.lines]
        return {"out": self.out if self.written else None, "topics": self.topics, "generated": len(counts),
                "items": sum(counts), "short_lines": sum(1 for c in counts if c < self.limit),
                "llm_calls": self.outcome.attempts, "failed": self.outcome.failures,
                "importance_failed": self.outcome.importance_failures}

    def to_json(self) -> JSON:
        """`as_dict()` as plain JSON data."""
        return json.loads(json_text(self.as_dict()))

    def render(self, fmt: str | None = None) -> str:
        """`text` (`said()`, one line each) or `json`."""
        if format_of(self, fmt) == "json":
            return json_text(self.as_dict())
        return "".join(line + "\n" for line in self.said())

    def said(self) -> list[str]:
        """What was generated, and what never succeeded: the sentences of `render("text")`."""
        outcome, summary = self.outcome, self.as_dict()
        lines = [f"{self.kind} for {summary['generated']} of {self.topics} topics ({summary['items']} items, "
                 f"{outcome.attempts} LLM calls) → {self.out if self.written else 'nothing written'}"]
        for failure in outcome.failures:
            if failure.get("windows"):
                lines.append(f"query {failure['query_id']}: windows without a usable reply (the nugget list was kept "
                             f"as it was): {'; '.join(failure['reasons'])}")
                continue
            lines.append(f"never succeeded: query {failure['query_id']}"
                         + (f" facet {failure['facet_id']}" if failure["facet_id"] else "")
                         + f" after {len(failure['reasons'])} tries: {failure['reasons'][-1]}")
        return lines + [f"no importance for query {failure['query_id']}: {'; '.join(failure['reasons'])}"
                        for failure in outcome.importance_failures]


def generation_request(llm: str, out: str | None = None, *, generation: BankGenerationOptions | None = None,
                       store: str | None = None, backend: BackendOptions | None = None,
                       cache: ResponseCacheOptions | None = None, **fields: Any) -> GenerationRequest:
    """`proctor bank generate`, checked before any LLM call: by `generation` (`BankGenerationOptions`, and/or its
    fields by name in `fields`), `per_query` items per topic of the `queries` file (questions, or `nuggets`), or
    with `from_pool` nuggets from `store`'s passages judged `min_relevance` or more (at most `max_nuggets` per
    query); `llm` a text-generating backend (openai:, hf:, llamacpp:), `backend` a `BackendConfig` and/or its
    fields (in `fields`), `cache` a response cache of its own; `out` the bank file to write (else
    `generation.out`)."""

    from proctor.llm.config import BackendConfig

    options = replace(generation or BankGenerationOptions(),
                      **{k: fields.pop(k) for k in list(fields) if k in names(BankGenerationOptions)})
    out = out or options.out
    if not out:
        raise UsageError("bank generate needs {out} FILE", params=("out",))
    queries, from_pool, nuggets = options.queries, options.from_pool, options.nuggets
    if options.per_query < 1:
        raise UsageError("{per_query} must be at least 1", params=("per_query",))
    file_target(out)  # before any LLM call
    if llm.split(":")[0] not in TEXT_BACKENDS:
        raise UsageError("bank generation needs a text-generating backend: openai:MODEL, hf:PATH, llamacpp:PATH")
    check_choice("style", options.style, Style)
    if from_pool:
        if not nuggets or not store or queries:
            raise UsageError("{from_pool} goes with {nuggets} and {store} S (and no {queries})",
                             params=("from_pool", "nuggets", "store", "queries"))
        if options.max_nuggets < 1:
            raise UsageError("{max_nuggets} must be at least 1", params=("max_nuggets",))
    elif not queries or store:
        raise UsageError("bank generate takes {queries} FILE (or {from_pool} {store} S {nuggets})",
                         params=("queries", "from_pool", "store", "nuggets"))
    config = BackendConfig.of(backend, llm, **fields, **(asdict(cache) if cache and cache.cache_dir else {}))
    return GenerationRequest(out, config, queries, store if from_pool else None, options.style, nuggets,  # type: ignore[arg-type]
                             options.importance, options.per_query, options.retries, options.min_relevance,
                             options.max_nuggets, options.dedup)


def generate_bank_file(request: GenerationRequest, *, log: Log | None = None) -> Generated:
    """Generate the bank a `GenerationRequest` asks for and write it to its `out` (when any topic gave a usable
    reply); `log` receives the notes (pool queries left out) as they come."""
    if request.from_pool:
        return nuggets_from_pool(request, log=log)
    from proctor.bank.generate import generate, read_topics

    topics = read_topics(request.queries, request.style)  # type: ignore[arg-type]
    kind: Literal["questions", "nuggets"] = "nuggets" if request.nuggets else "questions"
    outcome = _with_backend(request, len(topics), "generating", lambda backend, progress: generate(
        topics, backend, style=request.style, kind=kind, n=request.per_query, retries=request.retries,
        progress=progress, importance=request.importance))
    return _written(request, outcome, len(topics), kind, request.per_query)


def nuggets_from_pool(request: GenerationRequest, *, log: Log | None = None) -> Generated:
    """AutoNuggetizer-style nuggets from the judged relevant passages of the request's store."""
    from proctor.bank.pool_nuggets import create_from_pool, pool_topics

    say = log or (lambda _: None)
    store = Store.open(request.store)  # type: ignore[arg-type]
    try:
        if store.migration_note:
            say(store.migration_note)
        topics, left_out = pool_topics(store.corpus.queries(), store.corpus.judgments(), store.corpus.passage_texts(),
                                       request.min_relevance)
    finally:
        store.close()
    if left_out:
        say(f"{len(left_out)} judged queries have no query text or no passage with text judged "
            f">= {request.min_relevance}: no nuggets for them ({', '.join(left_out[:10])})")
    if not topics:
        raise UsageError(f"{request.store}: no query with a text and passages judged >= {request.min_relevance}")
    outcome = _with_backend(request, len(topics), "nuggets from the pool", lambda backend, progress: create_from_pool(
        topics, backend, max_nuggets=request.max_nuggets, retries=request.retries, importance=request.importance,
        dedup=request.dedup, progress=progress))
    return _written(request, outcome, len(topics), "nuggets", request.max_nuggets)


def _with_backend(request: GenerationRequest, total: int, label: str, work: Callable[[Any, Any], Any]) -> Outcome:
    """Run `work(backend, progress)` with the request's backend (closed after; reading and keeping replies in its
    response cache folder when it names one) and a progress bar."""
    from proctor.bank.generate import cached_backend
    from proctor.grading.progress import Progress

    backend, cache = cached_backend(request.backend, "generate")
    progress = Progress(total, None, label)

    async def go() -> Outcome:
        try:
            return await work(backend, progress)
        finally:
            await backend.aclose()

    try:
        outcome = asyncio.run(go())
    finally:
        if cache is not None:
            cache.close()
    progress.close()
    return outcome


def _written(request: GenerationRequest, outcome: Outcome, topics: int, kind: Literal["questions", "nuggets"],
             limit: int) -> Generated:
    from proctor.bank.generate import write_bank

    if outcome.lines:
        write_bank(outcome.lines, request.out)
    return Generated(request.out, kind, topics, limit, outcome)
