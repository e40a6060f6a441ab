"""Proctor's results as AutoJudge's containers: leaderboards (per-topic and `all` rows, each measure described
for `measures.yml`), qrels (document id: the md5 of the sentence text) and nugget banks. The `all` rows
AutoJudge computes must equal Proctor's scores: a difference is an error, never a silently other number."""

from __future__ import annotations

import math
import tempfile
from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import replace
from pathlib import Path
from typing import Any

from autojudge_base import (
    Leaderboard,
    LeaderboardBuilder,
    LeaderboardSpec,
    MeasureSpec,
    NuggetBanks,
    Qrels,
    QrelsSpec,
    build_qrels,
    doc_id_md5,
)
from autojudge_base.nugget_data import load_nugget_banks_generic

from proctor import api
from proctor.api import Store
from proctor.api.autojudge import autojudge_lines, nuggetizer_lines, write_bank
from proctor.api.types import Leaderboard as ProctorBoard
from proctor.autojudge.session import note
from proctor.autojudge.settings import COVER_MEASURES, JudgeSettings
from proctor.errors import UsageError
from proctor.records import GradeSet

TOLERANCE = 1e-9


def proctor_board(store: Store, grade_set: GradeSet, settings: JudgeSettings, name: str, runs: list[str],
                  log: Callable[[str], None] = note) -> ProctorBoard:
    """The Proctor leaderboard of `runs` behind one measure name of the settings (a system's score does not
    depend on the other systems; n-EXAM's pool is every graded sentence in the store). When no sentence of the
    pool reaches τ, n-EXAM is 0/0: written as 0 wherever EXAM-Cover is (also 0 then), with a note."""
    labels = api.LabelChoice(grade_set=grade_set.id, min_questions=settings.min_questions)
    board = api.leaderboard(store, measure_string(name, settings), labels=labels, min_grade=settings.min_grade,
                            missing="zero")
    d = board.description
    if board.kind == "cover" and d.get("normalize") and not any(e.per_query for e in board.entries):
        cover = proctor_board(store, grade_set, settings, f"Cover(rel={d['min_grade']},missing={d['missing']})"
                              f"@{d['budget']}", runs)
        if cover.entries:
            log(f"n-EXAM: no sentence of the pool reaches grade >= {settings.min_grade} on any topic, so n-EXAM is 0/0 "
                "(nothing to normalise by); written as 0 for every run and topic, as EXAM-Cover is")
            board = replace(board, entries=[replace(e, score=0.0, per_query=dict.fromkeys(e.per_query, 0.0))
                                            for e in cover.entries],
                            description={**board.description, "undefined": "the pool covers nothing: written as 0"})
    return replace(board, entries=[e for e in board.entries if e.system in set(runs)])


def measure_string(name: str, settings: JudgeSettings) -> str:
    """A measure name of the settings as the one registry (`api.measures()`) reads it: AutoJudge's `EXAM-Cover`
    and `n-EXAM` take the settings' budget (`EXAM-Cover@20` is `Cover(rel=T)@20`, T the settings' min_grade);
    `nuggets:SCORE`, `citations:SCORE`, `Cover(rel=3)@20`, `P@20`, ... are read as they are."""
    return f"{name}@{settings.budget}" if name in COVER_MEASURES else name


def describe_measure(name: str, board: ProctorBoard, settings: JudgeSettings) -> str:
    """What the measure is and what it rests on (the `description` in `measures.yml`)."""
    d = board.description
    normalized = d.get("normalize")
    source = (f"Grade set {d.get('grade_set')} ({d.get('method')} / {d.get('model')}, prompt "
              f"{d.get('prompt_version')}, bank {d.get('bank')}).")
    tau, k = d.get("min_grade"), d.get("budget")
    if board.kind == "cover" and not normalized:
        text = (f"EXAM-Cover@{k} (EXAM, Sander & Dietz 2021): per topic, the fraction of the topic's questions that "
                f"some sentence among the response's first {k} answers with grade >= {tau}; a topic without a "
                "response counts 0.")
    elif board.kind == "cover":
        text = (f"n-EXAM@{k}: EXAM-Cover normalised by what {_normaliser(d)} covers, a ratio of sums over "
                "topics; per-topic values are scaled so that their mean is that ratio."
                + (" No sentence of the pool reaches the threshold: 0/0, written as 0." if d.get("undefined") else ""))
    elif board.kind == "nuggets":
        text = (f"AutoNuggetizer score {d.get('score')} of the nugget assignments (support 1, partial support 0.5 "
                "except in strict scores; vital nuggets weigh 2 in weighted).")
    elif board.kind == "citations":
        text = f"Citation support {d.get('score')}: the cited passages' support of the citing sentences."
    else:
        text = (f"{name} on EXAM-Qrels: a sentence's label is the "
                f"{'highest' if settings.min_questions == 1 else f'{settings.min_questions}-th largest'} grade over "
                f"the topic's questions, relevant at grade >= {settings.min_grade} (trec_eval semantics; nDCG uses the "
                "graded labels); the response's sentences in order are the ranking.")
    return f"{text} {source}"


def _normaliser(description: dict[str, Any]) -> str:
    """What n-EXAM divides by, in words."""
    gold = description.get("gold_run")
    if gold:
        return f"the run {gold}"
    per_query = " (the mean of per-topic ratios)" if description.get("normalize") == "pool-per-query" else ""
    return f"the whole graded pool{per_query}"


def to_leaderboard(store: Store, grade_set: GradeSet, settings: JudgeSettings, topic_ids: list[str],
                   runs: list[str], empty: Collection[tuple[str, str]] = (), log: Callable[[str], None] = note
                   ) -> Leaderboard:
    """AutoJudge's leaderboard of `runs` for the measures the settings name, checked against Proctor's scores;
    an empty answer (`empty`: run, topic) is a row of zeros."""
    boards = {name: proctor_board(store, grade_set, settings, name, runs, log) for name in settings.measures}
    spec = LeaderboardSpec(measures=tuple(MeasureSpec(name, float, describe_measure(name, board, settings))
                                          for name, board in boards.items()))
    wanted = set(topic_ids)
    answered = store.corpus.ranked_lists()
    rows: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for name, board in boards.items():
        for entry in board.entries:
            for topic, value in entry.per_query.items():
                # a topic the run did not answer is AutoJudge's to fill (on_missing), not Proctor's zero
                if topic in wanted and topic in answered.get(entry.system, {}):
                    rows[(entry.system, topic)][name] = value
    for run, topic in empty:
        if topic in wanted and run in runs:
            rows[(run, topic)] = dict.fromkeys(boards, 0.0)
    partial = sorted(key for key, values in rows.items() if len(values) != len(boards))
    if partial:
        run, topic = partial[0]
        raise UsageError(f"{len(partial)} (run, topic) pairs have some measures but not all, e.g. ({run}, {topic}): "
                         f"{sorted(rows[partial[0]])} of {sorted(boards)}")
    builder = LeaderboardBuilder(spec)
    for (run, topic), values in sorted(rows.items()):
        builder.add(run_id=run, topic_id=topic, values=values)
    try:
        result = builder.build(expected_topic_ids=topic_ids, on_missing=settings.on_missing)  # type: ignore[arg-type]
    except ValueError as e:  # on_missing="error"
        raise UsageError(f"on_missing=error: {e}") from None
    check_all_rows(result, boards, wanted, empty)
    return result


def check_all_rows(result: Leaderboard, boards: dict[str, ProctorBoard], topics: set[str],
                   empty: Collection[tuple[str, str]] = ()) -> None:
    """Every `all` value AutoJudge computed equals Proctor's score of that run over the judged topics (else
    AutoJudge counts topics as 0 that Proctor does not score: say which; an empty answer scores 0)."""
    all_rows = {e.run_id: e.values for e in result.entries if e.topic_id == result.all_topic_id}
    for name, board in boards.items():
        for entry in board.entries:
            value = all_rows.get(entry.system, {}).get(name)
            if value is None:
                continue
            unscored = sorted(topics - set(entry.per_query) - {t for r, t in empty if r == entry.system})
            if board.kind == "cover" and board.description.get("normalize") and set(entry.per_query) - topics:
                raise UsageError(f"n-EXAM is a ratio over the {len(entry.per_query)} topics of the store's bank, "
                                 f"but this run judges {len(topics)}: judge them all, or give this run its own "
                                 "store (setting store)")
            expected = math.fsum(entry.per_query.get(t, 0.0) for t in topics) / len(topics)
            if not unscored and math.isclose(value, expected, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
                continue
            raise UsageError(
                f"measure {name}, run {entry.system}: AutoJudge's 'all' row would be {value:.6f} but Proctor's "
                f"score is {expected:.6f}: AutoJudge counts {len(unscored)} topics as 0 that Proctor does not "
                f"score ({', '.join(unscored[:10])}), e.g. topics without questions in the bank or without "
                "graded sentences. Give a bank for every topic, or judge only the topics it covers (auto-judge's topic "
                "option)")


def to_qrels(store: Store, grade_set: GradeSet, settings: JudgeSettings, topic_ids: list[str],
             sentences: dict[str, str], empty: Collection[tuple[str, str]] = ()) -> Qrels:
    """EXAM-Qrels of the sentences of this run's responses (`sentences`: passage id → the text as the report
    gives it); the document id is the md5 of that text, as `autojudge_base.doc_id_md5`. An empty answer is the
    empty text, label 0 (so a topic only answered empty still has qrels, as AutoJudge's runner requires)."""
    labels = api.labels(store, api.LabelChoice(grade_set=grade_set.id, min_questions=settings.min_questions),
                        coverage=False).qrels
    stored = store.corpus.passage_texts()
    wanted = set(topic_ids)
    records = [(topic, doc_id_md5(sentences[pid]), label) for topic, per in sorted(labels.items()) if topic in wanted
               for pid, label in sorted(per.items()) if pid in sentences]
    records += sorted({(topic, doc_id_md5(""), 0) for _, topic in empty if topic in wanted})
    altered = [pid for pid in sentences if stored.get(pid) not in (sentences[pid], sentences[pid].strip())]
    if altered:
        raise UsageError(f"{len(altered)} sentences differ from the text the store grades (e.g. {altered[0]}): "
                         "their labels would not be theirs")
    grades: dict[tuple[str, str], set[int]] = defaultdict(set)
    for topic, doc, label in records:
        grades[(topic, doc)].add(label)
    conflicts = sum(1 for g in grades.values() if len(g) > 1)
    if conflicts:
        note(f"{conflicts} sentences occur with the same text and different labels: the qrels keep the highest")
    spec = QrelsSpec(topic_id=lambda r: r[0], doc_id=lambda r: r[1], grade=lambda r: r[2], on_duplicate="keep_max")
    return build_qrels(records=records, spec=spec)


def bank_creator(info: dict[str, Any]) -> dict[str, Any] | None:
    """AutoJudge's `Creator` of a bank Proctor generated: the model and the prompt version it used."""
    if not info.get("model"):
        return None
    return {"is_human": False, "llm_model": info["model"], "llm_backend": "proctor",
            "llm_prompt_strategy": f"{info.get('generator', 'proctor bank generate')}, prompt version "
                                   f"{info.get('prompt_version')} ({info.get('prompt_target', 'questions')})",
            "creation_date": info.get("time")}


def bank_to_nugget_banks(store: Store, bank: str | None, container: type = NuggetBanks) -> Any:
    """The store's bank as AutoJudge `NuggetBanks` (questions and nuggets, with their creator info) or
    `NuggetizerNuggetBanks` (nuggets with importance), read with AutoJudge's own loader."""
    version = store.banks.bank_version(bank)
    if version is None:
        raise UsageError("the store holds no bank")
    questions = store.banks.bank_questions(*version)
    texts = {k: v for k, v in store.corpus.queries().items() if v}
    if container is NuggetBanks:
        lines = autojudge_lines(questions, texts)
        creator = bank_creator(store.banks.bank_info(*version))
        for line in lines:
            if creator and not line.get("creator"):
                line["creator"] = [creator]
    else:
        lines = nuggetizer_lines(questions, texts)
        if not lines:
            raise UsageError(f"bank {version[0]}@{version[1]} holds no nuggets ({container.__name__} holds nuggets "
                             "only): give nuggets, or use the workflow with NuggetBanks")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bank.jsonl"
        write_bank(lines, path)
        return load_nugget_banks_generic(path, container)

