"""Nothing in the store is silently replaced (`Store.imports`): the import log, the guard that refuses an
import contradicting what the store holds, and grades set aside when a text they were made from is replaced.

The guard is one set of temporary triggers for every import kind: an upsert that would change a stored value
(another text, score, rank, judgment or grade for the same key) fires a BEFORE UPDATE trigger that records the
change through a Python function and aborts the statement; the importer names the file's line it was writing.
Writes that change nothing fire nothing, so the guard costs nothing on the bulk path (millions of new grades are
inserts, and an identical file again updates no row). Under `--replace` the triggers only record what changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from proctor.errors import text_difference
from proctor.store.repository import Facade, Repository, now

GUARDED: dict[str, tuple[tuple[str, ...], tuple[str, ...], str, str]] = {
    "queries": (("query_id",), ("text",), "OLD.text IS NOT NULL", "origin"),
    "passages": (("passage_id",), ("text",), "OLD.text IS NOT NULL", "origin"),
    "rankings": (("run", "query_id", "passage_id"), ("rank", "score"), "1", "origin"),
    "judgments": (("query_id", "passage_id"), ("relevance",), "1", "origin"),
    "grades": (("series", "query_id", "passage_id", "item"), ("grade", "parse_status", "raw_reply"), "1", "batch"),
}
"""Per guarded table: key columns, the values shown, when an update replaces stored content (filling a missing
text does not), and the column naming where the stored row came from."""

_FUNCTION = "proctor_changed"


@dataclass
class Change:
    """One stored row an import would change (refused) or changed (`--replace`)."""

    table: str
    key: tuple
    old: tuple
    new: tuple
    origin: int | None
    line: int | None


@dataclass
class Guard:
    """What an import changed, and the change it was refused for; `line` is the file's line being written."""

    replace: bool
    line: int | None = None
    refused: Change | None = None
    changes: list[Change] = field(default_factory=list)
    replaced_questions: set[str] = field(default_factory=set)
    """Question ids whose text a bank import replaced (`--replace`)."""
    staled: set[tuple[str, str]] = field(default_factory=set)
    """(column, id) whose grades were set aside already."""

    def track(self, rows: Iterable[tuple[int, Any]]) -> Iterator[Any]:
        """The rows of `(line, row)` pairs, noting each row's line as the store consumes it."""
        for line, row in rows:
            self.line = line
            yield row

    def replaced(self) -> dict[str, int]:
        """`{table: rows replaced}` (a missing text filled in replaces nothing)."""
        counts: dict[str, int] = {}
        for change in self.changes:
            if change.old[0] is not None or change.table not in ("queries", "passages"):
                counts[change.table] = counts.get(change.table, 0) + 1
        return counts

    def replaced_ids(self, table: str) -> set[str]:
        """Ids of the queries or passages whose stored text this import replaced."""
        return {c.key[0] for c in self.changes if c.table == table and c.old[0] is not None}

    def _record(self, table: str, refuse: int, key: str, old: str, new: str, origin: int | None) -> None:
        change = Change(table, tuple(json.loads(key)), tuple(json.loads(old)), tuple(json.loads(new)), origin,
                        self.line)
        if refuse:
            self.refused = change
        else:
            self.changes.append(change)


class ImportRepository(Repository):
    """The `imports` and `import_log` tables, the guard and `stale_grades`."""

    def __init__(self, store: Facade) -> None:
        super().__init__(store)
        self.command_entries: frozenset[int] = frozenset()
        """The import log entries of the command under way (their rows go in, or not, with it)."""

    def record_import(self, kind: str, sha256: str, path: str) -> None:
        """Remember that a file was imported (the same file twice is remembered once)."""
        self.db.execute("INSERT OR IGNORE INTO imports VALUES (?, ?, ?, ?)", (kind, sha256, str(path), now()))

    def was_imported(self, kind: str, sha256: str) -> bool:
        """Whether a file with this content was imported as `kind` before."""
        row = self.db.execute("SELECT 1 FROM imports WHERE kind = ? AND sha256 = ?", (kind, sha256)).fetchone()
        return row is not None

    def begin_import(self, kind: str, path: str, sha256: str, at: str) -> int:
        """Add an entry to the import log (its counts come with `finish_import`); returns its number."""
        sql = "INSERT INTO import_log (kind, path, sha256, imported_at) VALUES (?, ?, ?, ?)"
        entry: int = self.db.execute(sql, (kind, path, sha256, at)).lastrowid  # type: ignore[assignment]
        self.command_entries = self.command_entries | {entry}
        return entry

    def finish_import(self, entry: int, counts: dict[str, int], replaced: dict[str, int] | None, *,
                      changed: bool, sha256: str | None = None) -> None:
        """Record what an import read and what it replaced (and the file's digest, when it comes at the end); an
        import that changed nothing leaves no entry."""
        if not changed:
            self.db.execute("DELETE FROM import_log WHERE entry = ?", (entry,))
            return
        self.db.execute("UPDATE import_log SET counts = ?, replaced = ?, sha256 = COALESCE(?, sha256) WHERE entry = ?",
                        (json.dumps(counts), json.dumps(replaced) if replaced else None, sha256, entry))

    def import_log(self) -> list[dict[str, Any]]:
        """Every entry of the import log, oldest first."""
        rows = self.db.execute("SELECT entry, kind, path, sha256, imported_at, counts, replaced FROM import_log"
                               " ORDER BY entry")
        return [{"entry": e, "kind": k, "path": p, "sha256": s, "imported_at": t,
                 "counts": json.loads(c) if c else {}, "replaced": json.loads(r) if r else {}}
                for e, k, p, s, t, c, r in rows]

    def origin_of(self, change: Change) -> str:
        """Where a stored row came from, in words (the import that wrote it)."""
        if change.origin is None:
            return "an import before the store kept an import log"
        if change.table == "grades":  # the batch's import: an exam_pp entry of its time, never the one running now
            row = self.db.execute("SELECT created FROM grade_batches WHERE batch = ?", (change.origin,)).fetchone()
            running = self._store.origin  # the refused import's own entry, begun in the batch's second maybe
            entry = self.db.execute("SELECT kind, path, imported_at FROM import_log WHERE imported_at = ?"
                                    " AND kind = 'exampp' AND entry IS NOT ? ORDER BY entry DESC",
                                    (row[0], running)).fetchone() if row else None
            return _entry_words(entry) if entry else f"graded at {row[0] if row else '?'}"
        return self.origin_words(change.origin)

    def origin_words(self, origin: int | None) -> str:
        """The import log entry `origin` in words."""
        if origin is None:
            return "an import before the store kept an import log"
        entry = self.db.execute("SELECT kind, path, imported_at FROM import_log WHERE entry = ?", (origin,)).fetchone()
        same = ", a file given earlier in this same command" if origin in self.command_entries else ""
        return (_entry_words(entry) if entry else f"import #{origin}") + same

    def describe(self, change: Change) -> str:
        """A change in words: what row, what the store holds (and where it came from), what the file has."""
        keys, values = GUARDED[change.table][:2]
        key = dict(zip(keys, change.key, strict=True))
        if change.table == "grades":
            series = self.db.execute("SELECT grade_set_id, step FROM grade_series WHERE series = ?",
                                     (key.pop("series"),)).fetchone()
            item = self.db.execute("SELECT question_id FROM grade_items WHERE item = ?", (key.pop("item"),)).fetchone()
            key = {"grade set": f"{series[0]} step {series[1]}", **key, "question_id": item[0]}
        what = ", ".join(f"{k} {v!r}" for k, v in key.items())
        old = ", ".join(f"{v} {_short(x)}" for v, x in zip(values, change.old, strict=True))
        new = ", ".join(f"{v} {_short(x)}" for v, x in zip(values, change.new, strict=True))
        differ = ""
        if change.table in ("queries", "passages") and isinstance(change.old[0], str) and \
                isinstance(change.new[0], str):
            differ = f" ({text_difference(change.old[0], change.new[0])})"
        return f"{change.table[:-1].replace('querie', 'query')} ({what}): the store holds {old} (from " \
               f"{self.origin_of(change)}), this file has {new}{differ}"

    @contextmanager
    def guarded(self, replace: bool) -> Iterator[Guard]:
        """A `Guard` over every content table for the writes inside (which must be in a transaction)."""
        guard = Guard(replace)
        self.db.create_function(_FUNCTION, 6, guard._record)
        names = []
        for table, (keys, values, replaces, origin) in GUARDED.items():
            args = ", ".join([*(f"json_array({', '.join(row + c for c in columns)})" for row, columns in
                                (("OLD.", keys), ("OLD.", values), ("NEW.", values))), f"OLD.{origin}"])
            if not replace:
                names.append(f"proctor_refuse_{table}")
                self.db.execute(f"CREATE TEMP TRIGGER {names[-1]} BEFORE UPDATE ON main.{table} WHEN {replaces} BEGIN"
                                f" SELECT {_FUNCTION}('{table}', 1, {args});"
                                " SELECT RAISE(ABORT, 'proctor: the import contradicts the store'); END")
            names.append(f"proctor_record_{table}")
            self.db.execute(f"CREATE TEMP TRIGGER {names[-1]} AFTER UPDATE ON main.{table} BEGIN"
                            f" SELECT {_FUNCTION}('{table}', 0, {args}); END")
        try:
            yield guard
        finally:
            for name in names:
                self.db.execute(f"DROP TRIGGER IF EXISTS temp.{name}")

    def stale_grades_of(self, column: str, ids: set[str], why: str, at: str) -> int:
        """Move the grades whose `column` (passage_id, query_id or question_id) is one of `ids` to `stale_grades`
        (in the caller's transaction; the triggers on `grades` drop the kept labels and counts). Returns how many
        moved."""
        if not ids:
            return 0
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS stale_keys (id TEXT PRIMARY KEY)")
        self.db.execute("DELETE FROM temp.stale_keys")
        self.db.executemany("INSERT OR IGNORE INTO temp.stale_keys VALUES (?)", ((i,) for i in ids))
        which = ("item IN (SELECT item FROM grade_items WHERE question_id IN (SELECT id FROM temp.stale_keys))"
                 if column == "question_id" else f"{column} IN (SELECT id FROM temp.stale_keys)")
        moved = self.db.execute(f"INSERT INTO stale_grades SELECT *, ?, ? FROM grades WHERE {which}",
                                (why, at)).rowcount
        self.db.execute(f"DELETE FROM grades WHERE {which}")
        return moved

    def stale_mark(self) -> int:
        """The last row of `stale_grades` now (the rows after it are set aside later)."""
        return self.db.execute("SELECT COALESCE(MAX(rowid), 0) FROM stale_grades").fetchone()[0]

    def revived_grade(self, batch: int, mark: int) -> tuple[str, str, str, str, str] | None:
        """A grade written in `batch` whose key was set aside as stale (in a row up to `mark`): its grade set,
        query, passage, question and why it went stale; None when there is none."""
        return self.db.execute(
            "SELECT s.grade_set_id, g.query_id, g.passage_id, i.question_id, st.why FROM stale_grades st JOIN grades g"
            " ON g.series = st.series AND g.query_id = st.query_id AND g.passage_id = st.passage_id"
            " AND g.item = st.item JOIN grade_series s ON s.series = g.series JOIN grade_items i ON i.item = g.item"
            " WHERE st.rowid <= ? AND g.batch = ? LIMIT 1", (mark, batch)).fetchone()

    def forget_revived(self, batch: int, mark: int) -> int:
        """Drop the stale rows (up to `mark`) whose grade `batch` wrote again (`--replace`); returns how many."""
        return self.db.execute(
            "DELETE FROM stale_grades WHERE rowid <= ? AND EXISTS (SELECT 1 FROM grades g WHERE g.batch = ? AND"
            " g.series = stale_grades.series AND g.query_id = stale_grades.query_id AND g.passage_id ="
            " stale_grades.passage_id AND g.item = stale_grades.item)", (mark, batch)).rowcount

    def stale_counts(self) -> dict[str, dict[str, int]]:
        """`{grade_set_id: {why: n}}` of the grades set aside as stale."""
        out: dict[str, dict[str, int]] = {}
        for gid, why, n in self.db.execute(
                "SELECT s.grade_set_id, g.why, COUNT(*) FROM stale_grades g JOIN grade_series s USING (series)"
                " GROUP BY s.grade_set_id, g.why ORDER BY s.grade_set_id, g.why"):
            out.setdefault(gid, {})[why] = n
        return out


def _entry_words(entry: tuple[str, str, str]) -> str:
    kind, path, at = entry
    return f"`import {kind} {path}` at {at}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "...'"


__all__ = ["GUARDED", "Change", "Guard", "ImportRepository"]

