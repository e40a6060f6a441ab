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

PATHS = "path or list of paths"
STRINGS = "string or list of strings"
INTS = "integer or list of integers"

EXPERIMENT_KEYS: dict[str, Any] = {"name": str, "store": str, "out": str}
INPUT_KINDS = ("queries", "corpus", "exampp", "qrels", "runs", "banks", "responses")
"""Import order: texts first, then what refers to them."""
INPUT_KEYS: dict[str, Any] = {**{k: PATHS for k in INPUT_KINDS}, "exampp_grades": bool,
                              "skip_unknown_queries": bool, "response_format": str, "word_budget": int}
BACKEND_KEYS: dict[str, Any] = {"base_url": str, "concurrency": int, "timeout": float, "max_retries": int,
                                "backoff_max": float, "rpm": float, "tpm": float, "max_context_chars": int,
                                "device": str, "batch_size": int, "probabilities": bool}
GRADE_KEYS: dict[str, Any] = {"name": str, "method": str, "llm": str, "template": PATHS, "prefilter": str,
                              "prefilter_below": float, "depth": int, "max_queries": int, "max_passages": int,
                              "bank": str, "aggregate": str, "sum_thresholds": INTS, "verify": str,
                              "max_attempts": int, "pairs_per_second": float, **BACKEND_KEYS}
EVALUATE_KEYS: dict[str, Any] = {"measures": STRINGS, "min_grade": INTS, "cover_budget": INTS, "missing": str,
                                 "min_questions": int, "official": str, "judged_relevant": int, "human": bool,
                                 "leaderboards": STRINGS, "qrels": bool, "correlations": bool, "report": bool,
                                 "bootstrap": int, "seed": int}
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
    aggregate: str = "prompt"
    thresholds: tuple[int, ...] = (10, 7, 5)
    prefilter: str | None = None
    pairs_per_second: float | None = None
    """The throughput the user states for this grader (dry-run time estimates only; it changes no grade)."""


@dataclass(frozen=True)
class Evaluation:
    """The `[evaluate]` table."""

    measures: tuple[str, ...] = ("P@20", "nDCG@10")
    min_grades: tuple[int, ...] = (4,)
    cover_budgets: tuple[int, ...] = (20,)
    missing: str = "zero"
    min_questions: int = 1
    official: Path | None = None
    judged_relevant: int = 2
    human: bool = True
    formats: tuple[str, ...] = ("tsv", "json")
    qrels: bool = True
    correlations: bool = True
    report: bool = False
    bootstrap: int = 1000
    seed: int = 0


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


def check_type(value: Any, expected: Any) -> Any:
    """The value in its canonical form (lists for list types), or None when it has the wrong type."""
    if expected in (PATHS, STRINGS):
        values = [value] if isinstance(value, str) else value
        ok = isinstance(values, list) and all(isinstance(v, str) and v for v in values)
        return tuple(values) if ok else None
    if expected == INTS:
        values = [value] if isinstance(value, int) and not isinstance(value, bool) else value
        ok = isinstance(values, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in values)
        return tuple(values) if ok and values else None
    if expected is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return float(value) if ok else None
    if expected is int:
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    return value if isinstance(value, expected) else None


def type_name(expected: Any) -> str:
    """How a type is named in messages."""
    if isinstance(expected, str):
        return f"{'an' if expected[0] in 'aeiou' else 'a'} {expected}"
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}[expected]


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
        canonical = check_type(value, keys[key])
        if canonical is None:
            raise error(where, key, f"must be {type_name(keys[key])} (got {value!r})")
        checked[key] = canonical
    return checked
