"""What Proctor's TREC AutoJudge judge (`proctor.autojudge`, built on the door) needs beyond the notebook verbs:
which methods grade without a bank, a method's grade scale, where the response cache keeps the replies, the
error a backend that cannot answer raises, a store's bank as the lines of AutoJudge's and nuggetizer's bank
formats, the topic a bank record names (`bank_topic`, as the readers take it), and JSONL files read as Proctor's
readers read them (`jsonl_records`: plain or gzipped, line numbers from 1). The work stays where it lives
(methods, llm, store, io, bank); this module only exposes it."""

from __future__ import annotations

from pathlib import Path

from proctor.bank.generate import write_bank as write_bank
from proctor.io.nugget_banks import autojudge_lines as autojudge_lines
from proctor.io.nugget_banks import bank_topic as bank_topic
from proctor.io.nugget_banks import nuggetizer_lines as nuggetizer_lines
from proctor.io.textfile import jsonl_records as jsonl_records
from proctor.llm.health import BackendUnavailable as BackendUnavailable
from proctor.methods import DIRECT

DIRECT_METHODS: tuple[str, ...] = DIRECT
"""The methods that grade a passage for its query directly (one prompt, no bank): UMBRELA, Thomas, ..."""


def method_scale(method: str) -> tuple[int, int] | None:
    """The grades (low, high) `method` gives; None for a method without one label scale (nugget assignment,
    citation support) or an unknown one (refused where it is graded)."""
    from proctor.errors import UsageError
    from proctor.methods import method_scale as scale

    try:
        return scale(method)
    except UsageError:
        return None


def response_cache_file(folder: str | Path) -> Path:
    """The file of the response cache kept in `folder` (`cache_dir`)."""
    from proctor.store.response_cache import FILE_NAME

    return Path(folder) / FILE_NAME
