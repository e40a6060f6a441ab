"""Multi-step methods declared as lists of steps. Each step is either one prompt (a registered
single-prompt method, its variables taken from earlier steps' results) or an aggregation computed without
an LLM. The runner (`proctor.grading.runner`) runs them in order and carries every step's results in memory.

- `four-prompts`: the four criteria (002 Table 2), then `--aggregate prompt` (Table 3), `sum` (Table 4) or
  `naive-bayes` (Gaussian NB, leave-one-query-out);
- `four-prompts-cot`: Sun's yes/no check, then Exactness+Coverage (yes) or Topicality+Contextual Fit (no),
  then the Table 5 prompt for 2-vs-3 or 0-vs-1;
- `query-gen`: a query generated from the passage, then its similarity to the real query (0-3);
- `qa --verify llm`: the answer (`qa`), then for every well-formed answer to a question with an answer key
  the LLM's verdict whether it matches the key (`qa-verify`), then the label (`qa-llm`): the verdict where
  one was asked, the answer step's grade otherwise (no key: answered; ill-formed or unanswerable: wrong).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from proctor.errors import UsageError
from proctor.methods.aggregate import CRITERIA, SUM_THRESHOLDS, cross_validated, sum_label
from proctor.methods.base import CORRECT, FAILED, WRONG
from proctor.methods.qa import is_ill_formed
from proctor.methods.relevance import INVALID
from proctor.methods.unanswerable import is_unanswerable
from proctor.options.grading import GradingOptions

Key = tuple[str, str, str]
Results = dict[str, dict[Key, tuple[int | None, str | None, str]]]
"""`{step: {(query, passage, item): (grade, answer, status)}}` of the usable grades of every step so far."""
Variables = Callable[[str, str, str], dict[str, str] | None]
"""Extra template variables for (query, passage, item); None skips the pair in this step."""


@dataclass(frozen=True)
class Aggregated:
    """One label computed without an LLM."""

    query_id: str
    passage_id: str
    grade: int | None
    extra: dict[str, Any]
    item: str = ""
    status: str = "aggregated"
    answer: str | None = None


@dataclass(frozen=True)
class Step:
    """One step: `prompt` names a registered single-prompt method; without it, `aggregate` computes the
    step's grades from earlier results (and the human judgments, for trained aggregations)."""

    name: str
    prompt: str | None = None
    uses: Callable[[Results], Variables] | None = None
    aggregate: Callable[[Results, dict[str, dict[str, int]]], list[Aggregated]] | None = None
    version: str = ""
    needs_judgments: bool = False
    params: dict[str, Any] = field(default_factory=dict)


def _criteria_by_pair(results: Results, names=CRITERIA) -> dict[tuple[str, str], dict[str, int]]:
    out: dict[tuple[str, str], dict[str, int]] = {}
    for (qid, pid, criterion), (grade, *_) in results.get("criteria", {}).items():
        if grade is not None:
            out.setdefault((qid, pid), {})[criterion] = grade
    return {key: found for key, found in out.items() if all(c in found for c in names)}


def _all_criteria(results: Results) -> Variables:
    complete = _criteria_by_pair(results)

    def variables(qid: str, pid: str, _: str) -> dict[str, str] | None:
        found = complete.get((qid, pid))
        return {c: str(found[c]) for c in CRITERIA} if found else None
    return variables


def _sum(thresholds: tuple[int, int, int]):
    def aggregate(results: Results, _: dict) -> list[Aggregated]:
        return [Aggregated(q, p, sum_label([g[c] for c in CRITERIA], thresholds),
                           {"criteria": g, "sum": sum(g.values())})
                for (q, p), g in sorted(_criteria_by_pair(results).items())]
    return aggregate


def _naive_bayes(results: Results, judgments: dict[str, dict[str, int]]) -> list[Aggregated]:
    complete = _criteria_by_pair(results)
    data = [(q, p, tuple(float(g[c]) for c in CRITERIA), judgments.get(q, {}).get(p))
            for (q, p), g in sorted(complete.items())]
    return [Aggregated(q, p, label, {"criteria": complete[(q, p)], "trained_on_rows": n, "held_out_query": q})
            for (q, p), (label, n) in cross_validated(data).items()]


_WANTED = {1: ("Exactness", "Coverage"), 0: ("Topicality", "Contextual Fit")}


def _verdicts(results: Results) -> dict[tuple[str, str], int]:
    """The check's yes/no verdicts (an invalid reply is no verdict: its passage gets label 0, invalid)."""
    return {(q, p): g for (q, p, _), (g, _, status) in results.get("sun", {}).items()
            if g is not None and status != INVALID}


def _invalid_checks(results: Results, _: dict) -> list[Aggregated]:
    return [Aggregated(q, p, 0, {"reason": "the yes/no check was invalid: label 0 (002 §4.1)"}, status=INVALID)
            for (q, p, _), (_, _, status) in sorted(results.get("sun", {}).items()) if status == INVALID]


def _cot_subset(results: Results) -> Variables:
    verdict = _verdicts(results)

    def variables(qid: str, pid: str, criterion: str) -> dict[str, str] | None:
        check = verdict.get((qid, pid))
        return {} if check is not None and criterion in _WANTED[check] else None
    return variables


def _cot_final(check: int) -> Callable[[Results], Variables]:
    def uses(results: Results) -> Variables:
        verdict = _verdicts(results)
        grades = _criteria_by_pair(results, _WANTED[check])

        def variables(qid: str, pid: str, _: str) -> dict[str, str] | None:
            found = grades.get((qid, pid))
            if verdict.get((qid, pid)) != check or found is None:
                return None
            return {c: str(found[c]) for c in _WANTED[check]}
        return variables
    return uses


def _generated_query(results: Results) -> Variables:
    generated = {(q, p): answer for (q, p, _), (_, answer, _) in results.get("query-gen-query", {}).items()
                 if answer}

    def variables(qid: str, pid: str, _: str) -> dict[str, str] | None:
        text = generated.get((qid, pid))
        return {"generated_query": text} if text else None
    return variables


def _checked(status: str, answer: str | None) -> bool:
    """Whether the LLM is asked about an answer: an edit-distance verdict against a key, well-formed."""
    return status in (CORRECT, WRONG) and bool(answer) and not (is_ill_formed(answer or "")
                                                                or is_unanswerable(answer or ""))


def _verification_inputs(results: Results) -> Variables:
    answers = results.get("qa", {})

    def variables(qid: str, pid: str, item: str) -> dict[str, str] | None:
        found = answers.get((qid, pid, item))
        if found is None or not _checked(found[2], found[1]):
            return None
        return {"answer": (found[1] or "").strip()}
    return variables


def _verified(results: Results, _: dict) -> list[Aggregated]:
    verdicts = results.get("qa-verify", {})
    out = []
    for (qid, pid, item), (grade, answer, status) in sorted(results.get("qa", {}).items()):
        if not _checked(status, answer):
            out.append(Aggregated(qid, pid, grade, {"verification": "none needed"}, item, status, answer))
            continue
        verdict = verdicts.get((qid, pid, item))
        extra = {"verification": "llm", "edit_distance_verdict": status,
                 "verifier_reply": verdict[1] if verdict else None}
        if verdict is None:
            out.append(Aggregated(qid, pid, None, {**extra, "reason": "no usable verifier reply"}, item, FAILED,
                                  answer))
        else:
            out.append(Aggregated(qid, pid, verdict[0], extra, item, CORRECT if verdict[0] else WRONG, answer))
    return out


AGGREGATIONS = ("prompt", "sum", "naive-bayes")


def declared_steps(method: str, *, aggregate: str = GradingOptions.aggregate,
                   thresholds: tuple[int, ...] = SUM_THRESHOLDS, verify: str = GradingOptions.verify
                   ) -> list[Step]:
    """The steps of `method` (a single step for single-prompt methods)."""
    if method == "qa" and verify == "llm":
        return [Step("qa", "qa"), Step("qa-verify", "qa-verify", uses=_verification_inputs),
                Step("qa-llm", aggregate=_verified, version="verdict-or-answer-grade")]
    if method == "four-prompts":
        if aggregate not in AGGREGATIONS:
            raise UsageError(f"{{aggregate}} must be one of {', '.join(AGGREGATIONS)}", params=("aggregate",))
        if aggregate == "prompt":
            return [Step("criteria", "criteria"), Step("four-prompts", "four-prompts", uses=_all_criteria)]
        if aggregate == "sum":
            version = "sum>=" + "/".join(map(str, thresholds))
            return [Step("criteria", "criteria"), Step("four-prompts-sum", aggregate=_sum(thresholds),
                                                       version=version, params={"thresholds": list(thresholds)})]
        return [Step("criteria", "criteria"),
                Step("four-prompts-naive-bayes", aggregate=_naive_bayes, version="gaussian-nb-leave-one-query-out",
                     needs_judgments=True)]
    if method == "four-prompts-cot":
        return [Step("sun", "sun"), Step("criteria", "criteria", uses=_cot_subset),
                Step("four-prompts-cot", "cot-relevant", uses=_cot_final(1)),
                Step("four-prompts-cot", "cot-nonrelevant", uses=_cot_final(0)),
                Step("four-prompts-cot", aggregate=_invalid_checks, version="invalid-check-label-0")]
    if method == "query-gen":
        return [Step("query-gen-query", "query-gen-query"), Step("query-gen", "query-gen", uses=_generated_query)]
    return [Step(method, method)]
