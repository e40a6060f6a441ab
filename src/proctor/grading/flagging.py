"""`grade --guard detect`: before grading, pool passages that address the judge (or copy their query's rubric
text verbatim) are flagged (`proctor.grading.guards.detect`), recorded with why, and left ungraded."""

from __future__ import annotations

from proctor.grading.guards import detect
from proctor.grading.plan import items_of
from proctor.grading.pool import judgment_pool
from proctor.methods import Method
from proctor.store import Store, now


def flag_pool(store: Store, grade_set_id: str, method: Method, bank: tuple[str, str] | None, depth: int
              ) -> set[tuple[str, str]]:
    """`grade --guard detect`: flag the pool passages that address the judge or copy their query's rubric text,
    record why (`Store.probes.pool_flags`), and return the flagged (query, passage) pairs, which are not graded."""
    items = items_of(store, method, bank)
    texts = store.corpus.passage_texts()
    rows = []
    for qid, passages in judgment_pool(store, depth).items():
        if qid not in items:
            continue
        rubric = [text for _, text, _ in items[qid]] if method.items in ("question", "nugget") else []
        for pid in passages:
            reason = detect(texts.get(pid) or "", rubric)
            if reason is not None:
                rows.append((qid, pid, reason))
    with store.transaction():
        store.probes.save_pool_flags(grade_set_id, rows, now())
    return {(qid, pid) for qid, pid, _ in rows}
