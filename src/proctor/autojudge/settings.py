"""The settings of Proctor's AutoJudge judge: what `workflow.yml` (`settings`, `variants`, `sweeps`, `--set`)
passes as keyword arguments, checked at the boundary and mapped one to one to Proctor's options."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from proctor.errors import UsageError

ON_MISSING = ("default", "warn", "fix_aggregate", "error")
COVER_MEASURES = ("EXAM-Cover", "n-EXAM")
RUNNER_KEYS = ("outdir", "filebase", "description")
"""Keys the AutoJudge runner adds or that only describe the configuration."""


@dataclass(frozen=True)
class JudgeSettings:
    """One configuration of the judge (a variant or a sweep point), each field a Proctor option."""

    method: str = "self-rating"
    """`proctor grade --method`: self-rating, nugget-rating, qa, embedding, umbrela, nugget-assign, ..."""
    llm: str | None = None
    """`--llm`; default `openai:MODEL` from AutoJudge's LLM configuration (`OPENAI_MODEL`, `OPENAI_BASE_URL`)."""
    base_url: str | None = None
    """`--base-url`; default AutoJudge's `OPENAI_BASE_URL`."""
    llm_config_file: str | None = None
    """An LLM configuration as the starter kit's `llm-config.yml` (`proctor.autojudge.llm_config`)."""
    measures: tuple[str, ...] = ("EXAM-Cover",)
    """Leaderboard measures: `EXAM-Cover`, `n-EXAM`, any `proctor leaderboard --measure` (EXAM-Qrels),
    `nuggets:SCORE` or `citations:SCORE`."""
    min_grade: int = 4
    """`--min-grade`: the smallest grade that answers a question / makes a passage relevant."""
    budget: int = 20
    """`--budget`: EXAM-Cover looks at each response's first k sentences."""
    min_questions: int = 1
    """`--min-questions`: the label is the grade reached by at least m questions."""
    depth: int = 20
    """`--depth`: sentences of each response graded."""
    bank: str | None = None
    """`--bank NAME[@VERSION]` (default: the store's only bank)."""
    store: str = "proctor.db"
    """The Proctor store, relative to `--out-dir` (the judge's state and its LLM cache)."""
    on_missing: str = "default"
    """AutoJudge's `on_missing` for topics without a score: default, warn, fix_aggregate, error."""
    generate: int = 10
    """Items per topic when `create_nuggets` generates a bank (`bank generate --n`)."""
    concurrency: int = 8
    """`--concurrency`"""
    max_retries: int = 6
    """`--max-retries`"""
    timeout: float = 60.0
    """`--timeout`"""

    @classmethod
    def from_kwargs(cls, kwargs: dict[str, Any]) -> JudgeSettings:
        """The settings the runner passed; an unknown key or a wrong value is a UsageError naming it."""
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in RUNNER_KEYS:
                continue
            if key not in known:
                raise UsageError(f"workflow setting {key!r}: unknown (known: {', '.join(sorted(known))})")
            values[key] = _coerce(key, value, known[key].type)
        settings = cls(**values)
        settings.check()
        return settings

    def check(self) -> None:
        """Refuse values Proctor would refuse, before any work."""
        if self.on_missing not in ON_MISSING:
            raise UsageError(f"workflow setting on_missing={self.on_missing!r}: one of {', '.join(ON_MISSING)}")
        for name in ("budget", "depth", "min_questions", "generate", "concurrency"):
            if getattr(self, name) < 1:
                raise UsageError(f"workflow setting {name} must be at least 1")
        if not 0 <= self.min_grade <= 5:
            raise UsageError(f"workflow setting min_grade={self.min_grade}: a grade 0-5")
        self._check_scale()
        if not self.measures:
            raise UsageError("workflow setting measures: name at least one measure")
        if set(self.measures) & set(COVER_MEASURES) and self.budget > self.depth:
            raise UsageError(f"workflow setting budget={self.budget} is more than depth={self.depth}: EXAM-Cover "
                             "would count sentences that were never graded as answering nothing")
        if Path(self.store).is_absolute() or ".." in Path(self.store).parts:
            raise UsageError(f"workflow setting store={self.store!r}: a file name inside --out-dir")

    def _check_scale(self) -> None:
        """min_grade within the method's own scale (umbrela grades 0-3: min_grade=4 would score every system 0)."""
        from proctor.methods import get_method

        try:
            method = get_method(self.method)
        except UsageError:
            return  # methods without one label scale (nugget-assign, citation-support) or unknown: checked later
        if not method.low < self.min_grade <= method.high:
            raise UsageError(f"workflow setting min_grade={self.min_grade}: method {self.method} grades "
                             f"{method.low}-{method.high}, so min_grade must be {method.low + 1}..{method.high}")

    def llm_spec(self, model: str | None) -> str:
        """`--llm`: the setting, else `openai:MODEL` from AutoJudge's LLM configuration."""
        if self.llm:
            return self.llm
        model = model or os.environ.get("OPENAI_MODEL")
        if not model:
            raise UsageError("no LLM: set OPENAI_MODEL (AutoJudge's LLM configuration) or the setting llm")
        return f"openai:{model}"

    def backend_options(self, base_url: str | None) -> dict[str, Any]:
        """`BackendConfig` fields for `api.grade` (only openai: backends take a URL)."""
        options: dict[str, Any] = {"concurrency": self.concurrency, "max_retries": self.max_retries,
                                   "timeout": self.timeout}
        url = self.base_url or base_url
        if url and self.llm_spec_is_openai():
            options["base_url"] = url
        return options

    def llm_spec_is_openai(self) -> bool:
        """Whether the backend is an OpenAI-compatible endpoint (the default)."""
        return self.llm is None or self.llm.startswith("openai:")


def _coerce(key: str, value: Any, kind: Any) -> Any:
    """A YAML value as the field's type (`--set k=v` gives strings and numbers)."""
    kind = str(kind)
    if kind.startswith("tuple"):
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
            raise UsageError(f"workflow setting {key}: a measure name or a list of them, not {value!r}")
        return tuple(items)
    if kind == "int" and not isinstance(value, bool):
        if isinstance(value, int):
            return value
    elif kind == "float" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    elif kind.startswith("str") and (isinstance(value, str) or (value is None and "None" in kind)):
        return value
    raise UsageError(f"workflow setting {key}={value!r}: expected {kind.replace(' | None', '')}")
