"""What the review app asks of the layers below, through the door (`proctor.api.commands`): its store, the
judgment pool, the rubric's flags at its thresholds, what a grade set's labels rest on, the prompt of one cell,
the impact of a new bank version, "grade what is new" and the records of the review store (verdicts, drafts).
The review app's pages and routes lay this out; the store keeps the SQL."""

from __future__ import annotations

from collections import Counter
from collections.abc import Coroutine, Iterable, Mapping
from pathlib import Path
from typing import Any

from proctor.errors import UsageError
from proctor.evaluate.leaderboard_files import LeaderboardFile
from proctor.llm.config import BackendConfig
from proctor.options.backend import BackendOptions
from proctor.records import GradeSet
from proctor.store import Store
from proctor.store.review import Conflict as Conflict  # a draft's question changed since the form was shown
from proctor.store.review import VerdictBasis as VerdictBasis  # what a verdict form showed
from proctor.store.review import VerdictConflict as VerdictConflict  # a verdict given on what changed since

Row = tuple[str, str, str, int | None]
"""One grade: query, passage, question, grade."""


def review_store(path: str | Path) -> Store:
    """The store the review app works on; refused when it cannot keep reviewers' drafts, audit and verdicts."""
    store = Store.open(path)
    if store.read_only and not store.schema.names("review_"):  # a read-only store of schema 4 never reviewed
        store.close()
        raise UsageError(f"{path}: the review app needs a writable store (attempt to write a readonly database)")
    return store


def review_backend(backend: BackendOptions | None, llm: str) -> BackendConfig:
    """The backend that grades what is new: `llm` with `backend`'s options, checked."""
    return BackendConfig.of(backend, llm)


def official_board(path: str | Path) -> LeaderboardFile:
    """The official leaderboard of the impact view (JSON `{run: rank}` or TSV of scores)."""
    from proctor.evaluate.leaderboard_files import read_official

    return read_official(path)


def judgment_pool(store: Store, depth: int) -> dict[str, list[str]]:
    """`{query: passages}`: those ranked by any run within `depth`, then the judged ones no run ranked as high."""
    from proctor.grading.pool import judgment_pool as pool

    return pool(store, depth)


def expected_pairs(store: Store, bank: str, version: str, pool: Mapping[str, list[str]]) -> int:
    """The pairs a grade set of this bank version grades: every pool passage of a query times its questions
    (spurious ones left out)."""
    from proctor.io.banks import is_spurious

    items = Counter(q["query_id"] for q in store.banks.bank_questions(bank, version) if not is_spurious(q))
    return sum(len(pool.get(qid, [])) * n for qid, n in items.items())


def rubric_flags(store: Store, grade_set: GradeSet, min_grade: int, judged_relevant: int) -> tuple[Counter, Counter]:
    """Per query: the spurious questions and the uncovered passages of the grade set (`proctor verify`'s
    spurious and uncovered reports) at these thresholds."""
    from proctor.analyze.verify import question_rates, uncovered_passages

    rows = list(store.grades.grade_rows(grade_set.id, grade_set.step))
    judgments = store.corpus.judgments()
    rates = question_rates(rows, judgments, min_grade, judged_relevant)
    return (Counter(q for (q, _), r in rates.items() if r.spurious),
            Counter(q for q, *_ in uncovered_passages(rows, judgments, min_grade, judged_relevant)))


def query_flags(rows: Iterable[Row], qid: str, judged: Mapping[str, int], min_grade: int,
                judged_relevant: int) -> tuple[dict, set[str], dict[str, int], str]:
    """One query's grades read as the rubric's flags: each question's answer rates (`QuestionRates` by
    `(query, question)`), the uncovered passages, the passages' EXAM labels, and the rule that flags a question."""
    from proctor.analyze.verify import SPURIOUS_RULE, question_rates, uncovered_passages
    from proctor.evaluate.labels import exam_labels

    rows = list(rows)
    rates = question_rates(rows, {qid: dict(judged)}, min_grade, judged_relevant)
    uncovered = {p for _, p, *_ in uncovered_passages(rows, {qid: dict(judged)}, min_grade, judged_relevant)}
    return rates, uncovered, exam_labels(rows).get(qid, {}), SPURIOUS_RULE


def labels_rest_on(store: Store, grade_set: GradeSet, pool: Mapping[str, list[str]]) -> dict[str, Any] | None:
    """What the grade set's labels rest on against the judgment pool: `{summary, warnings}` (None for a grade set
    of generated answers: no passage labels)."""
    from proctor.evaluate.sources import exam_qrels
    from proctor.evaluate.stored_coverage import labels_coverage

    try:
        labels = exam_qrels(store, grade_set)
    except UsageError:  # grades of generated answers: no passage labels
        return None
    coverage = labels_coverage(store, grade_set, labels, pool, pool_is="the judgment pool: judged passages and the "
                               "runs' first passages")
    return {"summary": coverage.summary(), "warnings": coverage.warnings}


def cell_prompt(grade_set: GradeSet, question: str, passage: str, query: str, question_id: str
                ) -> tuple[str | None, str]:
    """The prompt of one pair as the grade set's method renders it, and where it comes from (no prompt for a step
    without a packaged template: imported grades)."""
    from proctor.methods import get_method

    try:
        template = get_method(grade_set.step).template
        prompt = template.render(question, passage, {"query": query, "criterion_name": question_id})
        return prompt, f"template {template.name} version {template.version} (the context is shown uncut)"
    except UsageError:  # a step without a packaged template (imported grades): no prompt to show
        return None, f"no packaged template for step {grade_set.step}: the grades were imported"


def probe_table(report: Mapping[str, Any] | None) -> tuple[list[str], list[list[object]]]:
    """A stored probe report as the header and rows of its table (as `analyze` shows it; no rows without one)."""
    from proctor.analyze.robustness_section import HEADER, probe_rows

    return HEADER, probe_rows(dict(report)) if report else []


def bank_version_of(questions: list[dict[str, Any]]) -> str:
    """The version a bank of these questions gets (the digest of its content)."""
    from proctor.io.banks import Bank

    return Bank(questions=questions).version


def qrels_text(judgments: Mapping[str, Mapping[str, int]]) -> str:
    """Judgments as TREC qrels lines (`qid 0 docid rel`), in a stable order."""
    import io

    from proctor.io.trec import write_qrels

    out = io.StringIO()
    write_qrels({q: dict(per) for q, per in judgments.items()}, out)
    return out.getvalue()


def queue_for_review(store: Store, grade_set: GradeSet, *, min_grade: int, depth: int, limit: int) -> dict[str, Any]:
    """The "to review" queue of a grade set (an ensemble whose members changed derived again first) at the app's
    threshold (refused off the grade set's scale)."""
    from proctor.api.trust import review_queue
    from proctor.gradesets.ensemble import check_min_grade, refreshed

    grade_set = refreshed(store, grade_set)
    check_min_grade(grade_set, min_grade, "the threshold")  # e.g. 4 on a 0-2 grade set
    return review_queue(store, grade_set.id, min_grade=min_grade, depth=depth, limit=limit)


def review_impact(store: Store, old: GradeSet, new: GradeSet, measure: str, min_grade: int,
                  official: LeaderboardFile | None) -> dict[str, Any]:
    """Before (grade set `old`, its bank version's questions) against after (`new`): labels that changed, each
    system's score and rank before and after, correlation with the official leaderboard, and Kendall's tau
    between the two leaderboards (`between`)."""
    from proctor.analyze.bank_impact import bank_impact
    from proctor.analyze.leaderboard_correlation import correlate_leaderboards
    from proctor.evaluate.sources import load_runs
    from proctor.options.banks import BankImpactOptions

    if old.bank is None or new.bank is None:
        raise UsageError("both grade sets must grade a bank")
    old_ids = {q["question_id"] for q in store.banks.bank_questions(old.bank, old.bank_version)}
    new_ids = {q["question_id"] for q in store.banks.bank_questions(new.bank, new.bank_version)}
    result = bank_impact(store, old, new, old_ids, new_ids, load_runs(store, None),
                         options=BankImpactOptions(measure=measure, min_grade=min_grade, listed=200), official=official)
    before = {s["system"]: s["old_score"] for s in result["systems"] if s["old_score"] is not None}
    after = {s["system"]: s["new_score"] for s in result["systems"] if s["new_score"] is not None}
    between = correlate_leaderboards(LeaderboardFile(before), LeaderboardFile(after), samples=0)
    result["between"] = {k: between[k] for k in ("kendall", "spearman", "tau_ap", "n_systems")}
    return result


def refuse_regrading(grade_set: GradeSet) -> None:
    """A grade set "grade what is new" cannot start from (an ensemble: derived, never graded)."""
    from proctor.analyze.bank_impact import refuse_derived

    refuse_derived(grade_set)


def grade_new_version(store: Store, old: GradeSet, new: GradeSet, config: BackendConfig) -> Coroutine[Any, Any, list]:
    """Grading `new` (a newer version of `old`'s bank) the way `old` was graded, with `config`'s backend, checked
    now (it must grade with `old`'s model and prompt, and its endpoint answer); the grades of unchanged
    questions are carried over. Returns the coroutine that grades (run it on an event loop of your own); it
    returns the summaries, one per step."""
    from proctor.analyze.bank_impact import check_backend, impact_request
    from proctor.grading import grade

    check_backend(old, config)  # before any loop runs: the check runs one of its own
    request = impact_request(old, new, config, progress=False)

    async def graded() -> list:
        _, summaries = await grade(store, request, new)
        return summaries

    return graded()
