"""Import files into the store: one function per kind, each inside one transaction.

Unknown query ids (rankings, judgments or questions for a query the store does not know, once it knows
some) are errors naming the file and line, unless the caller asks to skip them; skipped lines are counted.

Nothing stored is silently replaced (`store.integrity`): a file that contradicts the store (another text, score,
judgment or grade for the same key; a run that exists with other rankings) is refused naming its line, what the
store holds and which import wrote it, unless `replace` is asked; then what it replaced is counted, logged, and
the grades made from a replaced text are set aside as stale (graded again by the next `grade`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from proctor.errors import InputError, UsageError
from proctor.import_checks import (
    compare_runs,
    named_grade_set,
    note_unjudgeable,
    refuse_lone_ensembles,
    refuse_non_members,
    refuse_revived,
    set_stale,
)
from proctor.io.background import in_background
from proctor.io.bank_files import load_bank
from proctor.io.banks import is_spurious
from proctor.io.corpus import read_corpus
from proctor.io.exampp import read_exampp
from proctor.io.queries import read_queries
from proctor.io.responses import Response, read_responses
from proctor.io.trec import read_qrels, read_run
from proctor.options.inputs import ImportOptions
from proctor.records import GradeSet
from proctor.store import Store, now
from proctor.store.banks import IdConflict
from proctor.store.integrity import Guard

KINDS = ("queries", "runs", "qrels", "corpus", "bank", "exampp", "responses")


@dataclass
class ImportReport:
    """What one import added (counts of items read) and what it skipped."""

    kind: str
    path: str
    counts: dict[str, int] = field(default_factory=dict)
    skipped_unknown_queries: int = 0
    skipped_what: str = "lines"
    """What `skipped_unknown_queries` counts: lines, or a bank's items (several to a line)."""
    skipped_records: list[InputError] = field(default_factory=list)
    unchanged: bool = False
    bank: str | None = None
    imported_at: str = ""
    replaced: dict[str, int] = field(default_factory=dict)
    """What `--replace` replaced: rows per table, and the grades that became stale."""
    bookkeeping: int = 0
    """Changes the import made and undid (not a change of the store)."""
    notes: list[str] = field(default_factory=list)
    """What the reader merged or noticed (printed before the summary)."""

    def summary(self) -> str:
        """One line for the terminal."""
        parts = ", ".join(f"{n} {what}" for what, n in self.counts.items())
        skipped = self.skipped_unknown_queries
        extra = f"; skipped {skipped} {self.skipped_what} of unknown queries" if skipped else ""
        if self.skipped_records:
            extra += f"; skipped {len(self.skipped_records)} malformed records"
        if self.bank:
            extra += f"; bank {self.bank}"
        if self.replaced:
            extra += "; replaced " + ", ".join(f"{n} {what}" for what, n in self.replaced.items())
        same = " (already imported: nothing changed)" if self.unchanged else ""
        return f"{self.path}: {self.kind}: {parts}{extra}{same}"

    formats: ClassVar[tuple[str, ...]] = ("text", "json")
    """The formats `render` writes, the default first."""

    def to_json(self) -> dict[str, Any]:
        """The counts, skips (each record's message), notes and the summary line as plain JSON data."""
        return {"kind": self.kind, "path": self.path, "counts": dict(self.counts),
                "skipped_unknown_queries": self.skipped_unknown_queries, "skipped_what": self.skipped_what,
                "skipped_records": [str(problem) for problem in self.skipped_records], "unchanged": self.unchanged,
                "bank": self.bank, "imported_at": self.imported_at, "replaced": dict(self.replaced),
                "bookkeeping": self.bookkeeping, "notes": list(self.notes), "summary": self.summary()}

    def render(self, fmt: str | None = None) -> str:
        """`text` (what `proctor import` prints: skipped records, notes, the summary line) or `json`."""
        if fmt == "json":
            return json.dumps(self.to_json(), indent=2) + "\n"
        if fmt not in (None, "text"):
            raise UsageError(f"unknown format {fmt!r}: {', '.join(self.formats)}")
        lines = [f"skipped: {problem}" for problem in self.skipped_records] + self.notes + [self.summary()]
        return "\n".join(lines) + "\n"


def import_files(
    store: Store, kind: str, paths: list[str | Path], options: ImportOptions | None = None
) -> list[ImportReport]:
    """Import files of `kind` in one transaction: on any error the store is left unchanged."""
    if kind not in _IMPORTERS:
        raise UsageError(f"unknown import kind {kind!r}; choose one of {', '.join(KINDS)}")
    options = options or ImportOptions()
    store.imports.command_entries = frozenset()
    with store.bulk_transaction():
        reports = [_import_one(store, kind, path, options) for path in map(Path, paths)]
        store.tallies.grade_counts()  # counted once here, inside the import, so that readers find them kept
        if kind == "exampp":  # and what a leaderboard reads: the first one after a large import reads kept rows
            store.caches.keep_for_leaderboards()
    return reports


def _import_one(store: Store, kind: str, path: Path, options: ImportOptions) -> ImportReport:
    """Import one file under the guard (inside the caller's transaction); log it when it changed anything."""
    report = ImportReport(kind, str(path), imported_at=now())
    digest = _sha256(path) if path.exists() else ""
    entry = store.imports.begin_import(kind, str(path), digest, report.imported_at)
    before = store.db.total_changes
    store.origin = entry
    try:
        with store.imports.guarded(options.replace) as guard:
            try:
                _IMPORTERS[kind](store, path, options, report, guard)
            except sqlite3.IntegrityError:
                if guard.refused is None:
                    raise
                stale = (" (the grades made from a replaced text become stale)"
                         if guard.refused.table in ("queries", "passages") else "")
                raise InputError(str(path), guard.refused.line,
                                 f"{store.imports.describe(guard.refused)}; importing it "
                                 f"would replace what the store holds: pass {{replace}} to replace it{stale}",
                                 params=("replace",)) from None
    finally:
        store.origin = None
    set_stale(store, guard, report)
    stale = report.replaced.pop("stale grades", 0)
    for table, n in guard.replaced().items():
        report.replaced[table] = report.replaced.get(table, 0) + n
    if guard.replaced_questions:  # a bank's --replace: the question texts it changed (everywhere they are held)
        report.replaced["questions"] = len(guard.replaced_questions)
    if stale:
        report.replaced["stale grades"] = stale
        report.notes.append(f"{report.path}: {report.replaced['stale grades']} grades were made from a text this "
                            "import replaced: set aside as stale (not counted anywhere; the next `grade` grades "
                            "those pairs again)")
    changed = store.db.total_changes - report.bookkeeping != before
    report.unchanged = not changed
    store.imports.finish_import(entry, report.counts, report.replaced, changed=changed)
    if changed:  # the same content again (gzipped, CRLF, another path) leaves no trace either
        store.imports.record_import(kind, digest, str(path))
    note_unjudgeable(store, report)
    return report


class _QueryCheck:
    """Decides, line by line, whether a query id is known; counts what it skips."""

    def __init__(self, store: Store, path: Path, options: ImportOptions, report: ImportReport) -> None:
        self.known = store.corpus.query_ids()
        self.path, self.skip, self.report = path, options.skip_unknown_queries, report

    def keep(self, line: int, query_id: str) -> bool:
        if not self.known or query_id in self.known:
            return True
        if self.skip:
            self.report.skipped_unknown_queries += 1
            return False
        raise InputError(str(self.path), line,
                         f"unknown query id {query_id!r} (the store knows {len(self.known)} queries; "
                         "import them first, or pass {skip_unknown_queries})", params=("skip_unknown_queries",))


def _import_queries(store: Store, path: Path, options: ImportOptions, report: ImportReport, guard: Guard) -> None:
    rows = read_queries(path)
    store.corpus.upsert_queries(guard.track((line, (qid, text)) for line, qid, text in rows))
    report.counts["queries"] = len(rows)


def _generated_runs(store: Store) -> set[str]:
    return {segment["run"] for segment in store.corpus.segments().values()}


def _refuse_generated_runs(path: Path, runs: dict[str, int], generated: set[str]) -> None:
    """Rankings of a retrieval run may not go into a run of generated responses (`{run: line}`)."""
    for run, line in runs.items():
        if run in generated:
            raise InputError(str(path), line, f"run {run!r} is already in the store as generated responses; give "
                             "the retrieval run a name of its own (its rankings would be merged into them)")


def _import_runs(store: Store, path: Path, options: ImportOptions, report: ImportReport, guard: Guard) -> None:
    check = _QueryCheck(store, path, options, report)
    lines = [r for r in read_run(path) if check.keep(r.line, r.query_id)]
    _refuse_generated_runs(path, {r.run: r.line for r in reversed(lines)}, _generated_runs(store))
    compare_runs(store, path, lines, options.replace, report)
    store.corpus.upsert_rankings(guard.track((r.line, (r.run, r.query_id, r.passage_id, r.rank,
                                                       r.score)) for r in lines))
    store.corpus.upsert_passages((r.passage_id, None) for r in lines)
    report.counts["runs"] = len({r.run for r in lines})
    report.counts["rankings"] = len(lines)


def _import_qrels(store: Store, path: Path, options: ImportOptions, report: ImportReport, guard: Guard) -> None:
    check = _QueryCheck(store, path, options, report)
    lines = [(line, (qid, pid, rel)) for line, qid, pid, rel in read_qrels(path) if check.keep(line, qid)]
    rows = [row for _, row in lines]
    store.corpus.upsert_judgments(guard.track(lines))
    store.corpus.upsert_passages((pid, None) for _, pid, _ in rows)
    report.counts["judgments"] = len(rows)


def _import_corpus(store: Store, path: Path, options: ImportOptions, report: ImportReport, guard: Guard) -> None:
    rows = read_corpus(path)
    store.corpus.upsert_passages(guard.track((line, (pid, text)) for line, pid, text in rows))
    report.counts["passages"] = len(rows)


def _import_bank(store: Store, path: Path, options: ImportOptions, report: ImportReport, guard: Guard) -> None:
    bank = load_bank(path, options.on_error)
    report.skipped_records.extend(bank.skipped)
    report.notes.extend(bank.notes)
    check = _QueryCheck(store, path, options, report)
    report.skipped_what = "bank items"
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
    report.bank = f"{name}@{bank.version}" + ("" if added else " (this version was already stored)")
    report.counts["questions"] = sum(q["kind"] == "question" for q in questions)
    report.counts["nuggets"] = sum(q["kind"] == "nugget" for q in questions)
    report.counts["queries"] = len({q["query_id"] for q in questions})


def _size(path: Path) -> int:
    """The file's size in bytes (0 when it is no file: the reader reports that)."""
    return path.stat().st_size if path.is_file() else 0


def _import_exampp(store: Store, path: Path, options: ImportOptions, report: ImportReport, guard: Guard) -> None:
    counts = dict.fromkeys(("queries", "passages", "query-passage pairs", "judgments", "rankings", "grades"), 0)
    runs: set[str] = set()
    passages: set[str] = set()
    bank = store.banks.bank_version(options.grades_bank) if options.grades_bank else None
    members = {q["question_id"] for q in store.banks.bank_questions(*bank) if not is_spurious(q)} if bank else None
    sets: dict[tuple[str, str, str], str] = {}
    check = _QueryCheck(store, path, options, report)
    generated = _generated_runs(store)
    queries = in_background(lambda: read_exampp(path, with_grades=options.with_grades), size=_size(path))
    mark, lines, first = store.imports.stale_mark(), {}, {}  # first: a named grade set's first line
    with store.grades.grade_import(report.imported_at) as grades:
        for query in queries:
            if not check.keep(query.line, query.query_id):
                continue
            lines[query.query_id] = query.line
            guard.line = query.line
            _refuse_generated_runs(path, {r[0]: query.line for r in query.rankings}, generated)
            store.corpus.upsert_queries([(query.query_id, None)])
            store.corpus.upsert_passages(query.passages)
            set_stale(store, guard, report)
            store.corpus.upsert_judgments(query.judgments)
            store.corpus.upsert_rankings(query.rankings)
            for key, info in query.configs.items():
                if key not in sets:
                    grade_set = GradeSet(*key, bank[0] if bank else None, bank[1] if bank else None,
                                         {"source": "exampp"}, key[0], info)
                    sets[key] = store.grades.ensure_grade_set(grade_set)
            for key, named in query.grade_sets.items():
                if key not in sets:
                    sets[key] = named_grade_set(store, path, query.line, named, options.grades_bank)
                    first.setdefault(sets[key], query.line)
            for key, rows in query.grade_rows.items():
                if members is not None:
                    refuse_non_members(path, query.line, {row[2] for row in rows}, members, options.grades_bank)
                grades.write(sets[key], key[0], rows)
                counts["grades"] += len(rows)
            counts["queries"] += 1
            counts["query-passage pairs"] += len(query.passages)
            passages.update(pid for pid, _ in query.passages)
            counts["judgments"] += len(query.judgments)
            counts["rankings"] += len(query.rankings)
            runs.update(r[0] for r in query.rankings)
    report.bookkeeping += grades.bookkeeping
    refuse_lone_ensembles(store, path, sets, first)
    if grades.batch is not None and not options.replace:
        refuse_revived(path, store.imports.revived_grade(grades.batch, mark), lines)
    elif grades.batch is not None and (revived := store.imports.forget_revived(grades.batch, mark)):
        report.replaced["stale grades made valid again"] = revived
    counts["passages"] = len(passages)
    counts["runs"] = len(runs)
    if not options.with_grades:
        del counts["grades"]
    else:
        counts["grade sets"] = len(sets)
    report.counts.update(counts)


def _import_responses(store: Store, path: Path, options: ImportOptions, report: ImportReport, guard: Guard) -> None:
    read = read_responses(path, options.response_format, word_budget=options.word_budget, on_error=options.on_error)
    report.skipped_records.extend(read.skipped)
    check = _QueryCheck(store, path, options, report)
    kept = [r for r in read.responses if check.keep(r.line, r.query_id)]
    _refuse_merging_responses(store, path, kept, options.replace, report)
    differ = store.corpus.fill_query_texts((r.query_id, r.query_text) for r in kept)
    if differ:  # a RAG record's topic or narrative is context, not the query: the store's text stays
        report.notes.append(f"{path}: {differ} queries carry another text than the store's (a topic or narrative); "
                            "the store's query texts are kept")
    for r in kept:
        guard.line = r.line
        store.corpus.upsert_passages((s.passage_id, s.text) for s in r.segments)
        store.corpus.upsert_rankings((r.run, r.query_id, s.passage_id, s.position + 1, float(-s.position))
                              for s in r.segments)
        store.corpus.upsert_segments((s.passage_id, r.run, r.query_id, s.position, s.citations, r.truncated)
                              for s in r.segments)
    report.counts["responses"] = len(kept)
    report.counts["runs"] = len({r.run for r in kept})
    report.counts["passages"] = sum(len(r.segments) for r in kept)
    report.counts["truncated"] = sum(r.truncated for r in kept)


def _refuse_merging_responses(store: Store, path: Path, responses: list[Response], replace: bool,
                              report: ImportReport) -> None:
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
            report.replaced["responses"] = report.replaced.get("responses", 0) + 1
        elif now != then:
            raise InputError(str(path), r.line, f"run {r.run!r} already holds a different response to query "
                             f"{r.query_id!r} (imported before); give the new responses a run id of their own, or "
                             "pass {replace} to replace it", params=("replace",))


_IMPORTERS: dict[str, Callable[[Store, Path, ImportOptions, ImportReport, Guard], None]] = {
    "queries": _import_queries,
    "runs": _import_runs,
    "qrels": _import_qrels,
    "corpus": _import_corpus,
    "bank": _import_bank,
    "exampp": _import_exampp,
    "responses": _import_responses,
}


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".jsonl", ".json", ".yaml", ".yml"):
        name = name.removesuffix(suffix)
    return name


def _sha256(path: Path) -> str:
    """Digest of a file's bytes, or of a folder's file names and bytes."""
    digest = hashlib.sha256()
    files = sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            digest.update(str(file.relative_to(path)).encode() + b"\0")
        with open(file, "rb") as handle:
            for block in iter(lambda h=handle: h.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()
