"""The experiment file (TOML, docs/experiments.md): its schema and its validation. Every error names the
file, the line and the key; nothing is read from the inputs and nothing is written before the whole file
is valid."""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.errors import InputError
from proctor.experiment.toml_lines import Where, first_line
from proctor.options.backend import BackendOptions
from proctor.options.evaluation import EvaluationOptions
from proctor.options.grading import GradingOptions
from proctor.options.model import PATHS, default, toml_keys, toml_value, type_name

EXPERIMENT_KEYS: dict[str, Any] = {"name": str, "store": str, "out": str}
INPUT_KINDS = ("queries", "corpus", "exampp", "qrels", "runs", "banks", "responses")
"""Import order: texts first, then what refers to them."""
INPUT_KEYS: dict[str, Any] = {**{k: PATHS for k in INPUT_KINDS}, "exampp_grades": bool,
                              "skip_unknown_queries": bool, "response_format": str, "word_budget": int}
BACKEND_KEYS: dict[str, Any] = toml_keys(BackendOptions)
GRADE_KEYS: dict[str, Any] = {**toml_keys(GradingOptions), **BACKEND_KEYS}
EVALUATE_KEYS: dict[str, Any] = toml_keys(EvaluationOptions)
TABLES: dict[str, tuple[dict[str, Any], bool]] = {"experiment": (EXPERIMENT_KEYS, False),
                                                  "inputs": (INPUT_KEYS, False), "grade": (GRADE_KEYS, True),
                                                  "evaluate": (EVALUATE_KEYS, False)}


@dataclass(frozen=True)
class Source:
    """One input: a file (or folder of runs) or an ir_datasets id (`irds:ID`)."""

    kind: str
    path: Path | None
    dataset: str | None = None

    @property
    def label(self) -> str:
        """How the source is named in messages and commands."""
        return f"irds:{self.dataset}" if self.dataset else str(self.path)


@dataclass(frozen=True)
class Grader:
    """One `[[grade]]` table."""

    name: str
    method: str
    llm: str
    line: int | None
    templates: tuple[Path, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    """GradeOptions fields (depth, max_queries, max_passages, bank, prefilter_below, verify, max_attempts)."""
    backend: dict[str, Any] = field(default_factory=dict)
    aggregate: str = default(GradingOptions, "aggregate")
    thresholds: tuple[int, ...] = default(GradingOptions, "sum_thresholds")
    prefilter: str | None = None
    pairs_per_second: float | None = None
    """The throughput the user states for this grader (dry-run time estimates only; it changes no grade)."""


@dataclass(frozen=True)
class Evaluation:
    """The `[evaluate]` table."""

    measures: tuple[str, ...] = default(EvaluationOptions, "measure")
    min_grades: tuple[int, ...] = (default(EvaluationOptions, "min_grade"),)
    cover_budgets: tuple[int, ...] = (default(EvaluationOptions, "budget"),)
    missing: str = default(EvaluationOptions, "missing")
    min_questions: int = default(EvaluationOptions, "min_questions")
    official: Path | None = None
    judged_relevant: int = default(EvaluationOptions, "judged_relevant")
    human: bool = default(EvaluationOptions, "human")
    formats: tuple[str, ...] = default(EvaluationOptions, "leaderboards")
    qrels: bool = default(EvaluationOptions, "qrels")
    correlations: bool = default(EvaluationOptions, "correlations")
    report: bool = default(EvaluationOptions, "report")
    bootstrap: int = default(EvaluationOptions, "bootstrap")
    seed: int = default(EvaluationOptions, "seed")


@dataclass(frozen=True)
class Experiment:
    """A validated experiment file."""

    path: Path
    text: str
    name: str
    store: Path
    out: Path
    sources: tuple[Source, ...]
    import_options: dict[str, Any]
    graders: tuple[Grader, ...]
    evaluation: Evaluation

    @property
    def digest(self) -> str:
        """SHA-256 of the file's text."""
        return hashlib.sha256(self.text.encode()).hexdigest()

    def error(self, where: Where, key: str | None, message: str) -> InputError:
        """An error naming this file, the line of `key` in table `where`, and the key."""
        dotted = ".".join(str(p) for p in where if isinstance(p, str))
        name = f"{dotted}.{key}" if dotted and key else key or dotted or "file"
        index = next((p for p in where if isinstance(p, int)), None)
        if index is not None:
            name = f"[[{where[0]}]] #{index + 1} {key or ''}".strip()
        return InputError(str(self.path), first_line(self.text, where, key), f"{name}: {message}")


def read_document(path: Path) -> tuple[str, dict[str, Any]]:
    """The file's text and its TOML document (syntax errors name the line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(path), None, "no such experiment file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(path), None, f"cannot read the experiment file ({exc})") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        line = None
        if "(at line " in message:
            line = int(message.split("(at line ")[1].split(",")[0])
            message = message.split(" (at line ")[0]
        raise InputError(str(path), line, f"not valid TOML: {message}") from None


def checked_tables(document: dict[str, Any], error) -> dict[str, list[dict[str, Any]]]:
    """Every table of the document with its keys checked and values canonical: `{table: [values, ...]}`."""
    out: dict[str, list[dict[str, Any]]] = {}
    for table, value in document.items():
        if table not in TABLES:
            raise error((), table, f"unknown table; expected {', '.join(TABLES)}")
        keys, many = TABLES[table]
        if many and not (isinstance(value, list) and all(isinstance(v, dict) for v in value)):
            raise error((), table, f"write [[{table}]] tables (one per grader)")
        if not many and not isinstance(value, dict):
            raise error((), table, f"write a [{table}] table")
        out[table] = [_checked(v, keys, (table, i) if many else (table,), error)
                      for i, v in enumerate(value if many else [value])]
    return out


def _checked(values: dict[str, Any], keys: dict[str, Any], where: Where, error) -> dict[str, Any]:
    checked = {}
    for key, value in values.items():
        if key not in keys:
            raise error(where, key, f"unknown key; expected one of {', '.join(keys)}")
        canonical = toml_value(value, keys[key])
        if canonical is None:
            raise error(where, key, f"must be {type_name(keys[key])} (got {value!r})")
        checked[key] = canonical
    return checked
