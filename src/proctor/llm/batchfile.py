"""Batch files: the OpenAI batch input format (one chat-completions request per JSONL line, with a
`custom_id`) and the result formats of the OpenAI Batch API and of vLLM's `run_batch` (current and 0.4/0.5
releases). Works for any worker that reads the one and writes the other (a cluster job, `vllm run_batch`,
the OpenAI Batch API). Replies come back as `Reply` objects, errors included, never an exception per line."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from proctor.errors import UsageError
from proctor.llm.base import Reply, Request

ENDPOINT = "/v1/chat/completions"


def custom_id(grade_set: str, request: Request) -> str:
    """The id of one request in a batch file: its grade set and step, then a digest of the pair and of the
    exact prompt, so that a result maps back to its pair and a reply to a different prompt never counts."""
    blob = json.dumps([request.query_id, request.passage_id, request.question_id, request.text()],
                      ensure_ascii=False)
    return f"{grade_set}:{request.step}:{hashlib.sha256(blob.encode('utf-8')).hexdigest()[:32]}"


def grade_set_of(identifier: str) -> str:
    """The grade set a custom id belongs to."""
    return identifier.partition(":")[0]


def request_line(identifier: str, body: dict[str, Any]) -> bytes:
    """One line of a batch input file."""
    line = {"custom_id": identifier, "method": "POST", "url": ENDPOINT, "body": body}
    return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def read_requests(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(custom_id, body) of every line of a batch input file."""
    for _number, line in _lines(path):
        yield line["custom_id"], line["body"]


def read_results(path: Path, probabilities: bool) -> Iterator[tuple[str, Reply]]:
    """(custom_id, reply) of every line of a batch result file (OpenAI's or vLLM's output format)."""
    for number, line in _lines(path):
        identifier = line.get("custom_id")
        if not isinstance(identifier, str) or not identifier:
            raise UsageError(f"{path}:{number}: no custom_id: not a batch result line")
        yield identifier, reply_of_line(line, probabilities)


def reply_of_line(line: dict[str, Any], probabilities: bool) -> Reply:
    """The reply one result line carries, or a failure saying what came back instead."""
    error = line.get("error")
    if error:
        message = error.get("message", error) if isinstance(error, dict) else error
        code = error.get("code") if isinstance(error, dict) else None
        return Reply(error=f"batch error{f' {code}' if code else ''}: {str(message)[:200]}")
    response = line.get("response")
    if not isinstance(response, dict):
        return Reply(error="batch result without response")
    if "choices" in response:  # vLLM 0.4/0.5: the completion itself
        status, body = 200, response
    else:
        status, body = response.get("status_code", 200), response.get("body")
    if status != 200:
        detail = body.get("error", body) if isinstance(body, dict) else body
        message = detail.get("message", detail) if isinstance(detail, dict) else detail
        return Reply(error=f"HTTP {status}: {str(message)[:200]}")
    return _completion_reply(body, probabilities)


def _completion_reply(body: Any, probabilities: bool) -> Reply:
    from openai.types.chat import ChatCompletion
    from pydantic import ValidationError

    from proctor.llm.openai_backend import reply_of

    try:
        completion = ChatCompletion.model_validate(body)
    except ValidationError:
        return Reply(error=f"not a chat completion: {json.dumps(body)[:80]!r}")
    return reply_of(completion.model_dump(), probabilities)


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except ValueError as exc:
                raise UsageError(f"{path}:{number}: not JSON: {exc}") from None
            if not isinstance(line, dict):
                raise UsageError(f"{path}:{number}: expected a JSON object per line")
            yield number, line


class FileReplies:
    """A backend that answers from batch results: the replies of a grade set's custom ids, wrapped around
    the backend that would have asked (its kind, model, parameters and context fitting, so that grade set,
    prompts and cache keys are exactly those of grading in-process)."""

    def __init__(self, inner: Any, grade_set: str, replies: dict[str, Reply]) -> None:
        self.inner, self.grade_set, self.replies = inner, grade_set, replies
        self.kind, self.model, self.uses_cache = inner.kind, inner.model, inner.uses_cache
        self.batch_size, self.concurrency = 256, 1

    def params(self) -> dict[str, Any]:
        return self.inner.params()

    def fit(self, before: str, context: str, after: str) -> tuple[str, bool]:
        return self.inner.fit(before, context, after)

    async def complete(self, requests: list[Request]) -> list[Reply]:
        missing = Reply(error="no result for this prompt in the batch files")
        return [self.replies.get(custom_id(self.grade_set, r), missing) for r in requests]

    async def aclose(self) -> None:
        await self.inner.aclose()
