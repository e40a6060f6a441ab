"""Verification reports (RUBRIC §6.7): where the grades and the rubric disagree with human judgments.

- `answers`: per question, the passages that answer it, best grade first, with the extracted answer;
- `spurious`: questions most often answered (grade >= τ) by passages judged non-relevant — candidates for
  removal or rewording;
- `uncovered`: passages judged relevant that no question answers with grade >= τ — the rubric misses them;
- `distribution`: the grade histogram of every question (and its failed grades).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from proctor.errors import UsageError
from proctor.markdown import escape
from proctor.options.analysis import VerifyOptions
from proctor.records import GradeSet
from proctor.store import Store

Row = tuple[str, str, str, int | None]

REPORTS = ("answers", "spurious", "uncovered", "distribution")
_ROW_REPORTS = ("spurious", "uncovered")
"""The reports that read only each grade's (query, passage, question, grade) `Row`, not its full record."""


def build_report(store: Store, report: str, grade_set: GradeSet, options: VerifyOptions) -> dict[str, Any]:
    """The named report of `grade_set` as data (rendered by `render_text` / `render_markdown` or dumped as
    JSON)."""
    if report not in REPORTS:
        raise UsageError(f"unknown report {report!r}; choose one of {', '.join(REPORTS)}")
    if report in _ROW_REPORTS:
        grades = _question_rows(store, grade_set, options.query)
    else:
        grades = [g for g in store.grades.records(grade_set, grade_set.step, options.query) if g.question_id]
    if not grades:
        raise UsageError(f"no per-question grades in grade set {grade_set.id} ({grade_set.method} / "
                         f"{grade_set.model})" + (f" for query {options.query}" if options.query else ""))
    questions = store.banks.question_texts()
    judgments = store.corpus.judgments()
    if report in ("spurious", "uncovered") and not judgments:
        raise UsageError(f"{store.path}: the {report} report needs human judgments (import qrels)")
    build = {"answers": _answers, "spurious": _spurious, "uncovered": _uncovered, "distribution": _distribution}
    body = build[report](grades, questions, judgments, store, options)
    return {"report": report, "grade_set": grade_set.id, "method": grade_set.method, "model": grade_set.model,
            "bank": grade_set.bank_label, "prompt_version": grade_set.prompt_version, "min_grade": options.min_grade,
            "judged_relevant": options.judged_relevant if report in ("spurious", "uncovered") else None,
            "query": options.query, **body}


def _question_rows(store: Store, grade_set: GradeSet, query: str | None) -> list[Row]:
    """The `Row`s of the grade set's per-question grades (of `query` when given): for the whole grade set read as
    bare rows (no record built, no `extra` parsed: a quarter of the time on DL19), for one query from its records
    (found through the key)."""
    if query is not None:
        return [(g.query_id, g.passage_id, g.question_id, g.grade)
                for g in store.grades.records(grade_set, grade_set.step, query) if g.question_id]
    return [row for row in store.grades.grade_rows(grade_set.id, grade_set.step) if row[2]]


def _answers(grades, questions, judgments, store, options) -> dict[str, Any]:
    per_question = defaultdict(list)
    for g in grades:
        if g.grade is not None:
            per_question[(g.query_id, g.question_id)].append(g)
    items = []
    for (qid, question_id), rows in sorted(per_question.items()):
        rows.sort(key=lambda g: (-g.grade, g.passage_id))
        items.append({"query_id": qid, "question_id": question_id, "question": questions.get(question_id),
                      "answered": sum(g.grade >= options.min_grade for g in rows), "graded": len(rows),
                      "passages": [{"passage_id": g.passage_id, "grade": g.grade, "answer": g.answer,
                                    "judgment": judgments.get(qid, {}).get(g.passage_id)}
                                   for g in rows[: options.shown]]})
    return {"questions": items}


@dataclass
class QuestionRates:
    """How often one question is answered (grade >= τ) by the passages judged relevant and by those judged
    non-relevant, among the graded ones."""

    relevant_answering: int = 0
    relevant_graded: int = 0
    non_relevant_answering: int = 0
    non_relevant_graded: int = 0

    @property
    def relevant_rate(self) -> float | None:
        """Fraction of the graded relevant passages that answer it (None: none graded)."""
        return self.relevant_answering / self.relevant_graded if self.relevant_graded else None

    @property
    def non_relevant_rate(self) -> float | None:
        """Fraction of the graded non-relevant passages that answer it (None: none graded)."""
        return self.non_relevant_answering / self.non_relevant_graded if self.non_relevant_graded else None

    @property
    def spurious(self) -> bool:
        """SPURIOUS_RULE: answered by non-relevant passages at least as often as by relevant ones."""
        rel, non = self.relevant_rate, self.non_relevant_rate
        return rel is not None and non is not None and self.non_relevant_answering > 0 and non >= rel


SPURIOUS_RULE = ("spurious: answered (grade >= τ) by a share of the passages judged non-relevant at least as large "
                 "as its share of the passages judged relevant — it does not tell them apart")
"""The review app's flag (docs/review.md has its DL19 rates). A question without graded relevant passages
cannot be compared and is not flagged."""


def question_rates(rows: Iterable[Row], judgments: dict[str, dict[str, int]], min_grade: int,
                   judged_relevant: int) -> dict[tuple[str, str], QuestionRates]:
    """Per (query, question): its answering rates on judged relevant and judged non-relevant passages."""
    out: dict[tuple[str, str], QuestionRates] = defaultdict(QuestionRates)
    for qid, pid, question_id, grade in rows:
        judged = judgments.get(qid, {}).get(pid)
        if judged is None or grade is None:
            continue
        rates = out[(qid, question_id)]
        if judged >= judged_relevant:
            rates.relevant_graded += 1
            rates.relevant_answering += grade >= min_grade
        else:
            rates.non_relevant_graded += 1
            rates.non_relevant_answering += grade >= min_grade
    return out


def uncovered_passages(rows: Iterable[Row], judgments: dict[str, dict[str, int]], min_grade: int,
                       judged_relevant: int, query: str | None = None) -> list[tuple[str, str, int, int | None]]:
    """(query, passage, judgment, best grade) of the passages judged relevant that no question answers."""
    best: dict[tuple[str, str], int] = {}
    for qid, pid, _, grade in rows:
        if grade is not None:
            best[(qid, pid)] = max(best.get((qid, pid), -1), grade)
    out = []
    for qid, per in sorted(judgments.items()):
        if query is not None and qid != query:
            continue
        for pid, rel in sorted(per.items()):
            grade = best.get((qid, pid))
            if rel >= judged_relevant and (grade is None or grade < min_grade):
                out.append((qid, pid, rel, grade))
    return out


def _spurious(rows, questions, judgments, store, options) -> dict[str, Any]:
    rates = question_rates(rows, judgments, options.min_grade, options.judged_relevant)
    items = [{"query_id": q, "question_id": k, "question": questions.get(k),
              "non_relevant_answering": r.non_relevant_answering, "non_relevant_graded": r.non_relevant_graded,
              "fraction": r.non_relevant_rate, "relevant_answering": r.relevant_answering,
              "relevant_graded": r.relevant_graded, "relevant_fraction": r.relevant_rate, "spurious": r.spurious}
             for (q, k), r in rates.items() if r.non_relevant_answering]
    items.sort(key=lambda i: (-i["non_relevant_answering"], -i["fraction"], i["question_id"]))
    per_query: dict[str, list] = defaultdict(list)
    for item in items:
        per_query[item["query_id"]].append(item)
    return {"questions": items[: options.shown * max(1, len(per_query))] if options.query is None else items,
            "most_spurious_per_query": {q: [i["question_id"] for i in rows[: options.shown]]
                                        for q, rows in sorted(per_query.items())},
            "spurious_rule": SPURIOUS_RULE}


def _uncovered(rows, questions, judgments, store, options) -> dict[str, Any]:
    texts = store.corpus.passage_texts()
    relevant = sum(1 for qid, per in judgments.items() if options.query is None or qid == options.query
                   for rel in per.values() if rel >= options.judged_relevant)
    items = [{"query_id": qid, "passage_id": pid, "judgment": rel, "best_grade": grade,
              "text": (texts.get(pid) or "")[:300]}
             for qid, pid, rel, grade in uncovered_passages(rows, judgments, options.min_grade,
                                                            options.judged_relevant, options.query)]
    return {"judged_relevant_passages": relevant, "uncovered": len(items), "passages": items}


def _distribution(grades, questions, judgments, store, options) -> dict[str, Any]:
    histograms: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for g in grades:
        histograms[(g.query_id, g.question_id)][g.grade if g.grade is not None else "failed"] += 1
    return {"questions": [{"query_id": q, "question_id": k, "question": questions.get(k),
                           "histogram": {str(grade): h.get(grade, 0) for grade in range(6)},
                           "failed": h.get("failed", 0)} for (q, k), h in sorted(histograms.items())]}


def render_markdown(data: dict[str, Any], e: Callable[[object], str] = escape) -> str:
    """A Markdown rendering of any report; every text from the data goes through `e` (escaped by default)."""
    head = (f"**{e(data['report'])}** — grade set {e(data['grade_set'])} (method={e(data['method'])}, "
            f"model={e(data['model'])}, "
            f"bank {e(data['bank'])}, prompt {e(data['prompt_version'])}), grade >= {data['min_grade']}"
            + (f", judged relevant >= {data['judged_relevant']}" if data["judged_relevant"] is not None else ""))
    lines = [head, ""]
    if data["report"] == "answers":
        for q in data["questions"]:
            lines.append(f"### {e(q['question_id'])}: {e(q['question'] or '(text not in the store)')}")
            lines.append(f"answered by {q['answered']} of {q['graded']} graded passages\n")
            lines += ["| passage | grade | judgment | answer |", "|---|---:|---:|---|"]
            lines += [f"| {e(p['passage_id'])} | {p['grade']} | {_dash(p['judgment'])} | {e(p['answer'])} |"
                      for p in q["passages"]]
            lines.append("")
    elif data["report"] == "spurious":
        lines += [f"Flagged {e(data['spurious_rule'])}.", "",
                  "| query | question | non-relevant answering | of graded | fraction | relevant fraction | "
                  "spurious | text |", "|---|---|---:|---:|---:|---:|---|---|"]
        lines += [f"| {e(q['query_id'])} | {e(q['question_id'])} | {q['non_relevant_answering']} | "
                  f"{q['non_relevant_graded']} | {q['fraction']:.2f} | {_fraction(q['relevant_fraction'])} | "
                  f"{'yes' if q['spurious'] else 'no'} | {e(q['question'])} |" for q in data["questions"]]
    elif data["report"] == "uncovered":
        lines.append(f"{data['uncovered']} of {data['judged_relevant_passages']} judged relevant passages are "
                     "answered by no question\n")
        lines += ["| query | passage | judgment | best grade | text |", "|---|---|---:|---:|---|"]
        lines += [f"| {e(p['query_id'])} | {e(p['passage_id'])} | {p['judgment']} | {_dash(p['best_grade'])} | "
                  f"{e(p['text'][:120])} |" for p in data["passages"]]
    else:
        lines += ["| query | question | " + " | ".join(str(g) for g in range(6)) + " | failed |",
                  "|---|---|" + "---:|" * 7]
        lines += [f"| {e(q['query_id'])} | {e(q['question_id'])} | " + " | ".join(str(q["histogram"][str(g)])
                                                                       for g in range(6)) + f" | {q['failed']} |"
                  for q in data["questions"]]
    return "\n".join(lines) + "\n"


def render_text(data: dict[str, Any]) -> str:
    """A plain-text rendering: the Markdown without table syntax."""
    out = []
    for line in render_markdown(data, _plain).splitlines():
        if set(line) <= set("|-: "):
            continue
        out.append(line.strip("| ").replace(" | ", "  ").replace("**", "").replace("### ", ""))
    return "\n".join(out) + "\n"


def e(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def _plain(text: object) -> str:
    return str(text if text is not None else "").replace("\n", " ")


def _fraction(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _dash(value: object) -> str:
    return "—" if value is None else str(value)
