"""The SQLite store (one file, WAL): schema, idempotent upserts, and the queries the rest of Proctor needs.

Every import runs in one transaction, so a failed import leaves the store as it was, and every upsert
only writes rows whose content differs, so importing the same file twice changes nothing.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from proctor.errors import UsageError

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS queries (query_id TEXT PRIMARY KEY, text TEXT);
CREATE TABLE IF NOT EXISTS passages (passage_id TEXT PRIMARY KEY, text TEXT);
CREATE TABLE IF NOT EXISTS rankings (
    run TEXT NOT NULL, query_id TEXT NOT NULL, passage_id TEXT NOT NULL,
    rank INTEGER NOT NULL, score REAL NOT NULL,
    PRIMARY KEY (run, query_id, passage_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS judgments (
    query_id TEXT NOT NULL, passage_id TEXT NOT NULL, relevance INTEGER NOT NULL,
    PRIMARY KEY (query_id, passage_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS banks (
    bank_id TEXT PRIMARY KEY, version TEXT NOT NULL, source TEXT, info TEXT);
CREATE TABLE IF NOT EXISTS questions (
    question_id TEXT PRIMARY KEY, bank_id TEXT NOT NULL, query_id TEXT NOT NULL, facet_id TEXT,
    kind TEXT NOT NULL, text TEXT NOT NULL, answers TEXT, info TEXT);
CREATE INDEX IF NOT EXISTS questions_by_query ON questions (query_id);
CREATE TABLE IF NOT EXISTS grade_configs (
    method TEXT NOT NULL, model TEXT NOT NULL, prompt_version TEXT NOT NULL, info TEXT,
    PRIMARY KEY (method, model, prompt_version)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS grades (
    query_id TEXT NOT NULL, passage_id TEXT NOT NULL, question_id TEXT NOT NULL,
    method TEXT NOT NULL, model TEXT NOT NULL, prompt_version TEXT NOT NULL,
    raw_reply TEXT, grade INTEGER, parse_status TEXT NOT NULL, answer TEXT, correct INTEGER,
    extra TEXT, created TEXT NOT NULL,
    PRIMARY KEY (method, model, query_id, passage_id, question_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS response_segments (
    passage_id TEXT PRIMARY KEY, run TEXT NOT NULL, query_id TEXT NOT NULL, position INTEGER NOT NULL,
    citations TEXT, truncated INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS imports (
    kind TEXT NOT NULL, sha256 TEXT NOT NULL, path TEXT NOT NULL, imported_at TEXT NOT NULL,
    PRIMARY KEY (kind, sha256)) WITHOUT ROWID;
"""

FAILED = "failed"
"""The `parse_status` of a grade whose reply could not be turned into a grade."""


def now() -> str:
    """The current UTC time as ISO 8601 (seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Grade:
    """One grade: how well `passage_id` answers `question_id` (empty for direct relevance methods)."""

    query_id: str
    passage_id: str
    question_id: str
    method: str
    model: str
    prompt_version: str
    grade: int | None
    parse_status: str
    raw_reply: str | None = None
    answer: str | None = None
    correct: bool | None = None
    extra: dict[str, Any] | None = None


class Store:
    """A Proctor store: one SQLite file. Use `Store.open` (read) or `Store.create_or_open` (write)."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self.db = connection

    # -- opening -------------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path) -> Store:
        """Open an existing store; a missing file is a usage error (nothing is created)."""
        path = Path(path)
        if not path.is_file():
            raise UsageError(f"{path}: no such store (create one with `proctor import ... --store {path}`)")
        store = cls(path, _connect(path))
        store._check_schema()
        return store

    @classmethod
    def create_or_open(cls, path: str | Path) -> Store:
        """Open a store for writing, creating it (and its schema) if it does not exist."""
        path = Path(path)
        if path.parent and not path.parent.exists():
            raise UsageError(f"{path}: folder {path.parent} does not exist")
        store = cls(path, _connect(path))
        store.db.executescript(SCHEMA)
        store.db.execute(
            "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )
        store._check_schema()
        return store

    def _check_schema(self) -> None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"{self.path}: not a Proctor store ({exc})") from None
        if row is None or int(row[0]) != SCHEMA_VERSION:
            raise UsageError(f"{self.path}: not a Proctor store of schema version {SCHEMA_VERSION}")

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside happen together or not at all."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- writing -------------------------------------------------------------------------------------
    def upsert_queries(self, rows: Iterable[tuple[str, str | None]]) -> None:
        """Add queries; a known query keeps its text unless it had none."""
        self.db.executemany(
            "INSERT INTO queries VALUES (?, ?) ON CONFLICT (query_id) DO UPDATE SET text = excluded.text"
            " WHERE excluded.text IS NOT NULL AND queries.text IS NOT excluded.text",
            rows,
        )

    def upsert_passages(self, rows: Iterable[tuple[str, str | None]]) -> None:
        """Add passages; a known passage takes the new text when it differs."""
        self.db.executemany(
            "INSERT INTO passages VALUES (?, ?) ON CONFLICT (passage_id) DO UPDATE SET text = excluded.text"
            " WHERE excluded.text IS NOT NULL AND passages.text IS NOT excluded.text",
            rows,
        )

    def upsert_rankings(self, rows: Iterable[tuple[str, str, str, int, float]]) -> None:
        """Add (run, query, passage, rank, score) rows."""
        self.db.executemany(
            "INSERT INTO rankings VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
            " rank = excluded.rank, score = excluded.score"
            " WHERE rankings.rank IS NOT excluded.rank OR rankings.score IS NOT excluded.score",
            rows,
        )

    def upsert_judgments(self, rows: Iterable[tuple[str, str, int]]) -> None:
        """Add (query, passage, relevance) human judgments; a new label replaces an old one."""
        self.db.executemany(
            "INSERT INTO judgments VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET relevance = excluded.relevance"
            " WHERE judgments.relevance IS NOT excluded.relevance",
            rows,
        )

    def replace_bank(
        self, bank_id: str, version: str, source: str, info: dict | None, questions: list[dict]
    ) -> bool:
        """Store a bank and its questions; returns False when the same version is already stored."""
        row = self.db.execute("SELECT version FROM banks WHERE bank_id = ?", (bank_id,)).fetchone()
        if row is not None and row[0] == version:
            return False
        self.db.execute("DELETE FROM questions WHERE bank_id = ?", (bank_id,))
        self.db.execute(
            "INSERT INTO banks VALUES (?, ?, ?, ?) ON CONFLICT (bank_id) DO UPDATE SET"
            " version = excluded.version, source = excluded.source, info = excluded.info",
            (bank_id, version, source, _dumps(info)),
        )
        self.db.executemany(
            "INSERT INTO questions VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (question_id) DO UPDATE SET"
            " bank_id = excluded.bank_id, query_id = excluded.query_id, facet_id = excluded.facet_id,"
            " kind = excluded.kind, text = excluded.text, answers = excluded.answers, info = excluded.info",
            [
                (q["question_id"], bank_id, q["query_id"], q.get("facet_id"), q["kind"], q["text"],
                 _dumps(q.get("answers")), _dumps(q.get("info")))
                for q in questions
            ],
        )
        return True

    def upsert_segments(self, rows: Iterable[tuple[str, str, str, int, list[str], bool]]) -> None:
        """Remember where a passage of a generated response came from and what it cites."""
        self.db.executemany(
            "INSERT INTO response_segments VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (passage_id) DO UPDATE SET"
            " run = excluded.run, query_id = excluded.query_id, position = excluded.position,"
            " citations = excluded.citations, truncated = excluded.truncated"
            " WHERE response_segments.citations IS NOT excluded.citations"
            " OR response_segments.position IS NOT excluded.position"
            " OR response_segments.truncated IS NOT excluded.truncated",
            ((pid, run, qid, pos, _dumps(cites) if cites else None, int(cut))
             for pid, run, qid, pos, cites, cut in rows),
        )

    def segments(self) -> dict[str, dict[str, Any]]:
        """`{passage_id: {run, query_id, position, citations, truncated}}` of imported responses."""
        rows = self.db.execute(
            "SELECT passage_id, run, query_id, position, citations, truncated FROM response_segments")
        return {pid: {"run": run, "query_id": qid, "position": pos, "citations": json.loads(c) if c else [],
                      "truncated": bool(t)} for pid, run, qid, pos, c, t in rows}

    def upsert_grade_config(self, method: str, model: str, prompt_version: str, info: dict | None) -> None:
        """Record how a set of grades was made (prompt information, LLM options)."""
        self.db.execute(
            "INSERT INTO grade_configs VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET info = excluded.info"
            " WHERE grade_configs.info IS NOT excluded.info",
            (method, model, prompt_version, _dumps(info)),
        )

    def upsert_grades(self, grades: Iterable[Grade], created: str | None = None) -> None:
        """Add grades; a stored grade is only rewritten (and re-timed) when its content differs."""
        created = created or now()
        self.db.executemany(
            "INSERT INTO grades VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
            " prompt_version = excluded.prompt_version, raw_reply = excluded.raw_reply,"
            " grade = excluded.grade, parse_status = excluded.parse_status, answer = excluded.answer,"
            " correct = excluded.correct, extra = excluded.extra, created = excluded.created"
            " WHERE grades.prompt_version IS NOT excluded.prompt_version"
            " OR grades.raw_reply IS NOT excluded.raw_reply OR grades.grade IS NOT excluded.grade"
            " OR grades.parse_status IS NOT excluded.parse_status OR grades.answer IS NOT excluded.answer"
            " OR grades.correct IS NOT excluded.correct OR grades.extra IS NOT excluded.extra",
            (
                (g.query_id, g.passage_id, g.question_id, g.method, g.model, g.prompt_version, g.raw_reply,
                 g.grade, g.parse_status, g.answer, None if g.correct is None else int(g.correct),
                 _dumps(g.extra), created)
                for g in grades
            ),
        )

    def record_import(self, kind: str, sha256: str, path: str) -> None:
        """Remember that a file was imported (the same file twice is remembered once)."""
        self.db.execute(
            "INSERT OR IGNORE INTO imports VALUES (?, ?, ?, ?)", (kind, sha256, str(path), now())
        )

    # -- reading -------------------------------------------------------------------------------------
    def query_ids(self) -> set[str]:
        """Ids of all known queries."""
        return {row[0] for row in self.db.execute("SELECT query_id FROM queries")}

    def queries(self) -> dict[str, str | None]:
        """`{query_id: text}`."""
        return dict(self.db.execute("SELECT query_id, text FROM queries ORDER BY query_id"))

    def passage_texts(self) -> dict[str, str | None]:
        """`{passage_id: text}`."""
        return dict(self.db.execute("SELECT passage_id, text FROM passages"))

    def runs(self) -> list[str]:
        """Names of the runs whose rankings are stored."""
        return [row[0] for row in self.db.execute("SELECT DISTINCT run FROM rankings ORDER BY run")]

    def rankings(self) -> dict[str, dict[str, dict[str, float]]]:
        """`{run: {query_id: {passage_id: score}}}` (the form `proctor.evaluate.runs` orders)."""
        out: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
        for run, qid, pid, score in self.db.execute("SELECT run, query_id, passage_id, score FROM rankings"):
            out[run][qid][pid] = score
        return {run: dict(per_query) for run, per_query in out.items()}

    def ranking_rows(self) -> list[tuple[str, str, str, int, float]]:
        """All (run, query, passage, rank, score) rows."""
        return list(self.db.execute("SELECT run, query_id, passage_id, rank, score FROM rankings"))

    def judgments(self) -> dict[str, dict[str, int]]:
        """`{query_id: {passage_id: relevance}}` of the imported human judgments."""
        out: dict[str, dict[str, int]] = defaultdict(dict)
        for qid, pid, rel in self.db.execute("SELECT query_id, passage_id, relevance FROM judgments"):
            out[qid][pid] = rel
        return dict(out)

    def grade_sets(self) -> list[dict[str, Any]]:
        """One entry per (method, model): grade count, failures, prompt versions."""
        rows = self.db.execute(
            "SELECT method, model, COUNT(*), SUM(parse_status = ?), GROUP_CONCAT(DISTINCT prompt_version)"
            " FROM grades GROUP BY method, model ORDER BY method, model",
            (FAILED,),
        )
        statuses: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
        for m, x, status, n in self.db.execute(
                "SELECT method, model, parse_status, COUNT(*) FROM grades GROUP BY method, model, parse_status"):
            statuses[(m, x)][status] = n
        return [
            {"method": m, "model": x, "grades": n, "failures": f or 0, "prompt_versions": (v or "").split(","),
             "by_status": statuses[(m, x)]}
            for m, x, n, f, v in rows
        ]

    def grade_rows(self, method: str, model: str) -> Iterator[tuple[str, str, str, int | None]]:
        """(query, passage, question, grade) of one grade set; failed grades have grade None."""
        return self.db.execute(
            "SELECT query_id, passage_id, question_id, grade FROM grades WHERE method = ? AND model = ?",
            (method, model),
        )

    def grades(self, method: str | None = None, model: str | None = None) -> Iterator[Grade]:
        """Full grade records, optionally of one method/model."""
        sql = ("SELECT query_id, passage_id, question_id, method, model, prompt_version, grade, parse_status,"
               " raw_reply, answer, correct, extra FROM grades")
        clauses, args = [], []
        if method is not None:
            clauses.append("method = ?")
            args.append(method)
        if model is not None:
            clauses.append("model = ?")
            args.append(model)
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        for row in self.db.execute(sql + " ORDER BY query_id, passage_id, method, model, question_id", args):
            *head, correct, extra = row
            yield Grade(*head, correct=None if correct is None else bool(correct),
                        extra=json.loads(extra) if extra else None)

    def grade_config(self, method: str, model: str, prompt_version: str) -> dict | None:
        """The recorded information about how a grade set was made, if any."""
        row = self.db.execute(
            "SELECT info FROM grade_configs WHERE method = ? AND model = ? AND prompt_version = ?",
            (method, model, prompt_version),
        ).fetchone()
        return json.loads(row[0]) if row and row[0] else None

    def bank_items(self, kind: str, bank: str | None = None) -> dict[str, list[tuple[str, str, list[str] | None]]]:
        """`{query_id: [(item_id, text, gold answers), ...]}` of the banks' questions or nuggets."""
        sql = "SELECT query_id, question_id, text, answers FROM questions WHERE kind = ?"
        args: list[str] = [kind]
        if bank is not None:
            sql += " AND bank_id = ?"
            args.append(bank)
        out: dict[str, list[tuple[str, str, list[str] | None]]] = defaultdict(list)
        for qid, item_id, text, answers in self.db.execute(sql + " ORDER BY query_id, question_id", args):
            out[qid].append((item_id, text, json.loads(answers) if answers else None))
        return dict(out)

    def graded_keys(self, method: str, model: str) -> set[tuple[str, str, str]]:
        """(query, passage, question) of the pairs that already have a usable grade."""
        return set(self.db.execute(
            "SELECT query_id, passage_id, question_id FROM grades WHERE method = ? AND model = ? AND parse_status != ?",
            (method, model, FAILED)))

    def question_facets(self) -> dict[str, str | None]:
        """`{question_id: facet_id}` from the imported banks."""
        return dict(self.db.execute("SELECT question_id, facet_id FROM questions"))

    def banks(self) -> list[dict[str, Any]]:
        """The imported banks with their versions and question counts."""
        rows = self.db.execute(
            "SELECT b.bank_id, b.version, b.source, COUNT(q.question_id), SUM(q.kind = 'nugget')"
            " FROM banks b LEFT JOIN questions q USING (bank_id) GROUP BY b.bank_id ORDER BY b.bank_id"
        )
        return [{"bank": b, "version": v, "source": s, "questions": n, "nuggets": k or 0}
                for b, v, s, n, k in rows]

    def counts(self) -> dict[str, Any]:
        """The numbers `proctor info` prints."""
        one = lambda sql: self.db.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "store": str(self.path),
            "queries": one("SELECT COUNT(*) FROM queries"),
            "passages": one("SELECT COUNT(*) FROM passages"),
            "runs": one("SELECT COUNT(DISTINCT run) FROM rankings"),
            "generated_runs": one("SELECT COUNT(DISTINCT run) FROM response_segments"),
            "rankings": one("SELECT COUNT(*) FROM rankings"),
            "judgments": one("SELECT COUNT(*) FROM judgments"),
            "banks": one("SELECT COUNT(*) FROM banks"),
            "questions": one("SELECT COUNT(*) FROM questions"),
            "grades": one("SELECT COUNT(*) FROM grades"),
            "failures": one(f"SELECT COUNT(*) FROM grades WHERE parse_status = '{FAILED}'"),
            "grades_by_method": self.grade_sets(),
            "bank_versions": self.banks(),
        }

    def dump(self) -> dict[str, list[tuple]]:
        """Every row of every content table, sorted (for tests of idempotence and atomicity)."""
        tables = ["queries", "passages", "rankings", "judgments", "banks", "questions", "grade_configs",
                  "grades", "response_segments", "imports"]
        return {t: sorted(self.db.execute(f"SELECT * FROM {t}"), key=repr) for t in tables}


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = WAL")
    except sqlite3.DatabaseError as exc:
        db.close()
        raise UsageError(f"{path}: not a Proctor store ({exc})") from None
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA busy_timeout = 5000")
    return db


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)
