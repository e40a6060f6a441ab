"""What reviewers do in `proctor review` (`Store.review`): drafts of a bank's next version, the audit
trail of every change, and the relevance judgments reviewers record (kept apart from imported judgments).

A read-only store of schema 4 may lack the tables (made on first use then): it reads as never reviewed. A
question's revision is the number of audit entries about it: a save names the revision it started
from and is refused when another reviewer saved in between (optimistic versioning).

A verdict (a reviewer's relevance judgment) is valid only for the texts it was given on: it keeps digests of the
query and passage texts (`review_judgment_texts`, schema 6), and once either text is replaced it is stale —
counted nowhere (not in `/judgments.qrels`, not in `calibrate --qrels reviewers`), shown as stale. A verdict
recorded before schema 6 has no digests: it is stale when an import wrote its query or passage text after it.
The form a verdict is given on names what it showed (`VerdictBasis`): the texts' digests and the pair's newest
verdict; a save from a form whose texts or verdict changed since is refused (`VerdictConflict`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from proctor.store.repository import Repository, dumps, loads, now

_DRAFT_COLUMNS = "question_id, query_id, facet_id, kind, text, answers, state, spurious"


class Conflict(Exception):
    """A save that started from an older revision than the stored one; `other` is the newer audit entry."""

    def __init__(self, other: dict[str, Any] | None) -> None:
        self.other = other
        super().__init__("another reviewer changed this question first")


def text_digest(text: str | None) -> str:
    """The digest a verdict keeps of a text it was given on ("-" for a passage or query without text)."""
    if text is None:
        return "-"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class VerdictBasis:
    """What a verdict form showed: the digests of the query and passage texts and the pair's newest verdict (0:
    none); `texts` is how the form carries the digests."""

    query_digest: str
    passage_digest: str
    verdict: int

    @property
    def texts(self) -> str:
        """The texts' digests as one form field."""
        return f"{self.query_digest}:{self.passage_digest}"


class VerdictConflict(Exception):
    """A verdict from a form whose texts or pair's verdict changed since it was shown; `why` says which, `other` is
    the newer verdict (when another reviewer's verdict came first)."""

    def __init__(self, why: str, other: dict[str, Any] | None = None) -> None:
        self.why, self.other = why, other
        super().__init__(why)


_VERDICTS = (
    "SELECT j.judgment_id, j.query_id, j.passage_id, j.relevance, j.reviewer, j.at, {digests}, q.text, p.text,"
    " qi.imported_at, pi.imported_at FROM review_judgments j {join}"
    " LEFT JOIN queries q ON q.query_id = j.query_id LEFT JOIN passages p ON p.passage_id = j.passage_id"
    " LEFT JOIN import_log qi ON qi.entry = q.origin LEFT JOIN import_log pi ON pi.entry = p.origin"
    " WHERE j.judgment_id IN (SELECT MAX(judgment_id) FROM review_judgments GROUP BY query_id, passage_id)")
"""Each pair's newest verdict with the digests it keeps, the texts now stored and when an import wrote them."""


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
                            grade_set_id: str | None, seen: VerdictBasis | None = None) -> None:
        """Record a reviewer's relevance judgment (history kept; the newest one counts) with the digests of the
        texts it is given on; with `seen` (what the form showed), refused (VerdictConflict) when the texts or the
        pair's newest verdict changed since (call inside a transaction)."""
        basis = self.verdict_basis(query_id, passage_id)
        if seen is not None and seen.texts != basis.texts:
            raise VerdictConflict("texts", self._text_change(query_id, passage_id, seen, basis))
        if seen is not None and seen.verdict != basis.verdict:
            raise VerdictConflict("verdict", self._verdict(basis.verdict))
        cursor = self.db.execute(
            "INSERT INTO review_judgments (query_id, passage_id, relevance, reviewer, at, grade_set_id)"
            " VALUES (?, ?, ?, ?, ?, ?)", (query_id, passage_id, relevance, reviewer, now(), grade_set_id))
        self.db.execute("INSERT INTO review_judgment_texts VALUES (?, ?, ?)",
                        (cursor.lastrowid, basis.query_digest, basis.passage_digest))

    def verdict_basis(self, query_id: str, passage_id: str) -> VerdictBasis:
        """What a verdict form on a pair shows now: its texts' digests and the pair's newest verdict."""
        query = self.db.execute("SELECT text FROM queries WHERE query_id = ?", (query_id,)).fetchone()
        passage = self.db.execute("SELECT text FROM passages WHERE passage_id = ?", (passage_id,)).fetchone()
        newest = 0
        if self._reviewed():
            newest = self.db.execute("SELECT COALESCE(MAX(judgment_id), 0) FROM review_judgments"
                                     " WHERE query_id = ? AND passage_id = ?", (query_id, passage_id)).fetchone()[0]
        return VerdictBasis(text_digest(query[0] if query else None), text_digest(passage[0] if passage else None),
                            newest)

    def _text_change(self, query_id: str, passage_id: str, seen: VerdictBasis, now_: VerdictBasis
                     ) -> dict[str, Any]:
        """Which text changed since a form was shown (`what`), and the imports that wrote it (`by`, kind path
        time; empty when no import log names them)."""
        query, passage = seen.query_digest != now_.query_digest, seen.passage_digest != now_.passage_digest
        sql = ("SELECT i.kind, i.path, i.imported_at FROM {table} t JOIN import_log i ON i.entry = t.origin"
               " WHERE t.{key} = ?")
        by = [row for changed, table, key, value in ((query, "queries", "query_id", query_id),
                                                     (passage, "passages", "passage_id", passage_id)) if changed
              for row in self.db.execute(sql.format(table=table, key=key), (value,))]
        return {"what": (_changed(query, passage) or "").removesuffix(" changed since"),
                "by": [{"kind": k, "path": p, "at": at} for k, p, at in by]}

    def _verdict(self, judgment_id: int) -> dict[str, Any] | None:
        row = self.db.execute("SELECT relevance, reviewer, at FROM review_judgments WHERE judgment_id = ?",
                              (judgment_id,)).fetchone()
        return None if row is None else {"relevance": row[0], "reviewer": row[1], "at": row[2]}

    def _reviewed(self) -> bool:
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'review_judgments'").fetchone() is not None

    def review_judgments(self, query_id: str | None = None) -> dict[str, dict[str, dict[str, Any]]]:
        """`{query_id: {passage_id: {relevance, reviewer, at}}}`: each passage's newest reviewer judgment, when it
        is valid for the texts now stored (none in a store that was never reviewed)."""
        return self._verdicts(query_id, stale=False)

    def stale_review_judgments(self, query_id: str | None = None) -> dict[str, dict[str, dict[str, Any]]]:
        """The newest reviewer judgments whose query or passage text was replaced since: `{query_id: {passage_id:
        {relevance, reviewer, at, stale}}}`, `stale` saying which text changed. They count nowhere."""
        return self._verdicts(query_id, stale=True)

    def _verdicts(self, query_id: str | None, *, stale: bool) -> dict[str, dict[str, dict[str, Any]]]:
        if not self._reviewed():
            return {}
        kept = self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'review_judgment_texts'").fetchone()
        sql = _VERDICTS.format(digests="t.query_digest, t.passage_digest" if kept else "NULL, NULL",
                               join="LEFT JOIN review_judgment_texts t USING (judgment_id)" if kept else "")
        args: tuple = ()
        if query_id is not None:
            sql += " AND j.query_id = ?"
            args = (query_id,)
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for _, qid, pid, rel, who, at, q_digest, p_digest, q_text, p_text, q_at, p_at in self.db.execute(
                sql + " ORDER BY j.judgment_id", args):
            if q_digest is None:  # recorded before schema 6: stale when an import wrote a text after it
                why = _changed(q_at is not None and q_at > at, p_at is not None and p_at > at)
            else:
                why = _changed(q_digest != text_digest(q_text), p_digest != text_digest(p_text))
            if (why is not None) == stale:
                out.setdefault(qid, {})[pid] = {"relevance": rel, "reviewer": who, "at": at,
                                                **({"stale": why} if stale else {})}
        return out

    def graded_pair(self, query_id: str, passage_id: str) -> bool:
        """Whether some grade set graded the passage for the query."""
        return self.db.execute("SELECT 1 FROM grades WHERE series IN (SELECT series FROM grade_series)"
                               " AND query_id = ? AND passage_id = ? LIMIT 1", (query_id, passage_id)).fetchone() \
            is not None

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


def _changed(query: bool, passage: bool) -> str | None:
    """Which texts of a verdict changed since it was given, in words (None: neither)."""
    if query and passage:
        return "the query and passage texts changed since"
    return "the query text changed since" if query else "the passage text changed since" if passage else None


def _draft_record(row: tuple) -> dict[str, Any]:
    qid, query, facet, kind, text, answers, state, spurious = row
    return {"question_id": qid, "query_id": query, "facet_id": facet, "kind": kind, "text": text,
            "answers": loads(answers), "state": state, "spurious": bool(spurious)}

