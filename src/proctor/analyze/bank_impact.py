"""What a bank change does: the labels that change, each system's score, and the leaderboard correlation.

Bank B gets a grade set of its own beside A's (same method, model, prompt version and parameters; B's
version of the bank): the grades of questions B keeps unchanged are carried over, whatever B adds is graded
(cached replies reused), and labels and leaderboards are computed once from each grade set."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from proctor.analyze.leaderboard_correlation import correlate_leaderboards
from proctor.errors import UsageError
from proctor.evaluate.labels import exam_labels
from proctor.evaluate.leaderboard import measure_leaderboard
from proctor.evaluate.leaderboard_files import LeaderboardFile
from proctor.evaluate.measures import parse_measure
from proctor.io.banks import Bank
from proctor.io.runs import Ranked
from proctor.llm.config import BackendConfig
from proctor.markdown import escape
from proctor.options.banks import BankImpactOptions
from proctor.records import GradeSet
from proctor.store import Store


def prepare_impact(store: Store, old_set: GradeSet, path: str, bank: Bank, config: BackendConfig | None, *,
                   name: str | None = None, progress: bool | None = None) -> tuple[GradeSet, Any]:
    """Import B (as the next version of A's bank unless named otherwise), make its grade set, carry over
    what A's grade set graded of B's unchanged questions, and grade the rest with `config`'s backend.
    Returns B's grade set and the grading summary of its label step (None when nothing was graded)."""
    from proctor.importing import ImportOptions, import_files

    refuse_derived(old_set)
    ids = [q["question_id"] for q in bank.questions]
    owner = store.banks.question_owner(ids[0]) if ids else None
    name = name or old_set.bank or (owner[0] if owner else None) or Path(path).name.split(".")[0]
    same = _unchanged(store, old_set, bank)
    graded = {key[2] for key in store.grades.graded(old_set.id, old_set.step)}
    missing = set(ids) - (same & graded)
    if missing and config is None:  # refused before anything is written
        raise UsageError(f"bank B has {len(missing)} questions without grades in grade set {old_set.id} "
                         f"({old_set.method} / {old_set.model}): pass {{llm}} SPEC to grade them", params=("llm",))
    if missing:
        check_backend(old_set, config)  # type: ignore[arg-type]
    import_files(store, "bank", [path], ImportOptions(bank_name=name))
    new_set = GradeSet(old_set.method, old_set.model, old_set.prompt_version, name, bank.version, old_set.params,
                       old_set.step, {"derived_from": old_set.id, "bank_impact": True})
    with store.transaction():
        store.grades.ensure_grade_set(new_set)
        for step in store.grades.step_statuses(old_set.id):
            store.grades.carry_grades(new_set.id, old_set.id, step, same)
    if not missing:
        return new_set, None
    assert config is not None
    return new_set, _grade_missing(store, old_set, new_set, config, progress)


def _unchanged(store: Store, old_set: GradeSet, bank: Bank) -> set[str]:
    """Ids of B's questions that A's grade set graded unchanged (same query, text and answers); for grades
    imported without a bank, the ids decide (the Workbench's ids are digests of the text)."""
    if old_set.bank is None or old_set.bank_version is None:
        return {q["question_id"] for q in bank.questions}
    stored = {q["question_id"]: q for q in store.banks.bank_questions(old_set.bank, old_set.bank_version)}
    return {q["question_id"] for q in bank.questions if q["question_id"] in stored
            and all(stored[q["question_id"]].get(k) == q.get(k) for k in ("query_id", "text", "answers"))}


def _grade_missing(store: Store, old_set: GradeSet, new_set: GradeSet, config: BackendConfig, progress):
    from proctor.grading import grade

    request = impact_request(old_set, new_set, config, progress)
    _, summaries = asyncio.run(grade(store, request, new_set))
    return summaries[-1]


def refuse_derived(grade_set: GradeSet) -> None:
    """An ensemble is derived from its members, never graded: bank B's questions cannot be graded the way it
    was. Refused before anything is written."""
    if grade_set.is_ensemble:
        members = ", ".join(grade_set.members)
        raise UsageError(f"grade set {grade_set.id} is an ensemble (of {members}): it is derived, not graded, so B's "
                         "questions cannot be graded the way it was; run `proctor bank impact` on each member, then "
                         "`proctor ensemble` of the new grade sets")


def check_backend(old_set: GradeSet, config: BackendConfig) -> None:
    """`config`'s backend grades with A's grade set's model and prompt, and its endpoint answers: refused
    (UsageError, BackendUnavailable) before anything is written, so a refused `bank impact` changes nothing."""
    from proctor.grading import GradeRequest
    from proctor.grading.recorded import load_recorded
    from proctor.grading.runner import prompt_version
    from proctor.llm.health import check_endpoint

    request = GradeRequest(old_set.method, config, aggregate=old_set.params.get("aggregate", "prompt"))
    backend = config.build(old_set.method, recorded=load_recorded)

    async def check() -> tuple[str, str]:
        try:
            model, version = backend.model, prompt_version(request.choice())
            if (model, version) == (old_set.model, old_set.prompt_version):
                await check_endpoint(backend)
            return model, version
        finally:
            await backend.aclose()

    model, version = asyncio.run(check())
    if (model, version) != (old_set.model, old_set.prompt_version):
        raise UsageError(f"{{llm}} {config.spec} grades with model {model} and prompt {version}, but grade set "
                         f"{old_set.id} was made with model {old_set.model} and prompt {old_set.prompt_version}: "
                         "B's new questions must be graded the same way (or grade bank B as a grade set of its own "
                         "with `proctor grade`)", params=("llm",))


def impact_request(old_set: GradeSet, new_set: GradeSet, config: BackendConfig, progress=None):
    """The grading request that grades `new_set`'s bank version the way `old_set` was graded (`check_backend`
    has checked the backend)."""
    from proctor.grading import GradeOptions, GradeRequest

    return GradeRequest(old_set.method, config, GradeOptions(bank=f"{new_set.bank}@{new_set.bank_version}",
                                                             progress=progress),
                        aggregate=old_set.params.get("aggregate", "prompt"))


def bank_impact(
    store: Store, old_set: GradeSet, new_set: GradeSet, old_ids: set[str], new_ids: set[str], runs: Ranked, *,
    options: BankImpactOptions = BankImpactOptions(), official: LeaderboardFile | None = None,  # noqa: B008
) -> dict[str, Any]:
    """Compare labels and leaderboards of A's grade set (A's questions) and B's (B's questions), by `options`'
    measure at its relevance level, listing at most its `listed` changed labels."""
    measure, min_grade, limit = options.measure, options.min_grade, options.listed
    old_labels = exam_labels([r for r in store.grades.grade_rows(old_set.id, old_set.step) if r[2] in old_ids])
    new_labels = exam_labels([r for r in store.grades.grade_rows(new_set.id, new_set.step) if r[2] in new_ids])
    changed = []
    for qid in sorted(set(old_labels) | set(new_labels)):
        before, after = old_labels.get(qid, {}), new_labels.get(qid, {})
        for pid in sorted(set(before) | set(after)):
            if before.get(pid) != after.get(pid):
                changed.append({"query_id": qid, "passage_id": pid, "old_label": before.get(pid),
                                "new_label": after.get(pid)})
    spec = parse_measure(measure)
    level = min_grade if spec.measure.uses_relevance_level else None
    old_board = measure_leaderboard(runs, old_labels, spec, level)
    new_board = measure_leaderboard(runs, new_labels, spec, level)
    old_scores, new_scores = old_board.scores(), new_board.scores()
    old_rank = {e.system: i + 1 for i, e in enumerate(old_board.entries)}
    new_rank = {e.system: i + 1 for i, e in enumerate(new_board.entries)}
    systems = [{"system": s, "old_score": old_scores.get(s), "new_score": new_scores.get(s),
                "change": (new_scores.get(s) or 0.0) - (old_scores.get(s) or 0.0),
                "old_rank": old_rank.get(s), "new_rank": new_rank.get(s)} for s in sorted(new_scores, key=new_rank.get)]
    result: dict[str, Any] = {
        "method": old_set.method, "model": old_set.model, "measure": spec.name, "min_grade": level,
        "grade_sets": {"old": old_set.id, "new": new_set.id},
        "banks": {"old": old_set.bank_label, "new": new_set.bank_label},
        "questions": {"old": len(old_ids), "new": len(new_ids)},
        "changed_labels": len(changed), "changed": changed[:limit],
        "label_changes_by_direction": {"up": sum(1 for c in changed if _gain(c) > 0),
                                       "down": sum(1 for c in changed if _gain(c) < 0)},
        "systems": systems,
    }
    if official is not None:
        result["correlation"] = {
            "old": _corr(correlate_leaderboards(LeaderboardFile(old_scores), official, samples=0)),
            "new": _corr(correlate_leaderboards(LeaderboardFile(new_scores), official, samples=0)),
        }
    return result


def _gain(change: dict[str, Any]) -> int:
    return (change["new_label"] or 0) - (change["old_label"] or 0)


def _corr(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result[k] for k in ("spearman", "kendall", "tau_ap", "n_systems")}


def render_impact(result: dict[str, Any]) -> str:
    """A Markdown summary."""
    lines = [f"**Bank impact** — grade set {result['grade_sets']['old']} ({escape(result['banks']['old'])}) → "
             f"{result['grade_sets']['new']} ({escape(result['banks']['new'])}); method={result['method']}, "
             f"model={escape(result['model'])}, {result['measure']}"
             + (f" at grade >= {result['min_grade']}" if result["min_grade"] is not None else "")
             + f"; questions {result['questions']['old']} → {result['questions']['new']}", "",
             f"{result['changed_labels']} passage labels change ({result['label_changes_by_direction']['up']} up, "
             f"{result['label_changes_by_direction']['down']} down)."]
    if "correlation" in result:
        old, new = result["correlation"]["old"], result["correlation"]["new"]
        lines.append(f"Correlation with the official leaderboard: Spearman {_f(old['spearman'])} → "
                     f"{_f(new['spearman'])}, Kendall {_f(old['kendall'])} → {_f(new['kendall'])} "
                     f"({new['n_systems']} systems).")
    lines += ["", "| query | passage | old label | new label |", "|---|---|---:|---:|"]
    lines += [f"| {escape(c['query_id'])} | {escape(c['passage_id'])} | {_f(c['old_label'])} | {_f(c['new_label'])} |"
              for c in result["changed"]]
    if result["changed_labels"] > len(result["changed"]):
        lines.append(f"\n({result['changed_labels'] - len(result['changed'])} more changes in the JSON output)")
    lines += ["", "| system | old score | new score | change | old rank | new rank |", "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {escape(s['system'])} | {_f(s['old_score'])} | {_f(s['new_score'])} | {s['change']:+.4f} | "
              f"{s['old_rank']} | {s['new_rank']} |" for s in result["systems"]]
    return "\n".join(lines) + "\n"


def _f(value) -> str:
    if value is None:
        return "—"
    return f"{value:.4f}" if isinstance(value, float) else str(value)
