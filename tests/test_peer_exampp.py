"""n-EXAM as the Workbench computes it: `--normalize pool-per-query` equals exam_pp 0.1.2's own `n-exam`
(compute_exam_cover_scores, the mean of per-query ratios, 0 where the pool covers nothing) for every
threshold 1-5 and every DL19 system; exam_pp itself runs as the oracle."""

from __future__ import annotations

import contextlib
import io

import pytest

from proctor import api
from proctor.store import Store

PROMPT_CLASS = "QuestionSelfRatedUnanswerablePromptWithChoices"


@pytest.fixture(scope="module")
def exampp_n_exam(dl19_pool, peer_nltk) -> dict[int, dict[str, float]]:
    """exam_pp's own n-exam per system at thresholds 1-5 (top 20), on the DL19 pool file."""
    pytest.importorskip("exam_pp")
    from exam_pp.data_model import GradeFilter, parseQueryWithFullParagraphs
    from exam_pp.exam_cover_metric import ExamCoverScorerFactory, compute_exam_cover_scores

    paragraphs = parseQueryWithFullParagraphs(dl19_pool)
    grade_filter = GradeFilter(model_name=None, prompt_class=PROMPT_CLASS, is_self_rated=None, min_self_rating=None,
                               question_set=None, prompt_type=None)
    out = {}
    for tau in range(1, 6):
        with contextlib.redirect_stdout(io.StringIO()):  # it prints a line per query
            evals = compute_exam_cover_scores(paragraphs, ExamCoverScorerFactory(grade_filter, tau), rank_cut_off=20)
        out[tau] = {method: e.nExamScore for method, e in evals.items() if method != "_overall_"}
    return out


@pytest.mark.slow
@pytest.mark.parametrize("tau", range(1, 6))
def test_pool_per_query_is_exampp_n_exam(dl19_store, exampp_n_exam, tau):
    store = Store.open(dl19_store)
    try:
        board = api.leaderboard(store, f"NEXAM(rel={tau},norm=pool-per-query)@20")
    finally:
        store.close()
    ours = board.scores()
    assert len(ours) == 37 and set(ours) == set(exampp_n_exam[tau])
    for system, theirs in exampp_n_exam[tau].items():  # the same up to the last bit of the mean's rounding
        assert ours[system] == pytest.approx(theirs, rel=0, abs=2e-16), system
    if tau == 5:  # 3 of 43 queries are covered by no pooled passage at 5: exam_pp counts them 0
        assert round(ours["test1"], 3) == 0.518
        assert any("3 queries counted as 0 (as exam_pp's n-exam)" in note for note in board.notes)
