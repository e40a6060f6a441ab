"""`citation-support`: every answer sentence that cites passages, judged against the texts of the passages it
cites (full / partial / no support, the TREC 2024 RAG support-evaluation prompt). Grades: full 2, partial 1,
none 0, on the sentence's passage id with item ``. Cited passages missing from the corpus are left out of the
prompt; a sentence none of whose cited passages is in the corpus is not asked (there is nothing to judge it
by) and is counted by the scores (`proctor.evaluate.citations`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from proctor.grading.answer_jobs import Job
from proctor.grading.engine import GradeOptions
from proctor.llm.base import Backend
from proctor.methods.base import Template, load_template
from proctor.records import GradeSet
from proctor.store import Store

SUPPORT = (("full support", 2, "full"), ("partial support", 1, "partial"), ("no support", 0, "none"))


def parse_support(reply: str | None, count: int) -> tuple[list[tuple[int, str]] | None, str]:
    """The first of Full / Partial / No Support the reply names (case ignored), as the track's script reads it."""
    text = (reply or "").lower()
    for phrase, grade, label in SUPPORT:
        if phrase in text:
            return [(grade, label)] * count, ""
    return None, "no Full/Partial/No Support in the reply" if text.strip() else "empty reply"


@dataclass(frozen=True)
class CitedSentence:
    """One answer sentence with its citations and which of them the corpus lacks."""

    run: str
    query_id: str
    passage_id: str
    position: int
    text: str
    cited: tuple[str, ...]
    missing: tuple[str, ...]


def answer_sentences(store: Store) -> list[CitedSentence]:
    """Every imported answer sentence (cited or not), in run, query and answer order."""
    texts = store.corpus.passage_texts()
    out = []
    for pid, seg in store.corpus.segments().items():
        cited = tuple(seg["citations"])
        out.append(CitedSentence(seg["run"], seg["query_id"], pid, seg["position"], texts.get(pid) or "", cited,
                                 tuple(c for c in cited if not texts.get(c))))
    return sorted(out, key=lambda s: (s.run, s.query_id, s.position))


def citation_grade_set(store: Store, backend: Backend) -> tuple[GradeSet, Template]:
    """The grade set of `citation-support` with this backend (no bank: sentences are judged, not items)."""
    template = load_template("citation-support")
    params: dict[str, Any] = {"backend": backend.kind, **backend.params()}
    return GradeSet("citation-support", backend.model, template.version, None, None, params), template


def citation_jobs(store: Store, grade_set: GradeSet, options: GradeOptions) -> tuple[list[Job], int, int]:
    """One prompt per cited sentence with at least one cited passage in the corpus, not yet graded."""
    from proctor.errors import UsageError

    sentences = answer_sentences(store)
    if not sentences:
        raise UsageError(f"{store.path}: no generated answers (import them with `proctor import responses FILE`)")
    texts = store.corpus.passage_texts()
    done = store.grades.graded(grade_set.id, "citation-support")
    exhausted = store.grades.exhausted(grade_set.id, "citation-support", options.max_attempts)
    queries = sorted({s.query_id for s in sentences})
    if options.max_queries is not None:
        queries = queries[:options.max_queries]
    jobs, pairs, given_up = [], 0, 0
    for s in sentences:
        if s.query_id not in queries or not s.cited or len(s.missing) == len(s.cited):
            continue
        key = (s.query_id, s.passage_id, "")
        pairs += 1
        given_up += key in exhausted
        if key in done or key in exhausted:
            continue
        present = [c for c in s.cited if c not in s.missing]
        context = "\n\n".join(f"[{n}] {texts[c]}" for n, c in enumerate(present, start=1))
        jobs.append(Job(s.query_id, s.passage_id, ("",), {"statement": s.text}, context))
    return jobs, pairs, given_up
