"""What the review pages show, as plain data (the templates only lay it out): the overview of every query,
one query's bank and grade matrix, and one cell's grade with its prompt and reply."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from markupsafe import Markup, escape

from proctor.api import LabelChoice, Store, commands
from proctor.errors import UsageError
from proctor.options.review import ReviewOptions
from proctor.records import GradeSet
from proctor.review.editing import bank_of_query, draft_questions
from proctor.review.robustness_view import probe_view


@dataclass
class Thresholds:
    """When a question answers (grade >= min_grade) and a judgment counts as relevant."""

    min_grade: int = ReviewOptions.min_grade
    judged_relevant: int = ReviewOptions.judged_relevant


@dataclass
class Cache:
    """What every page needs and only an import changes: the judgment pool."""

    depth: int = ReviewOptions.depth
    pool: dict[str, list[str]] | None = None
    flags: dict[tuple, tuple[Counter, Counter]] = field(default_factory=dict)
    counts: dict[str, int] | None = None

    def pool_of(self, store: Store) -> dict[str, list[str]]:
        """The judgment pool (computed once)."""
        if self.pool is None:
            self.pool = commands.judgment_pool(store, self.depth)
        return self.pool


def visible_sets(store: Store) -> list[GradeSet]:
    """The grade sets a reviewer chooses from (intermediate ones left out)."""
    return [s for s in store.grades.grade_sets() if not s.intermediate]


def choose_grade_set(store: Store, wanted: str | None, sets: list[GradeSet] | None = None) -> GradeSet | None:
    """The grade set named by its id or a unique prefix of it (resolved as every command resolves `--grade-set`),
    else the one with most grades on the newest bank version, else None (`sets`: the visible grade sets when the
    caller has them already)."""
    if wanted:
        return commands.grade_set_of(store, LabelChoice(grade_set=wanted))
    sets = visible_sets(store) if sets is None else sets
    seq = {(b["bank"], b["version"]): b["seq"] for b in store.banks.versions()}
    graded = [s for s in sets if s.grades]
    if not graded:
        return None
    return max(graded, key=lambda s: (seq.get((s.bank, s.bank_version), 0), s.grades, s.created or ""))


def _flags(store: Store, cache: Cache, grade_set: GradeSet, t: Thresholds) -> tuple[Counter, Counter]:
    """Per query: spurious questions and uncovered passages (cached while the grade set's grades stay)."""
    key = (grade_set.id, grade_set.grades, grade_set.failures, t.min_grade, t.judged_relevant)
    if key not in cache.flags:
        cache.flags[key] = commands.rubric_flags(store, grade_set, t.min_grade, t.judged_relevant)
    return cache.flags[key]


def overview(store: Store, cache: Cache, grade_set: GradeSet | None, t: Thresholds,
             sets: list[GradeSet]) -> dict[str, Any]:
    """Every query with its bank version, questions, pool size and flags; every grade set with its state."""
    pool = cache.pool_of(store)
    latest = store.banks.bank_questions()
    versions = {(b["bank"]): b["version"] for b in store.banks.versions() if b["latest"]}
    per_query: dict[str, list[dict]] = defaultdict(list)
    for q in latest:
        per_query[q["query_id"]].append(q)
    bank_of = {qid: _bank_of(store, rows[0]["question_id"]) for qid, rows in per_query.items()}
    spurious, uncovered = _flags(store, cache, grade_set, t) if grade_set is not None else (Counter(), Counter())
    queries = []
    for qid, text in store.corpus.queries().items():
        bank = bank_of.get(qid)
        queries.append({"id": qid, "text": text, "bank": f"{bank}@{versions[bank]}" if bank else None,
                        "questions": len(per_query.get(qid, [])), "pool": len(pool.get(qid, [])),
                        "spurious": spurious.get(qid, 0), "uncovered": uncovered.get(qid, 0)})
    if cache.counts is None:
        cache.counts = _counts(store)
    counts = {**cache.counts, "grades": sum(s.grades for s in sets), "questions": len(latest)}
    return {"queries": queries, "grade_sets": [_set_state(store, s, pool) for s in sets],
            "banks": store.banks.versions(),
            "grade_set": grade_set.as_dict() if grade_set else None, "counts": counts,
            "coverage": _coverage(store, grade_set, pool), "probe": probe_view(store, grade_set)}


def _coverage(store: Store, grade_set: GradeSet | None, pool: dict[str, list[str]]) -> dict[str, Any] | None:
    """What the chosen grade set's labels rest on, against the judgment pool (None for answer grade sets)."""
    return None if grade_set is None else commands.labels_rest_on(store, grade_set, pool)


def _bank_of(store: Store, question_id: str) -> str | None:
    owner = store.banks.question_owner(question_id)
    return owner[0] if owner else None


def _counts(store: Store) -> dict[str, int]:
    counts = store.counts()
    return {k: counts[k] for k in ("queries", "passages", "runs", "judgments")}


def _set_state(store: Store, s: GradeSet, pool: dict[str, list[str]]) -> dict[str, Any]:
    expected = None
    if s.bank is not None and s.bank_version is not None:
        expected = commands.expected_pairs(store, s.bank, s.bank_version, pool)
    pending = max(0, expected - s.grades) if expected is not None else None
    state = "failed" if s.failures else ("pending" if pending else "graded")
    return {**s.as_dict(), "state": state, "pending": pending, "expected": expected}


def query_page(store: Store, cache: Cache, qid: str, grade_set: GradeSet | None, t: Thresholds) -> dict[str, Any]:
    """One query: its questions (as the bank's draft makes them) and the passage x question grade matrix."""
    queries = store.corpus.queries()
    if qid not in queries:
        raise KeyError(qid)
    found = bank_of_query(store, qid)
    owner = found[0] if found else None
    draft, questions = draft_questions(store, owner, qid) if owner else (None, [])
    changes = store.review.last_changes(owner, qid) if owner else {}
    grades = store.review.query_grades(grade_set.id, grade_set.step, qid) if grade_set else []
    rows = [(qid, p, k, g) for p, k, g, _ in grades]
    judged = store.corpus.judgments().get(qid, {})
    rates, uncovered, labels, rule = commands.query_flags(rows, qid, judged, t.min_grade, t.judged_relevant)
    cells: dict[str, dict[str, tuple[int | None, str]]] = defaultdict(dict)
    for p, k, g, status in grades:
        cells[p][k] = (g, status)
    graded_ids = {k for _, k, _, _ in grades}
    columns = [q for q in questions if q["question_id"] in graded_ids] + \
              [q for q in questions if q["question_id"] not in graded_ids]
    for q in questions:
        rate = rates.get((qid, q["question_id"]))
        q["answering_non_relevant"] = rate.non_relevant_answering if rate else 0
        q["non_relevant_graded"] = rate.non_relevant_graded if rate else 0
        q["answering_relevant"] = rate.relevant_answering if rate else 0
        q["relevant_graded"] = rate.relevant_graded if rate else 0
        q["flagged"] = bool(rate and rate.spurious)
        q["last_change"] = changes.get(q["question_id"])
    reviewed = {**store.review.stale_review_judgments(qid).get(qid, {}),
                **store.review.review_judgments(qid).get(qid, {})}
    passages = sorted(set(cells) | set(cache.pool_of(store).get(qid, [])),
                      key=lambda p: (-(labels.get(p, -1)), -(judged.get(p, -1)), p))
    texts = store.corpus.passage_texts_of(passages)
    base = f"/cell?gs={quote(grade_set.id) if grade_set else ''}&q={quote(qid, safe='')}"
    keys = [quote(q["question_id"], safe="") for q in columns]
    matrix = [{"id": p, "text": (texts.get(p) or "")[:300], "first": first_words(texts.get(p) or ""),
               "label": labels.get(p), "judgment": judged.get(p),
               "reviewed": reviewed.get(p), "uncovered": p in uncovered,
               "cells": _cells(cells[p], columns, f"{base}&p={quote(p, safe='')}&k=", keys)} for p in passages]
    return {"query": {"id": qid, "text": queries[qid]}, "bank": owner, "draft": draft, "questions": questions,
            "columns": columns, "matrix": matrix, "uncovered": len(uncovered),
            "grade_set": grade_set.as_dict() if grade_set else None,
            "flagged": sum(q["flagged"] for q in questions), "spurious_rule": rule}


def seen_basis(form: Any) -> commands.VerdictBasis:
    """What a verdict form showed (`texts`: the query and passage digests, `verdict`: the pair's newest verdict),
    as the cell and to-review pages render it; a form without them is refused."""
    texts, verdict = str(form.get("texts") or ""), str(form.get("verdict") or "")
    query, _, passage = texts.partition(":")
    if not query or not passage or not verdict.isdigit():
        raise UsageError("the form does not say what it showed (texts, verdict): reload the page and judge again")
    return commands.VerdictBasis(query, passage, int(verdict))


def first_words(text: str, words: int = 8) -> str:
    """The first words of a passage, as the matrix shows it beside the id ("…" when there is more)."""
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def _cells(row: dict[str, tuple[int | None, str]], columns: list[dict], base: str, keys: list[str]) -> Markup:
    """The cells of one matrix row as HTML (built here, not in the template, for speed: 2,000 cells of a DL19
    query in a few ms). Every piece from the store is URL-quoted and HTML-escaped; the rest are digits."""
    out = []
    for q, key in zip(columns, keys, strict=True):
        grade, status = row.get(q["question_id"], (None, None))
        css, text = (("g gfail", "×") if status == "failed" else ("g gnone", "") if grade is None
                     else (f"g g{int(grade)}", str(int(grade))))
        out.append(f'<td class="{css}"><a class="cell" href="{escape(base + key)}">{text}</a></td>')
    return Markup("".join(out))


def cell_detail(store: Store, grade_set: GradeSet, qid: str, pid: str, question_id: str) -> dict[str, Any]:
    """One pair: the passage, the question, the prompt as the method's template renders it, every step's reply."""
    queries, texts = store.corpus.queries(), store.corpus.passage_texts_of([pid])
    question = store.banks.question_texts().get(question_id) if question_id else None
    steps = store.review.grade_detail(grade_set.id, qid, pid, question_id) if question_id else []
    if question_id and question is None and steps:  # graded without a bank holding it (imported grades)
        question = ""
    if qid not in queries or pid not in texts or (question_id and question is None):
        missing = "query" if qid not in queries else "passage" if pid not in texts else "question"
        raise UsageError(f"the store has no {missing} {dict(query=qid, passage=pid, question=question_id)[missing]}")
    query, passage = queries[qid], texts[pid] or ""
    prompt = None
    if question is None:  # a passage without a question (e.g. from To review): nothing was graded to show
        source = "no question chosen: open a cell of the query's matrix for a question's grade and prompt"
    else:
        prompt, source = commands.cell_prompt(grade_set, question, passage, query or qid, question_id)
    return {"query_id": qid, "passage_id": pid, "question_id": question_id, "question": question,
            "passage": passage, "prompt": prompt, "prompt_source": source, "steps": steps,
            "grade_set": grade_set.as_dict()}


def calibration_refusal(store: Store, refused: UsageError) -> str:
    """Why the Calibration page shows no leaderboard, in one sentence a reviewer can act on: how many topics hold
    verdicts (and which), how many stale verdicts were left out, and what to do; another refusal as it is."""
    topics = sorted(store.review.review_judgments())
    stale = sum(len(per) for per in store.review.stale_review_judgments().values())
    left = (f" {stale} stale verdict{'s' if stale != 1 else ''} (given on a text replaced since) "
            f"{'are' if stale != 1 else 'is'} left out." if stale else "")
    if len(topics) >= 2:  # e.g. verdicts on topics the grade set has no scores for
        said = refused.spelled({p: p.replace("_", " ") for p in refused.params}).rstrip(".")
        return f"Not computed: {said}.{left}"
    held = ("No topic has a reviewer verdict yet" if not topics else
            f"Only 1 topic ({topics[0]}) has reviewer verdicts")
    return (f"{held}: a prediction-powered leaderboard needs verdicts on at least 2 topics, because the size of "
            f"the judge's error, and so the interval, is estimated from how it varies between the judged topics."
            f"{left} Record verdicts on passages of {2 - len(topics)} more topic{'s' if not topics else ''} "
            f"(e.g. from To review) and reload this page.")
