"""The settings of Proctor's AutoJudge judge: what `workflow.yml` (`settings`, `variants`, `sweeps`, `--set`)
passes as keyword arguments, checked at the boundary and mapped one to one to Proctor's options."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from proctor.api.autojudge import method_scale
from proctor.errors import UsageError
from proctor.options.backend import BackendOptions
from proctor.options.evaluation import EvaluationOptions
from proctor.options.grading import GradingOptions
from proctor.options.model import borrow, setting_value

ON_MISSING = ("default", "warn", "fix_aggregate", "error")
COVER_MEASURES = ("EXAM-Cover", "n-EXAM")
RUNNER_KEYS = ("outdir", "filebase", "description")
"""Keys the AutoJudge runner adds or that only describe the configuration."""


@dataclass(frozen=True)
class JudgeSettings:
    """One configuration of the judge (a variant or a sweep point), each field a Proctor option: those of
    `proctor.options` are borrowed from their model (default, help, flag), the judge's own are declared here."""

    method: str = "self-rating"
    """`proctor grade --method`: self-rating, nugget-rating, qa, embedding, umbrela, nugget-assign, ..."""
    llm: str | None = borrow(GradingOptions, "llm")
    """`--llm`; default `openai:MODEL` from AutoJudge's LLM configuration (`OPENAI_MODEL`, `OPENAI_BASE_URL`)."""
    base_url: str | None = borrow(BackendOptions, "base_url")
    """`--base-url`; default AutoJudge's `OPENAI_BASE_URL`."""
    llm_config_file: str | None = None
    """An LLM configuration as the starter kit's `llm-config.yml` (`proctor.autojudge.llm_config`)."""
    measures: tuple[str, ...] = ("EXAM-Cover",)
    """Leaderboard measures: `EXAM-Cover`, `n-EXAM`, any `proctor leaderboard --measure` (EXAM-Qrels),
    `nuggets:SCORE` or `citations:SCORE`."""
    min_grade: int = borrow(EvaluationOptions, "min_grade")
    """`--min-grade`: the smallest grade that answers a question / makes a passage relevant."""
    budget: int = borrow(EvaluationOptions, "budget")
    """`--budget`: EXAM-Cover looks at each response's first k sentences."""
    min_questions: int = borrow(EvaluationOptions, "min_questions")
    """`--min-questions`: the label is the grade reached by at least m questions."""
    depth: int = borrow(GradingOptions, "depth")
    """`--depth`: sentences of each response graded."""
    bank: str | None = borrow(GradingOptions, "bank")
    """`--bank NAME[@VERSION]` (default: the store's only bank)."""
    store: str = "proctor.db"
    """The Proctor store, relative to `--out-dir` (the judge's state and its LLM cache)."""
    on_missing: str = "default"
    """AutoJudge's `on_missing` for topics without a score: default, warn, fix_aggregate, error."""
    generate: int = 10
    """Items per topic when `create_nuggets` generates a bank (`bank generate --n`)."""
    concurrency: int = borrow(BackendOptions, "concurrency")
    """`--concurrency`"""
    max_retries: int = borrow(BackendOptions, "max_retries")
    """`--max-retries`"""
    timeout: float = borrow(BackendOptions, "timeout")
    """`--timeout`"""
    dtype: str | None = borrow(BackendOptions, "dtype")
    """`--dtype` (hf: judges): the weights' precision, auto, bfloat16, float16 or float32 (default: auto); any but
    float32 enters the grade set's parameters."""

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
            values[key] = setting_value(key, value, known[key].type)
        settings = cls(**values)
        settings.check()
        return settings

    def check(self) -> None:
        """Refuse values Proctor would refuse, before any work."""
        if self.on_missing not in ON_MISSING:
            raise UsageError(f"workflow setting on_missing={self.on_missing!r}: one of {', '.join(ON_MISSING)}")
        for f in fields(self):  # the borrowed options that take one of a few words (dtype)
            option, value = f.metadata.get("option"), getattr(self, f.name)
            if option is not None and option.choices and value is not None and value not in option.choices:
                raise UsageError(f"workflow setting {f.name}={value!r}: one of {', '.join(option.choices)}")
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
            raise UsageError(f"workflow setting store={self.store!r}: a file name inside {{outdir}}",
                             params=("outdir",))

    def _check_scale(self) -> None:
        """min_grade within the method's own scale (umbrela grades 0-3: min_grade=4 would score every system 0)."""
        scale = method_scale(self.method)
        if scale is None:
            return  # methods without one label scale (nugget-assign, citation-support) or unknown: checked later
        low, high = scale
        if not low < self.min_grade <= high:
            raise UsageError(f"workflow setting min_grade={self.min_grade}: method {self.method} grades "
                             f"{low}-{high}, so min_grade must be {low + 1}..{high}")

    def llm_spec(self, model: str | None) -> str:
        """`--llm`: the setting, else `openai:MODEL` from AutoJudge's LLM configuration."""
        return self.llm or injected_llm(model)

    def generator_spec(self, model: str | None) -> str:
        """The LLM that generates a bank when none is given or stored: the setting `llm` when it generates text,
        else the injected endpoint's `openai:MODEL` (the `embedded` variant grades with MiniLM, which writes no
        questions)."""
        from proctor.api.bank_generation import TEXT_BACKENDS

        if self.llm and self.llm.split(":")[0] in TEXT_BACKENDS:
            return self.llm
        return injected_llm(model)

    def backend_options(self, base_url: str | None, spec: str | None = None) -> dict[str, Any]:
        """`BackendConfig` fields for `api.grade` or `api.generate_bank` with backend `spec` (default: the
        setting `llm`); only openai: backends take a URL."""
        options: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)
                                   if f.metadata.get("from") is BackendOptions and f.name != "base_url"}
        url = self.base_url or base_url
        if url and (spec or self.llm or "openai:").startswith("openai:"):
            options["base_url"] = url
        return options


def injected_llm(model: str | None) -> str:
    """`openai:MODEL` of AutoJudge's LLM configuration (the model the runner was given, else `OPENAI_MODEL`)."""
    model = model or os.environ.get("OPENAI_MODEL")
    if not model:
        raise UsageError("no LLM: set OPENAI_MODEL (AutoJudge's LLM configuration) or the setting llm")
    return f"openai:{model}"
