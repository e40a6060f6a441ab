"""Editing a bank in the review app: changes go into the bank's open draft (one per bank, shared by every
reviewer), each with an audit entry; publishing the draft stores a new bank version beside the old ones
(never overwriting one). A save names the question's revision it started from; a save from an older
revision is refused with the other reviewer's edit (`Conflict`)."""

from __future__ import annotations

from typing import Any

from proctor.api import Store, commands
from proctor.errors import UsageError

__all__ = ["add_question", "bank_of_query", "discard", "draft_questions", "edit_question", "publish"]

MAX_TEXT = 2000


def bank_of_query(store: Store, query_id: str) -> tuple[str, str] | None:
    """(bank, latest version) holding the query's questions, if any bank does."""
    for bank in store.banks.versions():
        if bank["latest"] and any(q["query_id"] == query_id for q in store.banks.bank_questions(bank["bank"],
                                                                                           bank["version"])):
            return bank["bank"], bank["version"]
    return None


def draft_questions(store: Store, bank: str, query_id: str | None = None) -> tuple[dict | None, list[dict]]:
    """The open draft (or None) and the questions as it makes them: the base version's questions with the
    draft's changes over them, each with its state (kept/edited/added/deleted), spurious mark and revision."""
    draft = store.review.open_draft(bank)
    version = draft["base_version"] if draft else store.banks.bank_version(bank)[1]  # type: ignore[index]
    changes = store.review.draft_questions(draft["draft_id"]) if draft else {}
    out = []
    for q in store.banks.bank_questions(bank, version):
        out.append({**q, "state": "kept", "spurious": bool((q.get("info") or {}).get("spurious")),
                    **changes.pop(q["question_id"], {})})
    out += list(changes.values())
    if query_id is not None:
        out = [q for q in out if q["query_id"] == query_id]
    for q in out:
        q["revision"] = store.review.question_revision(bank, q["question_id"])
        q["base_version"] = version
    return draft, out


def _clean(text: str, what: str) -> str:
    text = " ".join(text.split())
    if not text:
        raise UsageError(f"the {what} is empty")
    if len(text) > MAX_TEXT:
        raise UsageError(f"the {what} is longer than {MAX_TEXT} characters")
    return text


def parse_answers(text: str) -> list[str] | None:
    """Answer keys from a form field, one per line (None when empty)."""
    answers = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    return answers or None


def edit_question(store: Store, bank: str, question_id: str, seen: int, reviewer: str, *, action: str,
                  text: str | None = None, answers: list[str] | None = None) -> dict[str, Any]:
    """Apply one change (`edit`, `delete`, `restore`, `spurious`, `not-spurious`) to a question in the
    bank's draft; refused with `commands.Conflict` when its revision is no longer `seen`. Returns the new record."""
    if action not in ("edit", "delete", "restore", "spurious", "not-spurious"):
        raise UsageError(f"unknown action {action!r}")
    with store.transaction():
        store.review.check_revision(bank, question_id, seen)
        draft_id = _draft(store, bank, reviewer)
        _, questions = draft_questions(store, bank)
        before = next((q for q in questions if q["question_id"] == question_id), None)
        if before is None:
            raise UsageError(f"question {question_id!r} is not in bank {bank}")
        after = {k: before[k] for k in ("question_id", "query_id", "facet_id", "kind", "text", "answers", "state",
                                        "spurious")}
        if action == "edit":
            after["text"] = _clean(text or "", "question text")
            after["answers"] = answers
            after["state"] = "added" if before["state"] == "added" else "edited"
        elif action in ("delete", "restore"):
            after["state"] = "deleted" if action == "delete" else ("added" if before["state"] == "added"
                                                                  else "edited")
        else:
            after["spurious"] = action == "spurious"
        store.review.put_draft_question(draft_id, after)
        store.review.add_audit(reviewer, action, bank_id=bank, draft_id=draft_id, query_id=after["query_id"],
                        question_id=question_id, before=_brief(before), after=_brief(after))
    return after


def add_question(store: Store, bank: str, query_id: str, reviewer: str, text: str,
                 answers: list[str] | None = None, facet_id: str | None = None) -> dict[str, Any]:
    """Add a question to the bank's draft under a fresh id (`QUERY/review-N`)."""
    text = _clean(text, "question text")
    if query_id not in store.corpus.queries():
        raise UsageError(f"no query {query_id!r} in the store")
    with store.transaction():
        draft_id = _draft(store, bank, reviewer)
        _, questions = draft_questions(store, bank)
        taken = {q["question_id"] for q in questions}
        n = 1
        while f"{query_id}/review-{n}" in taken or store.banks.question_owner(f"{query_id}/review-{n}") is not None:
            n += 1
        record = {"question_id": f"{query_id}/review-{n}", "query_id": query_id, "facet_id": facet_id,
                  "kind": "question", "text": text, "answers": answers, "state": "added", "spurious": False}
        store.review.put_draft_question(draft_id, record)
        store.review.add_audit(reviewer, "add", bank_id=bank, draft_id=draft_id, query_id=query_id,
                        question_id=record["question_id"], after=_brief(record))
    return record


def publish(store: Store, bank: str, reviewer: str) -> str:
    """Store the open draft as a new version of the bank; returns the version. The old versions stay."""
    with store.transaction():
        draft, questions = draft_questions(store, bank)
        if draft is None:
            raise UsageError(f"bank {bank} has no draft to publish")
        latest = store.banks.bank_version(bank)
        if latest is None or latest[1] != draft["base_version"]:
            raise UsageError(f"bank {bank} has a newer version ({latest[1] if latest else '?'}) than the draft's base "
                             f"{draft['base_version']}: the draft cannot be published over it")
        kept = [_bank_record(q) for q in questions if q["state"] != "deleted"]
        version = commands.bank_version_of(kept)
        if version == draft["base_version"] or not store.banks.add_bank_version(
                bank, version, f"review draft {draft['draft_id']}", {"review_draft": draft["draft_id"],
                                                                     "published_by": reviewer}, kept):
            raise UsageError(f"the draft's questions equal version {version} of bank {bank}: nothing to publish")
        store.review.close_draft(draft["draft_id"], version)
        store.review.add_audit(reviewer, "publish", bank_id=bank, draft_id=draft["draft_id"],
                        before={"version": draft["base_version"]}, after={"version": version,
                                                                          "questions": len(kept)})
    return version


def discard(store: Store, bank: str, reviewer: str) -> None:
    """Close the bank's open draft without publishing it (its changes stay in the audit trail)."""
    with store.transaction():
        draft = store.review.open_draft(bank)
        if draft is None:
            raise UsageError(f"bank {bank} has no draft to discard")
        store.review.close_draft(draft["draft_id"], None)
        store.review.add_audit(reviewer, "discard", bank_id=bank, draft_id=draft["draft_id"],
                        before={"version": draft["base_version"]})


def _draft(store: Store, bank: str, reviewer: str) -> int:
    draft = store.review.open_draft(bank)
    if draft is not None:
        return draft["draft_id"]
    latest = store.banks.bank_version(bank)
    if latest is None:
        raise UsageError(f"no bank {bank!r} in the store")
    return store.review.start_draft(bank, latest[1], reviewer)


def _bank_record(q: dict[str, Any]) -> dict[str, Any]:
    info = dict(q.get("info") or {})
    info.pop("spurious", None)
    if q.get("spurious"):
        info["spurious"] = True
    return {"question_id": q["question_id"], "query_id": q["query_id"], "facet_id": q.get("facet_id"),
            "kind": q["kind"], "text": q["text"], "answers": q.get("answers"), "info": info or None}


def _brief(q: dict[str, Any]) -> dict[str, Any]:
    return {"text": q["text"], "answers": q.get("answers"), "state": q["state"], "spurious": q["spurious"]}
