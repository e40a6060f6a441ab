"""Prompting: the only place prompts are rendered and fitted to a backend's window — the question (and
every instruction) is never cut, the context is."""

from __future__ import annotations

from proctor.grading.plan import WorkItem
from proctor.llm.base import Backend, Request
from proctor.methods import Method


def render(method: Method, step: str, item: WorkItem, backend: Backend) -> tuple[Request, bool]:
    """The request for one pair and whether its context was cut."""
    template = method.template
    before, after = template.parts(item.question, item.variables)
    if "{context}" in template.template:
        context, truncated = backend.fit(before, item.passage, after)
    else:
        context, truncated = "", False
    return Request(item.query_id, item.passage_id, item.question_id, before + context + after, item.question,
                   context or item.passage, template.max_tokens, template.system, step,
                   rating=method.kind == "rating"), truncated


def similarity_request(step: str, item: WorkItem) -> Request:
    """A pre-filter request: the question against the passage, for an embedding backend."""
    return Request(item.query_id, item.passage_id, item.question_id, item.question, item.question, item.passage,
                   step=step)
