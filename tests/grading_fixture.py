"""Shared helpers of the grading tests: the `proctor grade` command line against a local test server."""

from __future__ import annotations

from pathlib import Path


def grade_args(store: Path, server, *extra: str, retries: int = 0) -> list[str]:
    """`grade` of the demo method self-rating with model `m` at `server`, JSON summary, `retries` retries."""
    return ["grade", "--store", str(store), "--method", "self-rating", "--llm", "openai:m", "--base-url",
            server.base_url, "--max-retries", str(retries), "--format", "json", *extra]
