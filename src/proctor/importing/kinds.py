"""The importers of every kind but exam_pp (`proctor.importing.exampp`): queries, runs, qrels, corpus, banks and
generated responses, each writing through the guard and returning its counts; and the checks they share (unknown
query ids, runs of generated responses)."""

from __future__ import annotations

from pathlib import Path

from proctor.errors import InputError
from proctor.import_checks import compare_runs
from proctor.importing.report import Tally
from proctor.io.bank_files import load_bank
from proctor.io.corpus import read_corpus
from proctor.io.queries import read_queries
from proctor.io.responses import Response, read_responses
from proctor.io.trec import read_qrels, read_run
from proctor.options.inputs import ImportOptions
from proctor.store import Store
from proctor.store.banks import IdConflict
from proctor.store.integrity import Guard

Counts = dict[str, int]
"""What an importer read, by what it counts (in the order the summary line names them)."""


class QueryCheck:
    """Decides, line by line, whether a query id is known; counts what it skips."""

    def __init__(self, store: Store, path: Path, options: ImportOptions, tally: Tally) -> None:
        self.known = store.corpus.query_ids()
        self.path, self.skip, self.tally = path, options.skip_unknown_queries, tally

    def keep(self, line: int, query_id: str) -> bool:
        """Whether to import a line of `query_id` (False: skipped and counted; unknown: an error)."""
        if not self.known or query_id in self.known:
            return True
        if self.skip:
            self.tally.skipped_unknown_queries += 1
            return False
        raise InputError(str(self.path), line,
                         f"unknown query id {query_id!r} (the store knows {len(self.known)} queries; "
                         "import them first, or pass {skip_unknown_queries})", params=("skip_unknown_queries",))


def import_queries(store: Store, path: Path, options: ImportOptions, tally: Tally, guard: Guard) -> Counts:
    """Queries (with texts), each line tracked by the guard."""
    rows = read_queries(path)
    store.corpus.upsert_queries(guard.track((line, (qid, text)) for line, qid, text in rows))
    return {"queries": len(rows)}


def generated_runs(store: Store) -> set[str]:
    """The runs of generated responses the store holds."""
    return {segment["run"] for segment in store.corpus.segments().values()}


def refuse_generated_runs(path: Path, runs: dict[str, int], generated: set[str]) -> None:
    """Rankings of a retrieval run may not go into a run of generated responses (`{run: line}`)."""
    for run, line in runs.items():
        if run in generated:
            raise InputError(str(path), line, f"run {run!r} is already in the store as generated responses; give "
                             "the retrieval run a name of its own (its rankings would be merged into them)")


def import_runs(store: Store, path: Path, options: ImportOptions, tally: Tally, guard: Guard) -> Counts:
    """TREC runs: a run the store holds must come again whole (or is replaced under `replace`)."""
    check = QueryCheck(store, path, options, tally)
    lines = [r for r in read_run(path) if check.keep(r.line, r.query_id)]
    refuse_generated_runs(path, {r.run: r.line for r in reversed(lines)}, generated_runs(store))
    compare_runs(store, path, lines, options.replace, tally)
    store.corpus.upsert_rankings(guard.track((r.line, (r.run, r.query_id, r.passage_id, r.rank,
                                                       r.score)) for r in lines))
    store.corpus.upsert_passages((r.passage_id, None) for r in lines)
    return {"runs": len({r.run for r in lines}), "rankings": len(lines)}


def import_qrels(store: Store, path: Path, options: ImportOptions, tally: Tally, guard: Guard) -> Counts:
    """Human judgments; their passages are added without text."""
    check = QueryCheck(store, path, options, tally)
    lines = [(line, (qid, pid, rel)) for line, qid, pid, rel in read_qrels(path) if check.keep(line, qid)]
    rows = [row for _, row in lines]
    store.corpus.upsert_judgments(guard.track(lines))
    store.corpus.upsert_passages((pid, None) for _, pid, _ in rows)
    return {"judgments": len(rows)}


def import_corpus(store: Store, path: Path, options: ImportOptions, tally: Tally, guard: Guard) -> Counts:
    """Passage texts."""
    rows = read_corpus(path)
    store.corpus.upsert_passages(guard.track((line, (pid, text)) for line, pid, text in rows))
    return {"passages": len(rows)}


def import_bank(store: Store, path: Path, options: ImportOptions, tally: Tally, guard: Guard) -> Counts:
    """A question or nugget bank as a new version (its query texts kept or filled)."""
    bank = load_bank(path, options.on_error)
    tally.skipped_records.extend(bank.skipped)
    tally.notes.extend(bank.notes)
    check = QueryCheck(store, path, options, tally)
    tally.skipped_what = "bank items"
    questions = [q for q in bank.questions if check.keep(bank.lines[q["question_id"]], q["query_id"])]
    bank.questions = questions
    name = options.bank_name or _stem(path)
    first = {}
    for q in questions:
        first.setdefault(q["query_id"], bank.lines.get(q["question_id"]))
    texts = [(first.get(q), (q, t)) for q, t in bank.query_texts.items() if not check.known or q in check.known]
    (store.corpus.fill_query_texts if options.keep_query_texts else store.corpus.upsert_queries)(guard.track(texts))
    try:
        added = store.banks.add_bank_version(name, bank.version, str(path), bank.info or None, questions,
                                       replace=options.replace, replaced=guard.replaced_questions)
    except IdConflict as exc:
        raise InputError(str(path), bank.lines.get(exc.question_id), exc.template, params=exc.params) from None
    tally.bank = f"{name}@{bank.version}" + ("" if added else " (this version was already stored)")
    return {"questions": sum(q["kind"] == "question" for q in questions),
            "nuggets": sum(q["kind"] == "nugget" for q in questions),
            "queries": len({q["query_id"] for q in questions})}


def import_responses(store: Store, path: Path, options: ImportOptions, tally: Tally, guard: Guard) -> Counts:
    """Generated responses, cut into passages kept as the system's ranking."""
    read = read_responses(path, options.response_format, word_budget=options.word_budget, on_error=options.on_error)
    tally.skipped_records.extend(read.skipped)
    check = QueryCheck(store, path, options, tally)
    kept = [r for r in read.responses if check.keep(r.line, r.query_id)]
    _refuse_merging_responses(store, path, kept, options.replace, tally)
    differ = store.corpus.fill_query_texts((r.query_id, r.query_text) for r in kept)
    if differ:  # a RAG record's topic or narrative is context, not the query: the store's text stays
        tally.notes.append(f"{path}: {differ} queries carry another text than the store's (a topic or narrative); "
                            "the store's query texts are kept")
    for r in kept:
        guard.line = r.line
        store.corpus.upsert_passages((s.passage_id, s.text) for s in r.segments)
        store.corpus.upsert_rankings((r.run, r.query_id, s.passage_id, s.position + 1, float(-s.position))
                              for s in r.segments)
        store.corpus.upsert_segments((s.passage_id, r.run, r.query_id, s.position, s.citations, r.truncated)
                              for s in r.segments)
    return {"responses": len(kept), "runs": len({r.run for r in kept}),
            "passages": sum(len(r.segments) for r in kept), "truncated": sum(r.truncated for r in kept)}


def _refuse_merging_responses(store: Store, path: Path, responses: list[Response], replace: bool,
                              tally: Tally) -> None:
    """Generated responses never merge into what the store holds: not into a retrieval run of the same name,
    and not into a different response of the same run to the same query (importing the same responses
    again changes nothing; under `replace` the stored response is removed first, counted)."""
    segments = store.corpus.segments()
    stored: dict[tuple[str, str], dict[str, dict]] = {}
    for pid, segment in segments.items():
        stored.setdefault((segment["run"], segment["query_id"]), {})[pid] = segment
    retrieval = set(store.corpus.runs()) - {run for run, _ in stored}
    texts: dict[str, str | None] | None = None
    for r in responses:
        if r.run in retrieval:
            raise InputError(str(path), r.line, f"run {r.run!r} is already in the store as a retrieval run; give the "
                             "generated responses a run id of their own (they would be merged into it)")
        before = stored.get((r.run, r.query_id))
        if not before:
            continue
        texts = store.corpus.passage_texts() if texts is None else texts
        now = {s.passage_id: (s.position, s.citations, r.truncated, s.text) for s in r.segments}
        then = {pid: (seg["position"], seg["citations"], seg["truncated"], texts.get(pid))
                for pid, seg in before.items()}
        if now != then and replace:
            store.corpus.delete_response(r.run, r.query_id)
            tally.replaced["responses"] = tally.replaced.get("responses", 0) + 1
        elif now != then:
            raise InputError(str(path), r.line, f"run {r.run!r} already holds a different response to query "
                             f"{r.query_id!r} (imported before); give the new responses a run id of their own, or "
                             "pass {replace} to replace it", params=("replace",))


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".jsonl", ".json", ".yaml", ".yml"):
        name = name.removesuffix(suffix)
    return name
