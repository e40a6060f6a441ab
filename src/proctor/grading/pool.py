"""The judgment pool: every judged passage plus the top-k of every run, deduplicated across runs."""

from __future__ import annotations

from proctor.io.runs import order
from proctor.options.grading import GradingOptions
from proctor.store import Store


def judgment_pool(store: Store, depth: int = GradingOptions.depth) -> dict[str, list[str]]:
    """`{query_id: [passage_id, ...]}`: passages ranked by any run within `depth` (best rank first), then
    judged passages no run ranked that high (by id)."""
    best: dict[str, dict[str, int]] = {}
    for per_query in store.corpus.rankings().values():
        for qid, scores in per_query.items():
            ranks = best.setdefault(qid, {})
            for rank, pid in enumerate(order(scores)[:depth]):
                if rank < ranks.get(pid, depth):
                    ranks[pid] = rank
    pool = {qid: sorted(ranks, key=lambda p: (ranks[p], p)) for qid, ranks in best.items()}
    for qid, judged in store.corpus.judgments().items():
        seen = set(pool.get(qid, []))
        pool.setdefault(qid, []).extend(sorted(p for p in judged if p not in seen))
    return pool
