"""Banks and their versions. A bank has a name and versions that live side by side: importing a changed
file under the same name adds a version and never rewrites an old one. A question id belongs to one query for
good; the same question (same id and text) may be in several banks."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from proctor.errors import UsageError, text_difference
from proctor.store.repository import Repository, dumps, now


def _not_spurious(table: str = "") -> str:
    """SQL: the question is not marked spurious (`io.banks.is_spurious`): such questions stay in their bank
    version but are never graded, carried over or counted."""
    column = f"{table}.info" if table else "info"
    return f"COALESCE(json_extract({column}, '$.spurious'), 0) = 0"


class IdConflict(UsageError):
    """A question id that already belongs to another bank or another query."""

    def __init__(self, question_id: str, message: str, *, params: tuple[str, ...] = ()) -> None:
        self.question_id = question_id
        super().__init__(message, params=params)


class BankRepository(Repository):
    """The `banks`, `questions` and `question_positions` tables (`Store.banks`)."""

    def add_bank_version(self, name: str, version: str, source: str, info: dict | None,
                         questions: list[dict], *, replace: bool = False, replaced: set[str] | None = None) -> bool:
        """Store a bank version; False when this version of this bank is already stored. A question id may be in
        several banks with the same query and text; another query is refused (IdConflict), another text too
        unless `replace`: then every stored copy takes the new text and its id is added to `replaced`."""
        if self.db.execute("SELECT 1 FROM banks WHERE bank_id = ? AND version = ?", (name, version)).fetchone():
            return False
        owners = self._question_owners([q["question_id"] for q in questions])
        for q in questions:
            for bank, query, text in owners.get(q["question_id"], ()):
                if query != q["query_id"]:
                    raise IdConflict(q["question_id"], f"question id {q['question_id']!r} already belongs to query "
                                     f"{query!r} (bank {bank!r}); ids are never moved (give the item a new id)")
                if text != q["text"] and bank != name and not replace:
                    raise IdConflict(q["question_id"], f"question id {q['question_id']!r} is stored with another "
                                     f"text in bank {bank!r} ({text!r}; this file: {q['text']!r}; "
                                     f"{text_difference(text, q['text'])}): give the item a new id, or pass "
                                     "{replace} to change its text everywhere (its grades become stale)",
                                     params=("replace",))
                if text != q["text"] and bank != name and replaced is not None:
                    self.db.execute("UPDATE questions SET text = ? WHERE question_id = ?",
                                    (q["text"], q["question_id"]))
                    replaced.add(q["question_id"])
        seq = self.db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM banks WHERE bank_id = ?", (name,)).fetchone()[0]
        self.db.execute("INSERT INTO banks VALUES (?, ?, ?, ?, ?, ?)",
                        (name, version, seq, source, dumps(info), now()))
        self.db.executemany(
            "INSERT INTO questions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(name, version, q["question_id"], q["query_id"], q.get("facet_id"), q["kind"], q["text"],
              dumps(q.get("answers")), dumps(q.get("info"))) for q in questions])
        self.db.executemany("INSERT OR IGNORE INTO question_positions VALUES (?, ?, ?, ?)",
                            [(name, version, q["question_id"], n) for n, q in enumerate(questions)])
        return True

    def _question_owners(self, ids: list[str]) -> dict[str, list[tuple[str, str, str]]]:
        """`{question_id: [(bank, query, text), ...]}` of the stored copies of these ids (one per bank and text)."""
        out: dict[str, list[tuple[str, str, str]]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for qid, bank, query, text in self.db.execute(
                    "SELECT DISTINCT question_id, bank_id, query_id, text FROM questions"
                    f" WHERE question_id IN ({marks})", chunk):
                out.setdefault(qid, []).append((bank, query, text))
        return out

    def question_owner(self, question_id: str) -> tuple[str, str] | None:
        """(bank, query) a question id belongs to (its first bank), if any."""
        owners = self._question_owners([question_id]).get(question_id)
        return (owners[0][0], owners[0][1]) if owners else None

    def versions(self) -> list[dict[str, Any]]:
        """Every stored bank version with its question counts, oldest first per bank."""
        rows = self.db.execute(
            "SELECT b.bank_id, b.version, b.seq, b.source, b.created, COUNT(q.question_id), SUM(q.kind = 'nugget'),"
            " b.seq = (SELECT MAX(seq) FROM banks c WHERE c.bank_id = b.bank_id)"
            " FROM banks b LEFT JOIN questions q ON q.bank_id = b.bank_id AND q.version = b.version"
            " GROUP BY b.bank_id, b.version ORDER BY b.bank_id, b.seq")
        return [{"bank": b, "version": v, "seq": s, "source": src, "created": c, "questions": n,
                 "nuggets": k or 0, "latest": bool(latest)} for b, v, s, src, c, n, k, latest in rows]

    def bank_info(self, name: str, version: str) -> dict[str, Any]:
        """What a bank version's source recorded about it (generator, model, prompt version; {} when none)."""
        row = self.db.execute("SELECT info FROM banks WHERE bank_id = ? AND version = ?", (name, version)).fetchone()
        return (json.loads(row[0]) or {}) if row and row[0] else {}

    def bank_version(self, spec: str | None) -> tuple[str, str] | None:
        """(name, version) of `NAME` (its latest version) or `NAME@VERSION`; None when no bank is named and
        the store holds none. With no name and several banks, a usage error lists them."""
        banks = self.versions()
        if spec is None:
            latest = [b for b in banks if b["latest"]]
            if len(latest) > 1:
                names = ", ".join(f"{b['bank']}@{b['version']}" for b in latest)
                raise UsageError(f"the store holds several banks ({names}): name one with {{bank}} NAME[@VERSION]",
                                 params=("bank",))
            return (latest[0]["bank"], latest[0]["version"]) if latest else None
        name, _, version = spec.partition("@")
        found = [b for b in banks if b["bank"] == name and (b["version"] == version if version else b["latest"])]
        if not found:
            known = ", ".join(f"{b['bank']}@{b['version']}" for b in banks) or "none"
            raise UsageError(f"{{bank}} {spec}: no such bank version (the store has: {known})", params=("bank",))
        return name, found[0]["version"]

    def bank_items(self, kind: str, bank: str, version: str) -> dict[str, list[tuple[str, str, list[str] | None]]]:
        """`{query_id: [(item_id, text, gold answers), ...]}` of one bank version's questions or nuggets, in the
        bank's order (as imported or created; by id for versions stored before the order was kept)."""
        out: dict[str, list[tuple[str, str, list[str] | None]]] = defaultdict(list)
        positions = self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                                    "'question_positions'").fetchone()
        join, order = (" LEFT JOIN question_positions p USING (bank_id, version, question_id)",
                       "p.position IS NULL, p.position, ") if positions else ("", "")
        for qid, item_id, text, answers in self.db.execute(
                f"SELECT q.query_id, q.question_id, q.text, q.answers FROM questions q{join} WHERE q.kind = ? AND"
                f" q.bank_id = ? AND q.version = ? AND {_not_spurious('q')} ORDER BY q.query_id, {order}"
                "q.question_id", (kind, bank, version)):
            out[qid].append((item_id, text, json.loads(answers) if answers else None))
        return dict(out)

    def nugget_importance(self, bank: str, version: str) -> dict[str, str | None]:
        """`{nugget_id: "vital" | "okay" | None}` of one bank version's nuggets (None: no importance given)."""
        return {qid: (json.loads(info) or {}).get("importance") if info else None
                for qid, info in self.db.execute("SELECT question_id, info FROM questions WHERE kind = 'nugget'"
                                                 " AND bank_id = ? AND version = ?", (bank, version))}

    def bank_questions(self, bank: str | None = None, version: str | None = None) -> list[dict[str, Any]]:
        """Question records of one bank version (or of every bank's latest version)."""
        sql = ("SELECT q.question_id, q.query_id, q.facet_id, q.kind, q.text, q.answers, q.info FROM questions q"
               " JOIN banks b ON b.bank_id = q.bank_id AND b.version = q.version")
        if bank is not None:
            sql += " WHERE q.bank_id = ? AND q.version = ?"
            args: tuple = (bank, version)
        else:
            sql += " WHERE b.seq = (SELECT MAX(seq) FROM banks c WHERE c.bank_id = b.bank_id)"
            args = ()
        return [{"question_id": q, "query_id": qid, "facet_id": f, "kind": k, "text": t,
                 "answers": json.loads(a) if a else None, "info": json.loads(i) if i else None}
                for q, qid, f, k, t, a, i in self.db.execute(sql + " ORDER BY q.question_id", args)]

    def question_texts(self) -> dict[str, str]:
        """`{question_id: text}` over every bank version (a question id keeps its bank and query)."""
        return dict(self.db.execute("SELECT q.question_id, q.text FROM questions q JOIN banks b"
                                    " ON b.bank_id = q.bank_id AND b.version = q.version ORDER BY b.seq"))

    def question_facets(self) -> dict[str, str | None]:
        """`{question_id: facet_id}` from the imported banks."""
        return dict(self.db.execute("SELECT question_id, facet_id FROM questions"))

    def same_questions(self, old: tuple[str, str], new: tuple[str, str]) -> set[str]:
        """Ids of the questions two bank versions share unchanged (same query, text and answers), except those
        marked spurious in the new version."""
        return {row[0] for row in self.db.execute(
            "SELECT n.question_id FROM questions n JOIN questions o ON o.question_id = n.question_id"
            " AND o.query_id = n.query_id AND o.text = n.text AND o.answers IS n.answers"
            " WHERE n.bank_id = ? AND n.version = ? AND o.bank_id = ? AND o.version = ?"
            f" AND {_not_spurious('n')}", (*new, *old))}

