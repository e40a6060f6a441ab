"""What reviewers do in `proctor review` (`Store.review`): drafts of a bank's next version, the audit
trail of every change, and the relevance judgments reviewers record (kept apart from imported judgments).

A read-only store of schema 4 may lack the tables (made on first use then): it reads as never reviewed. A
question's revision is the number of audit entries about it: a save names the revision it started
from and is refused when another reviewer saved in between (optimistic versioning)."""

from __future__ import annotations

from typing import Any

from proctor.store.repository import Repository, dumps, loads, now

_DRAFT_COLUMNS = "question_id, query_id, facet_id, kind, text, answers, state, spurious"


class Conflict(Exception):
    """A save that started from an older revision than the stored one; `other` is the newer audit entry."""

    def __init__(self, other: dict[str, Any] | None) -> None:
        self.other = other
        super().__init__("another reviewer changed this question first")


class ReviewRepository(Repository):
    """The `review_*` tables, and the grades as the review pages show them."""

    # -- drafts ---------------------------------------------------------------------------------------
    def open_draft(self, bank_id: str) -> dict[str, Any] | None:
        """The open draft of a bank, if any."""
        row = self.db.execute("SELECT draft_id, base_version, created, created_by FROM review_drafts"
                              " WHERE bank_id = ? AND status = 'open'", (bank_id,)).fetchone()
        return None if row is None else {"draft_id": row[0], "bank": bank_id, "base_version": row[1],
                                         "created": row[2], "created_by": row[3]}

    def start_draft(self, bank_id: str, base_version: str, reviewer: str) -> int:
        """Open a draft on a bank version (call inside a transaction)."""
        cursor = self.db.execute("INSERT INTO review_drafts (bank_id, base_version, status, created, created_by)"
                                 " VALUES (?, ?, 'open', ?, ?)", (bank_id, base_version, now(), reviewer))
        return int(cursor.lastrowid or 0)

    def draft_questions(self, draft_id: int) -> dict[str, dict[str, Any]]:
        """`{question_id: record}` of the questions a draft changes (state: edited, added, deleted, kept)."""
        rows = self.db.execute(f"SELECT {_DRAFT_COLUMNS} FROM review_draft_questions WHERE draft_id = ?",
                               (draft_id,))
        return {r[0]: _draft_record(r) for r in rows}

    def put_draft_question(self, draft_id: int, record: dict[str, Any]) -> None:
        """Write one question of a draft (call inside a transaction)."""
        self.db.execute(
            f"INSERT OR REPLACE INTO review_draft_questions ({_DRAFT_COLUMNS}, draft_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (record["question_id"], record["query_id"], record.get("facet_id"), record["kind"], record["text"],
             dumps(record.get("answers")), record["state"], int(bool(record.get("spurious"))), draft_id))

    def close_draft(self, draft_id: int, version: str | None) -> None:
        """Mark a draft published as `version`, or discarded when None (call inside a transaction)."""
        self.db.execute("UPDATE review_drafts SET status = ?, published_version = ?, published = ?"
                        " WHERE draft_id = ?", ("published" if version else "discarded", version, now(), draft_id))

    # -- audit ----------------------------------------------------------------------------------------
    def question_revision(self, bank_id: str, question_id: str) -> int:
        """How many audit entries a question has (its revision)."""
        return self.db.execute("SELECT COUNT(*) FROM review_audit WHERE bank_id = ? AND question_id = ?",
                               (bank_id, question_id)).fetchone()[0]

    def check_revision(self, bank_id: str, question_id: str, seen: int) -> None:
        """Raise Conflict when the question has changed since revision `seen` (call inside a transaction)."""
        if self.question_revision(bank_id, question_id) != seen:
            raise Conflict(self.audit(bank_id=bank_id, question_id=question_id, limit=1)[0])

    def add_audit(self, reviewer: str, action: str, *, bank_id: str | None = None, draft_id: int | None = None,
                  query_id: str | None = None, question_id: str | None = None, before: Any = None,
                  after: Any = None) -> None:
        """Record who did what when, with the record before and after."""
        self.db.execute("INSERT INTO review_audit (at, reviewer, action, bank_id, draft_id, query_id, question_id,"
                        " before, after) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (now(), reviewer, action, bank_id, draft_id, query_id, question_id, dumps(before),
                         dumps(after)))

    def audit(self, *, bank_id: str | None = None, question_id: str | None = None, query_id: str | None = None,
              limit: int = 200) -> list[dict[str, Any]]:
        """Audit entries, newest first, narrowed by bank, question or query."""
        sql, args = "SELECT audit_id, at, reviewer, action, bank_id, draft_id, query_id, question_id, before, after" \
                    " FROM review_audit WHERE 1 = 1", []
        for column, value in (("bank_id", bank_id), ("question_id", question_id), ("query_id", query_id)):
            if value is not None:
                sql += f" AND {column} = ?"
                args.append(value)
        rows = self.db.execute(sql + " ORDER BY audit_id DESC LIMIT ?", (*args, limit))
        return [{"id": r[0], "at": r[1], "reviewer": r[2], "action": r[3], "bank": r[4], "draft": r[5],
                 "query_id": r[6], "question_id": r[7], "before": loads(r[8]), "after": loads(r[9])} for r in rows]

    def last_changes(self, bank_id: str, query_id: str) -> dict[str, dict[str, Any]]:
        """`{question_id: newest audit entry}` of one query's questions."""
        out: dict[str, dict[str, Any]] = {}
        for entry in reversed(self.audit(bank_id=bank_id, query_id=query_id, limit=10000)):
            if entry["question_id"]:
                out[entry["question_id"]] = entry
        return out

    # -- human judgments ------------------------------------------------------------------------------
    def add_review_judgment(self, query_id: str, passage_id: str, relevance: int, reviewer: str,
                            grade_set_id: str | None) -> None:
        """Record a reviewer's relevance judgment (history kept; the newest one counts)."""
        self.db.execute("INSERT INTO review_judgments (query_id, passage_id, relevance, reviewer, at, grade_set_id)"
                        " VALUES (?, ?, ?, ?, ?, ?)", (query_id, passage_id, relevance, reviewer, now(), grade_set_id))

    def review_judgments(self, query_id: str | None = None) -> dict[str, dict[str, dict[str, Any]]]:
        """`{query_id: {passage_id: {relevance, reviewer, at}}}`: each passage's newest reviewer judgment (none in a
        store that was never reviewed)."""
        if self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'review_judgments'").fetchone() is None:
            return {}
        sql = "SELECT query_id, passage_id, relevance, reviewer, at FROM review_judgments"
        args: tuple = ()
        if query_id is not None:
            sql += " WHERE query_id = ?"
            args = (query_id,)
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for qid, pid, rel, who, at in self.db.execute(sql + " ORDER BY judgment_id", args):
            out.setdefault(qid, {})[pid] = {"relevance": rel, "reviewer": who, "at": at}
        return out

    # -- grades as the review pages show them ---------------------------------------------------------
    def query_grades(self, grade_set_id: str, step: str, query_id: str) -> list[tuple[str, str, int | None, str]]:
        """(passage, question, grade, parse status) of one query in one step of a grade set."""
        return list(self.db.execute(
            "SELECT passage_id, question_id, grade, parse_status FROM grades JOIN grade_items USING (item)"
            " WHERE series = (SELECT series FROM grade_series WHERE grade_set_id = ? AND step = ?) AND query_id = ?"
            " ORDER BY passage_id, question_id", (grade_set_id, step, query_id)))

    def grade_detail(self, grade_set_id: str, query_id: str, passage_id: str, question_id: str
                     ) -> list[dict[str, Any]]:
        """Every step's stored grade of one pair: reply, grade, parse status, answer, attempts."""
        rows = self.db.execute(
            "SELECT step, grade, parse_status, raw_reply, answer, correct, extra, created, attempts FROM grades"
            " JOIN grade_series USING (series) JOIN grade_items USING (item) JOIN grade_batches USING (batch)"
            " WHERE grade_set_id = ? AND query_id = ? AND passage_id = ? AND question_id = ? ORDER BY step",
            (grade_set_id, query_id, passage_id, question_id))
        return [{"step": r[0], "grade": r[1], "parse_status": r[2], "raw_reply": r[3], "answer": r[4],
                 "correct": r[5], "extra": loads(r[6]), "created": r[7], "attempts": r[8]} for r in rows]

    def grade_progress(self, grade_set_id: str, step: str) -> tuple[int, int]:
        """(grades, failed grades) of one step of a grade set."""
        n, failed = self.db.execute(
            "SELECT COUNT(*), SUM(parse_status = 'failed') FROM grades WHERE series ="
            " (SELECT series FROM grade_series WHERE grade_set_id = ? AND step = ?)", (grade_set_id, step)).fetchone()
        return n, failed or 0


def _draft_record(row: tuple) -> dict[str, Any]:
    qid, query, facet, kind, text, answers, state, spurious = row
    return {"question_id": qid, "query_id": query, "facet_id": facet, "kind": kind, "text": text,
            "answers": loads(answers), "state": state, "spurious": bool(spurious)}

