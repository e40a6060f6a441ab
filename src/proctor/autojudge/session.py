"""One judge configuration's state: a Proctor store inside `--out-dir` that holds the topics, the responses,
the bank, the grades and the LLM's replies (with `CACHE_DIR`: the replies, of grading and of bank generation,
in the response cache there instead, which a fresh --out-dir replays). Every step goes through `proctor.api`; a
second run resumes and grades only what is missing, and a pair that has no grade after grading is an error
naming it."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proctor import api
from proctor.api.autojudge import DIRECT_METHODS, BackendUnavailable, response_cache_file
from proctor.autojudge.documents import scope_documents
from proctor.autojudge.llm_config import cache_choice, resolve
from proctor.autojudge.settings import JudgeSettings
from proctor.autojudge.sources import RUNNER_OPTIONS, bank_origins, relocated, report_key, report_origins
from proctor.errors import InputError, UsageError
from proctor.records import GradeSet

if TYPE_CHECKING:
    from proctor.api import Store

ANSWER_METHODS = ("nugget-assign", "citation-support")
NO_BANK_METHODS = (*DIRECT_METHODS, "four-prompts", "four-prompts-cot", "query-gen", "citation-support")
"""Methods that grade a passage for its query (or a citation for its passage), not for bank items."""


def note(message: str) -> None:
    """A line for the person running the judge (standard error, as the AutoJudge runner logs)."""
    print(f"[proctor] {message}", file=sys.stderr)


@dataclass
class Session:
    """The store of one configuration and the LLM settings it grades with."""

    settings: JudgeSettings
    store: Store
    outdir: Path
    model: str | None
    base_url: str | None
    runs: list[str] = field(default_factory=list)
    """The runs of this run's responses: the only ones its leaderboard and qrels show (the store may hold more)."""
    sentences: dict[str, str] = field(default_factory=dict)
    """Passage id (`run/topic/i`) → the sentence's text exactly as the report gives it."""
    cache: dict[str, Any] = field(default_factory=dict)
    """The response cache options (`cache_dir`, `cache_refresh`) when `CACHE_DIR` names a folder."""
    empty: set[tuple[str, str]] = field(default_factory=set)
    """(run, topic) of the reports with no sentence text (`answer: []`): not imported, they score 0."""
    documents: list[dict[str, str]] = field(default_factory=list)
    """The documents the reports carry, as corpus lines (citation support only: `scope_documents`)."""

    def note(self, message: str) -> None:
        """A line for the person running the judge: standard error, and the judge's log `S.log` in --out-dir."""
        note(message)
        with open(self.outdir / f"{self.stem}.log", "a", encoding="utf-8") as log:
            log.write(f"{message}\n")

    @classmethod
    def open(cls, kwargs: dict[str, Any], llm_config: Any) -> Session:
        """The store named by the settings inside the runner's `outdir` (created on the first run)."""
        settings = JudgeSettings.from_kwargs(kwargs)
        outdir = Path(kwargs.get("outdir") or ".")
        outdir.mkdir(parents=True, exist_ok=True)
        folder, refresh = cache_choice(settings.llm_config_file, getattr(llm_config, "cache_dir", None))
        model, base_url = resolve(settings.llm_config_file, getattr(llm_config, "model", None),
                                  getattr(llm_config, "base_url", None),
                                  outdir / f"{Path(settings.store).name.removesuffix('.db')}.llm-choice.json", folder)
        store = api.open_store(outdir / settings.store, create=True)
        cache = {"cache_dir": folder, "cache_refresh": refresh} if folder else {}
        if folder:
            note(f"response cache: {response_cache_file(folder)}{' (force refresh: asking again)' * refresh}")
        return cls(settings, store, outdir, model, base_url, cache=cache)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.store.close()

    @property
    def needs_bank(self) -> bool:
        """Whether the method grades bank items (questions or nuggets)."""
        return self.settings.method not in NO_BANK_METHODS

    def ensure_bank(self, topics: Sequence[Any], nugget_banks: Any) -> None:
        """The given banks imported (a changed bank becomes a new version), else the stored bank, else one
        generated (nuggets with importance for the nugget methods)."""
        if nugget_banks is not None:
            self.import_banks(nugget_banks, [t.request_id for t in topics])
        elif not self.has_bank():
            self.note("no bank given or stored: generating one with the LLM")
            self.generate_bank(topics, nuggets=self.settings.method in ("nugget-rating", "nugget-assign"))

    def graded(self, topics: Sequence[Any], responses: Iterable[Any], nugget_banks: Any, corpus: str | None
               ) -> GradeSet:
        """Topics, responses, corpus and bank loaded, every pair graded: the grade set."""
        self.load(topics, list(responses))
        self.load_corpus(corpus)
        if self.needs_bank:
            self.ensure_bank(topics, nugget_banks)
        return self.grade()

    @property
    def stem(self) -> str:
        """The store's file name without `.db`: the prefix of the files the session writes beside it."""
        return Path(self.settings.store).name.removesuffix(".db")

    def load(self, topics: Sequence[Any], responses: Iterable[Any] | None) -> None:
        """Import the topics and the responses (the identical files again change nothing); the responses are
        checked first (`answered`), so a refusal leaves the store as it was."""
        responses = None if responses is None else list(responses)
        origins = report_origins(responses or [])
        kept = None if responses is None else self.answered(responses, origins)
        queries = self.outdir / f"{self.stem}.topics.jsonl"
        _write_lines(queries, ({"query_id": t.request_id, "text": t.title} for t in topics))
        try:
            api.import_files(self.store, "queries", [queries])
        except InputError as e:  # the runner keeps no file name of its topics: the topic names itself
            raise relocated(e, queries, [None] * len(topics), "rag_topics") from None
        if responses is None or kept is None:
            return
        self.runs = sorted({r.metadata.run_id for r in responses})
        self.sentences = sentence_texts(responses)
        reports = self.outdir / f"{self.stem}.responses.jsonl"
        records = [r.model_dump(mode="json", exclude_none=True) for r in kept]
        if self.settings.method == "citation-support":
            self.documents = [line for record in records for line in scope_documents(record)]
        _write_lines(reports, records)
        try:
            (report,) = api.import_files(self.store, "responses", [reports], skip_unknown_queries=True)
        except InputError as e:  # found in the judge's copy: name the user's file and line
            at = [(origins.get(_key(r)) or [None])[0] for r in kept]
            raise relocated(e, reports, at, "rag_responses") from None
        if report.skipped_unknown_queries:
            self.note(f"{report.skipped_unknown_queries} responses answer topics not in "
                      f"{RUNNER_OPTIONS['rag_topics']}: not judged")

    def answered(self, responses: list[Any], origins: dict[tuple[str, str], list[Any]]) -> list[Any]:
        """The reports with some sentence text; the others (`answer: []`, blank sentences only: a smell in the
        2026 track specs, not an error) are counted and score 0. A run answering a topic twice is refused, and so
        is an answer that is empty now though the store holds its earlier sentences (`refuse_emptied`)."""
        given = {_key(r) for r in responses}
        for key, where in origins.items():
            if len(where) > 1 and key in given:
                (path, line), (first, at) = where[1], where[0]
                raise InputError(path, line, f"run {key[0]!r} answers topic {key[1]!r} twice (first on {first}:{at})")
        self.empty = {_key(r) for r in responses if not _texts(r)}
        self.refuse_emptied(origins)
        if self.empty:
            shown = ", ".join(f"{run}/{topic}" for run, topic in sorted(self.empty)[:10])
            self.note(f"{len(self.empty)} empty answer{'s' * (len(self.empty) != 1)} (no sentence text): 0 on every "
                      f"measure for {shown}{' ...' if len(self.empty) > 10 else ''}")
        return [r for r in responses if _texts(r)]

    def refuse_emptied(self, origins: dict[tuple[str, str], list[Any]]) -> None:
        """An answer that is empty now, though an earlier run of this configuration stored its sentences: they
        are still in the store and still scored there, so its 0 would not be the store's number. Refused, as the
        import refuses an answer whose text changed."""
        stored = self.store.corpus.ranked_lists() if self.empty else {}
        emptied = sorted((run, topic) for run, topic in self.empty if topic in stored.get(run, {}))
        if not emptied:
            return
        run, topic = emptied[0]
        more = f" ({len(emptied) - 1} more answers so)" if len(emptied) > 1 else ""
        path, line = (origins.get((run, topic)) or [("rag_responses", None)])[0]
        raise InputError(RUNNER_OPTIONS.get(path, path), line,
                         f"run {run!r} gives topic {topic!r} an empty answer, but the store {self.store.path} holds "
                         f"its earlier answer, which it scores{more}: judge into a fresh "
                         f"{RUNNER_OPTIONS['outdir']}, or another store (setting store)")

    def load_corpus(self, corpus: str | None) -> None:
        """The cited documents' texts, which citation support judges against: the documents the reports carry
        (`proctor.autojudge.documents`), and `--corpus FILE` when given (a corpus file Proctor reads: JSONL
        `{id, text}`, TSV, ...); the other methods grade the response sentences and ignore both."""
        if self.settings.method != "citation-support":
            if corpus:
                self.note(f"{RUNNER_OPTIONS['corpus']} {corpus}: not used by method {self.settings.method}")
            return
        if corpus:
            if not Path(corpus).is_file():
                raise UsageError(f"{{corpus}} {corpus}: no such file", params=("corpus",))
            api.import_files(self.store, "corpus", [corpus])
        if self.documents:
            path = self.outdir / f"{self.stem}.documents.jsonl"
            _write_lines(path, self.documents)
            api.import_files(self.store, "corpus", [path])
        elif not corpus:
            raise UsageError("method citation-support judges cited sentences against the cited documents: the "
                             "reports carry none (`documents`) and no {corpus} FILE (JSONL {id, text} or TSV) is given",
                             params=("corpus",))

    def has_bank(self) -> bool:
        """Whether the store holds a bank (given or generated on an earlier run)."""
        return bool(self.store.banks.versions())

    def import_banks(self, nugget_banks: Any, topic_ids: list[str]) -> None:
        """Import the given AutoJudge nugget banks of the judged topics (written with AutoJudge's own writer,
        read with Proctor's AutoJudge bank reader) as the store's bank; the runner's --topic / --limit-topics
        judge fewer topics than the banks hold, and a bank of other topics would be scored too."""
        from autojudge_base.nugget_data import write_nugget_banks_generic

        wanted = set(topic_ids)
        kept = type(nugget_banks)(banks={q: b for q, b in nugget_banks.banks.items() if q in wanted})
        path = self.outdir / f"{self.stem}.given-bank.jsonl"
        write_nugget_banks_generic(kept, path)
        try:  # the topic file's titles are the query texts; a bank's other wording stays the bank's
            (report,) = api.import_files(self.store, "bank", [path], bank_name=self.bank_name, keep_query_texts=True)
        except InputError as e:  # found in the judge's copy: name the user's file and line
            origins = bank_origins()
            at = [origins.get(q, (f"{RUNNER_OPTIONS['nugget_banks']} (topic {q})", None)) for q in kept.banks]
            raise relocated(e, path, at, "nugget_banks") from None
        for line in report.notes:
            self.note(line.replace(str(path), RUNNER_OPTIONS["nugget_banks"]))
        titles = self.store.corpus.queries()
        other = sorted(q for q, b in kept.banks.items() if getattr(b, "title_query", None) not in (None, titles.get(q)))
        if other:
            self.note(f"{len(other)} topics are worded otherwise in the banks' title_query ({', '.join(other[:10])}): "
                      "the topic file's title is the query text; the banks keep their wording")

    @property
    def bank_name(self) -> str:
        """The name the store gives an imported or generated bank (`bank`'s name, else `autojudge`)."""
        return (self.settings.bank or "autojudge").split("@")[0]

    def generate_bank(self, topics: Sequence[Any], *, nuggets: bool) -> None:
        """Generate questions (or nuggets with importance) for the topics with the LLM `generator_spec` names."""
        llm = self.settings.generator_spec(self.model)
        outcome = api.generate_bank([(t.request_id, t.title) for t in topics], llm,
                                    kind="nuggets" if nuggets else "questions", n=self.settings.generate,
                                    importance=nuggets, **self.settings.backend_options(self.base_url, llm),
                                    **self.cache)
        if outcome.failures:
            missing = ", ".join(f["query_id"] for f in outcome.failures[:10])
            raise UsageError(f"bank generation gave no usable reply for {len(outcome.failures)} topics ({missing}): "
                             f"{outcome.failures[0]['reasons'][-1]}")
        path = self.outdir / f"{self.stem}.generated-bank.jsonl"
        _write_lines(path, outcome.lines)
        api.import_files(self.store, "bank", [path], bank_name=self.bank_name)

    def grade(self) -> GradeSet:
        """Grade what is missing; a pair left without a grade (not in the cache, the LLM failing) is an error."""
        s = self.settings
        llm = s.llm or ("embed:minilm" if s.method == "embedding" else s.llm_spec(self.model))
        options: dict[str, Any] = {**s.backend_options(self.base_url), **self.cache, "progress": False}
        if s.method not in ANSWER_METHODS:
            options.update(depth=s.depth)
        if s.bank and s.method not in NO_BANK_METHODS:
            options.update(bank=s.bank)
        try:
            grade_set, summaries = api.grade(self.store, s.method, llm, **options)
        except BackendUnavailable as e:
            raise UsageError(self.missing(llm, options, str(e))) from None
        for summary in summaries:
            left = summary.failures + summary.given_up
            if left:
                reasons = "; ".join(f"{reason} ({n})" for reason, n in summary.errors.most_common(3))
                raise UsageError(
                    f"{left} of {summary.pairs} pairs of grade set {summary.grade_set} ({summary.method} / "
                    f"{summary.model}) have no grade: not in the cache of {self.cache_name}, and the LLM failed"
                    f"{': ' + reasons if reasons else ''}. Nothing was written; run again with the endpoint up")
        done = sum(x.graded for x in summaries)
        self.note(f"grade set {grade_set.id}: {done} pairs graded now, "
                  f"{sum(x.already_graded for x in summaries)} from the store")
        return grade_set

    def missing(self, llm: str, options: dict[str, Any], why: str) -> str:
        """The error text when the endpoint is down and the store lacks grades."""
        pairs = api.ungraded(self.store, self.settings.method, llm, **options)
        return missing_text(self.cache_name, pairs, self.settings.method, llm, why)

    @property
    def cache_name(self) -> str:
        """Where the replies are cached: the response cache under CACHE_DIR, else the store."""
        folder = self.cache.get("cache_dir")
        return str(response_cache_file(folder)) if folder else str(self.store.path)


def _key(report: Any) -> tuple[str, str]:
    """(run, topic) of a report the runner parsed (it always names its topic)."""
    key = report_key(report)
    assert key is not None  # the runner refuses a report without topic_id or narrative_id
    return key


def _texts(report: Any) -> list[str]:
    """The report's sentence texts, sentences without text left out (as the responses reader does)."""
    return [s.text for s in (report.responses or report.answer or []) if (s.text or "").strip()]


def sentence_texts(responses: Iterable[Any]) -> dict[str, str]:
    """Proctor's passage id of every report sentence (`run/topic/i`, sentences without text skipped, as the
    responses reader numbers them) → its text as given."""
    out = {}
    for r in responses:
        run, topic = _key(r)
        out.update({f"{run}/{topic}/{i}": text for i, text in enumerate(_texts(r))})
    return out


def missing_text(cache: str, pairs: list[tuple[str, str, str]], method: str, llm: str, why: str) -> str:
    """What a run without the LLM lacks: how many pairs, of which runs and topics, a few of them."""
    runs = sorted({pid.split("/")[0] for _, pid, _ in pairs})
    topics = sorted({qid for qid, _, _ in pairs})
    shown = "; ".join(f"topic {q}, sentence {p}, item {i}" for q, p, i in pairs[:3])
    return (f"{len(pairs)} pairs ({method} / {llm}) are not in the cache of {cache} and the LLM cannot be "
            f"asked ({why}): runs {', '.join(runs[:10])}{' ...' if len(runs) > 10 else ''}, topics "
            f"{', '.join(topics[:10])}{' ...' if len(topics) > 10 else ''}; e.g. {shown}. Nothing was written")


def _write_lines(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """JSON lines, keys sorted, so the same input always gives the same file (and the same import)."""
    path.write_text("".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")
