"""Proctor as a TREC AutoJudge judge: `ProctorJudge` implements the AutoJudge protocols on top of
`proctor.api`; `workflow.yml` (installed beside this module) declares it with its variants, and
`workflow-nuggetizer.yml` its nuggetizer-format twin `ProctorNuggetizerJudge`. Needs the extra
`autojudge` (autojudge-base), which is imported only when `ProctorJudge` is (it reads NLTK data at import)."""

from __future__ import annotations

from typing import Any

__all__ = ["ProctorJudge", "ProctorNuggetizerJudge"]


def __getattr__(name: str) -> Any:
    """`ProctorJudge` and `ProctorNuggetizerJudge`, imported on first use."""
    if name in __all__:
        from proctor.autojudge import judge

        return getattr(judge, name)
    raise AttributeError(f"module 'proctor.autojudge' has no attribute {name!r}")
