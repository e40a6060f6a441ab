"""Proctor as a TREC AutoJudge judge: `ProctorJudge` implements the AutoJudge protocols on top of
`proctor.api`; `workflow.yml` (installed beside this module) declares it with its variants. Needs the extra
`autojudge` (autojudge-base), which is imported only when `ProctorJudge` is (it reads NLTK data at import)."""

from __future__ import annotations

from typing import Any

__all__ = ["ProctorJudge"]


def __getattr__(name: str) -> Any:
    """`ProctorJudge`, imported on first use."""
    if name == "ProctorJudge":
        from proctor.autojudge.judge import ProctorJudge

        return ProctorJudge
    raise AttributeError(f"module 'proctor.autojudge' has no attribute {name!r}")
