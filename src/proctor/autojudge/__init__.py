"""Proctor as a TREC AutoJudge judge: `ProctorJudge` implements the AutoJudge protocols on top of
`proctor.api`; `workflow.yml` (installed beside this module) declares it with its variants. Needs the extra
`autojudge` (autojudge-base)."""

from proctor.autojudge.judge import ProctorJudge

__all__ = ["ProctorJudge"]
