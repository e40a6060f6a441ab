"""Issue 16: the faster store paths give exactly the numbers the 0.1/0.2 code gave.

`tests/data/scale16/expected.json` was recorded with the code before issue 16 (`PROCTOR_RECORD=1`) on the
synthetic store `_build` makes (random grades with failures, two grade sets, one of two steps, facets in the
question ids); every figure is compared exactly (floats by their repr)."""

from __future__ import annotations

import json
import math
import os
import random
from pathlib import Path

import pytest

from proctor import api
from proctor.analyze.judges import store_agreement
from proctor.evaluate.labels import LabelStats
from proctor.evaluate.leaderboard import Leaderboard, cover_leaderboard
from proctor.evaluate.sources import exam_qrels, grade_rows, load_runs
from proctor.evaluate.sweep import sweep
from proctor.records import Grade, GradeSet
from proctor.store import Store

EXPECTED = Path(__file__).parent / "data" / "scale16" / "expected.json"


def _build(path: Path) -> Store:
    rnd = random.Random(16)
    store = Store.create_or_open(path)
    queries = [f"q{i}" for i in range(12)]
    sets = [GradeSet("self-rating", "m1", "v1", None, None, {"source": "test"}, "self-rating"),
            GradeSet("four-prompts", "m2", "v1", None, None, {}, "four-prompts-sum")]
    with store.transaction():
        store.upsert_queries((q, f"text {q}") for q in queries)
        store.upsert_passages((f"{q}p{j}", "x") for q in queries for j in range(30))
        store.upsert_rankings((f"run{r}", q, f"{q}p{j}", rank, float(rnd.randint(0, 9)))
                              for r in range(6) for q in queries[: 10 + r % 3]
                              for rank, j in enumerate(rnd.sample(range(30), 25)))
        store.upsert_judgments((q, f"{q}p{j}", rnd.randint(0, 3)) for q in queries[:10] for j in range(0, 30, 2))
        for grade_set in sets:
            store.ensure_grade_set(grade_set)
            steps = [grade_set.step] if grade_set.method == "self-rating" else ["four-prompts", grade_set.step]
            store.upsert_grades(grade_set.id, [
                Grade(q, f"{q}p{j}", f"{q}/f{k % 3}/h{k}", step, grade_set.model, "v1", grade,
                      "failed" if grade is None else rnd.choice(["ok", "ok", "defaulted"]), "reply")
                for q in queries for j in range(rnd.randint(18, 30)) for k in range(rnd.randint(1, 7))
                for step in steps for grade in [None if rnd.random() < 0.08 else rnd.randint(0, 5)]])
    return store


def _board(board: Leaderboard) -> dict:
    def entry(e):
        return [e.system, repr(e.score), repr(e.stderr), e.n_queries, {q: repr(v) for q, v in e.per_query.items()}]
    return {"entries": [entry(e) for e in board.entries], "references": [entry(e) for e in board.references],
            "notes": board.notes, "description": {k: v for k, v in board.description.items()}, "kind": board.kind}


def _outputs(store: Store) -> dict:
    out: dict = {"grade_sets": [[s.id, s.grades, s.failures, s.step] for s in store.grade_sets()]}
    counts = store.counts()
    out["counts"] = {k: v for k, v in counts.items() if k not in ("store", "grade_sets", "bank_versions")}
    runs = load_runs(store, None)
    for grade_set in store.grade_sets():
        key = grade_set.id
        out[f"statuses {key}"] = store.step_statuses(key)
        for m in (1, 2, 5):
            for facets in (False, True):
                stats = LabelStats()
                out[f"qrels {key} m={m} facets={facets}"] = exam_qrels(store, grade_set, min_questions=m,
                                                                      facets=facets, stats=stats)
                out[f"stats {key} m={m} facets={facets}"] = vars(stats)
        out[f"sweep {key}"] = [_board(b) for b in sweep(store, grade_set, runs, measures=(
            "P@20", "nDCG@10", "RR", "AP", "Rprec"))]
        from proctor.evaluate.cover import CoverTable
        for normalize in ("pool", "pool-per-query"):
            table = CoverTable.build(grade_rows(store, grade_set), 2)
            out[f"cover {key} {normalize}"] = _board(cover_leaderboard(runs, table, normalize=normalize))
        for measure, m in (("P@20", 1), ("AP", 2)):
            board = api.leaderboard(store, measure=measure, min_grade=3,
                                    labels=api.LabelChoice(grade_set=key, min_questions=m))
            out[f"api {key} {measure} m={m}"] = _board(board)
        board = api.leaderboard(store, metric="cover", min_grade=3, budget=20, labels=api.LabelChoice(grade_set=key))
        out[f"api cover {key}"] = _board(board)
        out[f"api qrels {key}"] = api.qrels(store, api.LabelChoice(grade_set=key), binary_min_grade=2)[1]
    out["agreement"] = {k: v for k, v in store_agreement(store, 2).items() if k != "store"}
    return json.loads(json.dumps(out, default=repr))


def test_results_identical_to_recorded(tmp_path: Path) -> None:
    store = _build(tmp_path / "s.db")
    got = _outputs(store)
    store.close()
    if os.environ.get("PROCTOR_RECORD"):
        EXPECTED.parent.mkdir(parents=True, exist_ok=True)
        EXPECTED.write_text(json.dumps(got, indent=1, sort_keys=True))
        pytest.skip("recorded")
    expected = json.loads(EXPECTED.read_text())
    assert sorted(got) == sorted(expected)
    for key in expected:
        assert got[key] == expected[key], key
    assert not math.isnan(len(got))
