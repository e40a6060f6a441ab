"""`ProctorJudge`: the TREC AutoJudge protocols (`create_nuggets`, `create_qrels`, `judge`) on top of
`proctor.api`. Declared in `workflow.yml` as `judge_class: proctor.autojudge:ProctorJudge`."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from autojudge_base import Leaderboard, NuggetBanks, Qrels
from autojudge_base.nugget_data import NuggetizerNuggetBanks

from proctor.autojudge.convert import bank_to_nugget_banks, to_leaderboard, to_qrels
from proctor.autojudge.session import ANSWER_METHODS, Session
from proctor.autojudge.sources import RUNNER_OPTIONS
from proctor.errors import ProctorError, UsageError

F = TypeVar("F", bound=Callable[..., Any])


def user_errors(func: F) -> F:
    """A Proctor error ends the run as Proctor's CLI ends it: the message on standard error (the parameters it
    names spelled as the runner's options: `--rag-topics`), exit status 2, no traceback, nothing more written."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ProctorError as e:
            print(f"proctor: error: {e.spelled(RUNNER_OPTIONS) if isinstance(e, UsageError) else e}", file=sys.stderr)
            raise SystemExit(2) from None

    return wrapper  # type: ignore[return-value]


class ProctorJudge:
    """EXAM / RUBRIC grading, nugget assignment and UMBRELA as an AutoJudge judge; the settings are Proctor's
    options (`proctor.autojudge.settings.JudgeSettings`)."""

    nugget_banks_type = NuggetBanks

    @user_errors
    def create_nuggets(self, rag_responses: Iterable[Any] | None, rag_topics: Sequence[Any], llm_config: Any,
                       nugget_banks: Any = None, corpus: str | None = None, **kwargs: Any) -> NuggetBanks | None:
        """The bank for the topics: the given `--nugget-banks` imported, else the stored one, else generated
        with the LLM (questions; nuggets with importance for `nugget-rating` / `nugget-assign`); None for the
        methods that grade without a bank (UMBRELA and the other direct relevance prompts)."""
        with Session.open(kwargs, llm_config) as session:
            session.load(rag_topics, None)
            if not session.needs_bank:
                return None
            session.ensure_bank(rag_topics, nugget_banks)
            return bank_to_nugget_banks(session.store, session.settings.bank, self.nugget_banks_type)

    @user_errors
    def create_qrels(self, rag_responses: Iterable[Any], rag_topics: Sequence[Any], llm_config: Any,
                     nugget_banks: Any = None, corpus: str | None = None, **kwargs: Any) -> Qrels | None:
        """EXAM-Qrels of the response sentences (document id: the md5 of the sentence, as AutoJudge's qrels
        for generated text); None for the answer-level methods."""
        with Session.open(kwargs, llm_config) as session:
            grade_set = session.graded(rag_topics, rag_responses, nugget_banks, corpus)
            if session.settings.method in ANSWER_METHODS:
                return None
            return to_qrels(session.store, grade_set, session.settings, [t.request_id for t in rag_topics],
                            session.sentences, session.empty)

    @user_errors
    def judge(self, rag_responses: Iterable[Any], rag_topics: Sequence[Any], llm_config: Any,
              nugget_banks: Any = None, qrels: Qrels | None = None, corpus: str | None = None,
              **kwargs: Any) -> Leaderboard:
        """Per-topic and `all` rows of the measures the settings name."""
        with Session.open(kwargs, llm_config) as session:
            grade_set = session.graded(rag_topics, rag_responses, nugget_banks, corpus)
            return to_leaderboard(session.store, grade_set, session.settings, [t.request_id for t in rag_topics],
                                  session.runs, session.empty, session.note)


class ProctorNuggetizerJudge(ProctorJudge):
    """`ProctorJudge` whose banks are AutoJudge `NuggetizerNuggetBanks` (nuggets with vital/okay importance,
    format v4): declared in `workflow-nuggetizer.yml`."""

    nugget_banks_type = NuggetizerNuggetBanks
