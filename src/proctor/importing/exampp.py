"""The exam_pp importer: every line's passages, judgments, rankings and grades into the store, read in a
background process (`io.background`) while this process writes."""

from __future__ import annotations

from itertools import groupby
from operator import itemgetter
from pathlib import Path

from proctor.import_checks import named_grade_set, refuse_lone_ensembles, refuse_non_members, refuse_revived, set_stale
from proctor.importing.kinds import Counts, QueryCheck, generated_runs, refuse_generated_runs
from proctor.importing.report import Tally
from proctor.io.background import in_background
from proctor.io.banks import is_spurious
from proctor.io.exampp import ExamppQuery, read_exampp
from proctor.io.exampp_rows import Blocks, rows_of
from proctor.options.inputs import ImportOptions
from proctor.records import GradeSet
from proctor.store import Store
from proctor.store.integrity import Guard


def _size(path: Path) -> int:
    """The file's size in bytes (0 when it is no file: the reader reports that)."""
    return path.stat().st_size if path.is_file() else 0


_RANK_ORDER, _RUN_QUERY, _PASSAGE, _FIRST = itemgetter(0, 1, 4, 2), itemgetter(0, 1), itemgetter(2), itemgetter(0)


class _RankedLists:
    """The ranked lists of the runs new to the store, made from the rankings as they are written, in trec_eval
    order (`ORDER BY score DESC, passage_id DESC`, what `store.caches` ranks by), so that the import keeps them
    without reading every ranking back. A (run, query) ranked on two lines leaves its run to the store's own
    filling (rare: a query given on several lines)."""

    def __init__(self, stored: set[str]) -> None:
        self.stored = stored
        self.lists: dict[str, dict[str, list[str]]] = {}
        self.merged: set[str] = set()
        self.written: set[str] = set()
        """The runs whose stored rankings a line changed (their kept lists are dropped: `ranked_triggers_held`)."""

    def write(self, store: Store, rankings: list[tuple[str, str, str, int, float]]) -> None:
        """Write one line's rankings (noting the runs of a line that changed any) and rank them."""
        before = store.db.total_changes
        ordered = sorted(rankings, key=_RANK_ORDER, reverse=True)  # grouped by run and query: fewer busy pages
        store.corpus.upsert_rankings(rankings, sorted_rows=ordered)
        if store.db.total_changes != before:
            self.written.update(map(_FIRST, rankings))
        self._add(ordered)

    def _add(self, ordered: list[tuple[str, str, str, int, float]]) -> None:
        """Rank one line's (run, query, passage, rank, score) rows, sorted by run and query, then score and passage
        descending."""
        for (run, query_id), ranked in groupby(ordered, _RUN_QUERY):
            if run in self.stored:
                continue
            lists = self.lists.setdefault(run, {})
            if query_id in lists:
                self.merged.add(run)
            lists[query_id] = list(map(_PASSAGE, ranked))

    def keep(self, store: Store) -> None:
        """Keep the lists of every new run (the others are filled by `keep_for_leaderboards`)."""
        store.caches.keep_ranked_lists({run: lists for run, lists in self.lists.items() if run not in self.merged})


def _new_passages(query: ExamppQuery) -> list[tuple[str, str | None]]:
    """The line's passages less those an earlier line wrote with the same text (their upsert would change nothing,
    and one key the store holds sends the line's whole batch through the upsert: `insert_new_first`)."""
    if not query.given_before:
        return query.passages
    before = set(query.given_before)
    return [passage for passage in query.passages if passage[0] not in before]


def _record_grade_sets(store: Store, path: Path, query: ExamppQuery, grades_bank: str | None,
                       bank: tuple[str, str] | None, sets: dict[tuple[str, str, str], str],
                       first: dict[str, int]) -> None:
    """Record the grade sets a line's grades go to that no earlier line named (into `sets`: key → grade set id;
    `first`: a named grade set's first line)."""
    for key, info in query.configs.items():
        if key not in sets:
            grade_set = GradeSet(*key, bank[0] if bank else None, bank[1] if bank else None, {"source": "exampp"},
                                 key[0], info)
            sets[key] = store.grades.ensure_grade_set(grade_set)
    for key, named in query.grade_sets.items():
        if key not in sets:
            sets[key] = named_grade_set(store, path, query.line, named, grades_bank)
            first.setdefault(sets[key], query.line)


def import_exampp(store: Store, path: Path, options: ImportOptions, tally: Tally, guard: Guard) -> Counts:
    """An exam_pp file, line by line (read in a background process when large): passages, judgments, rankings
    and grades, written as they come; its grade sets recorded (`--bank` checks their questions)."""
    counts = dict.fromkeys(("queries", "passages", "query-passage pairs", "judgments", "rankings", "grades"), 0)
    runs: set[str] = set()
    passages: set[str] = set()
    bank = store.banks.bank_version(options.grades_bank) if options.grades_bank else None
    members = {q["question_id"] for q in store.banks.bank_questions(*bank) if not is_spurious(q)} if bank else None
    sets: dict[tuple[str, str, str], str] = {}
    check = QueryCheck(store, path, options, tally)
    generated = generated_runs(store)
    queries = in_background(lambda: read_exampp(path, with_grades=options.with_grades), size=_size(path),
                            started=tally.reading)
    mark, lines, first = store.imports.stale_mark(), {}, {}  # first: a named grade set's first line
    ranked, skipped = _RankedLists(set(store.corpus.runs())), False
    with store.grades.grade_import(tally.imported_at) as grades, store.caches.ranked_triggers_held(ranked.written):
        for query in queries:
            if not check.keep(query.line, query.query_id):
                skipped = True  # its passages were not written: a later line's repeat of one is, from now on
                continue
            lines[query.query_id] = query.line
            guard.line = query.line
            refuse_generated_runs(path, dict.fromkeys(map(_FIRST, query.rankings), query.line), generated)
            store.corpus.upsert_queries([(query.query_id, None)])
            store.corpus.upsert_passages(_new_passages(query) if not skipped else query.passages)
            set_stale(store, guard, tally)
            store.corpus.upsert_judgments(query.judgments)
            ranked.write(store, query.rankings)
            _record_grade_sets(store, path, query, options.grades_bank, bank, sets, first)
            for key, rows in query.grade_rows.items():
                if members is not None:
                    refuse_non_members(path, query.line, {row[2] for row in rows_of(query.query_id, rows)}, members,
                                       options.grades_bank)
                if type(rows) is Blocks:
                    grades.write_blocks(sets[key], key[0], query.query_id, rows)
                    counts["grades"] += rows.size()
                else:
                    grades.write(sets[key], key[0], rows)
                    counts["grades"] += len(rows)
            counts["queries"] += 1
            counts["query-passage pairs"] += len(query.passages)
            passages.update(map(_FIRST, query.passages))
            counts["judgments"] += len(query.judgments)
            counts["rankings"] += len(query.rankings)
            runs.update(map(_FIRST, query.rankings))
    tally.bookkeeping += grades.bookkeeping
    ranked.keep(store)
    refuse_lone_ensembles(store, path, sets, first)
    if grades.batch is not None and not options.replace:
        refuse_revived(path, store.imports.revived_grade(grades.batch, mark), lines)
    elif grades.batch is not None and (revived := store.imports.forget_revived(grades.batch, mark)):
        tally.replaced["stale grades made valid again"] = revived
    counts["passages"] = len(passages)
    counts["runs"] = len(runs)
    if not options.with_grades:
        del counts["grades"]
    else:
        counts["grade sets"] = len(sets)
    return counts
