"""What the embedding pre-filter costs in leaderboard quality on DL19: prune the X% least similar
(question, passage) pairs to grade 0 and correlate the FLAN-T5-large EXAM-Qrels leaderboards with the
official one. Prints its figures; asserts nothing.

Needs a store with both the replayed FLAN-T5-large self-ratings and the embedding grades:
    proctor import exampp dl19-pool-graded-flan-t5-large.jsonl.gz --store g.db --no-grades
    proctor import bank dl19-questions-graded.jsonl.gz --store g.db
    proctor grade --store g.db --method self-rating --llm replay:dl19-pool-graded-flan-t5-large.jsonl.gz
    proctor grade --store g.db --method embedding --llm embed:minilm
Usage: python benchmarks/bench_prefilter_dl19.py g.db
"""

from __future__ import annotations

import sys
from pathlib import Path

from proctor.analyze.leaderboard_correlation import correlate_leaderboards
from proctor.evaluate.labels import exam_labels
from proctor.evaluate.leaderboard import measure_leaderboard
from proctor.evaluate.leaderboard_files import LeaderboardFile, read_official
from proctor.evaluate.measures import parse_measure
from proctor.evaluate.sources import load_runs
from proctor.gradesets.resolve import resolve_grade_set
from proctor.store import Store

OFFICIAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "dl19" / "dl19-official-leaderboard.json"


def main() -> None:
    store = Store.open(sys.argv[1])
    embedding = resolve_grade_set(store, method="embedding")
    similarity = {(g.query_id, g.passage_id,
                   g.question_id): g.extra["similarity"] for g in store.grades.records(embedding)}
    flan = resolve_grade_set(store, method="self-rating", model="google/flan-t5-large")
    rows = list(store.grades.grade_rows(flan.id, flan.step))
    official, runs = read_official(OFFICIAL), load_runs(store, None)
    values = sorted(similarity.values())
    for fraction in (0.0, 0.5, 0.7, 0.8, 0.9):
        cut = values[int(fraction * len(values)) - 1] if fraction else float("-inf")
        labels = exam_labels([(q, p, k, 0 if similarity[(q, p, k)] <= cut else g) for q, p, k, g in rows])
        figures = []
        for name, tau in (("P@20", 3), ("nDCG@10", None)):
            board = measure_leaderboard(runs, labels, parse_measure(name), tau)
            result = correlate_leaderboards(LeaderboardFile(board.scores()), official, samples=0)
            figures.append(f"{name}{'' if tau is None else f' tau={tau}'} Kendall {result['kendall']:.3f}")
        print(f"prune {fraction:4.0%} of pairs (similarity <= {cut:.3f}): " + ", ".join(figures))


if __name__ == "__main__":
    main()
