"""Loading an experiment file: the checked tables become an `Experiment` with paths resolved against the
file's folder, every input checked to exist and every value checked to be usable — before any work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proctor import api
from proctor.api.grading import METHOD_NAMES
from proctor.errors import ProctorError
from proctor.experiment.schema import (
    BACKEND_KEYS,
    INPUT_KINDS,
    Evaluation,
    Experiment,
    Grader,
    Source,
    checked_tables,
    read_document,
)
from proctor.options.backend import BackendOptions
from proctor.options.evaluation import EvaluationOptions
from proctor.options.grading import GradingOptions
from proctor.options.model import choices, spec
from proctor.options.numeric import number_problem

FORMATS: tuple[str, ...] = spec(EvaluationOptions, "leaderboards").choices or ()

CHOICES = {**choices(GradingOptions), **choices(EvaluationOptions), **choices(BackendOptions),
           "response_format": ("auto", "jsonl", "rag24", "rag25", "text-dir")}
"""The keys that take one of a few words (the lists of `leaderboards` are checked below)."""
OPTION_KEYS = ("depth", "max_queries", "max_passages", "bank", "prefilter_below", "verify", "max_attempts")


def load_experiment(path: str | Path) -> Experiment:
    """Read and validate an experiment file (InputError naming file, line and key on any problem)."""
    path = Path(path)
    text, document = read_document(path)
    draft = Experiment(path, text, "", path, path, (), {}, (), Evaluation())
    tables = checked_tables(document, draft.error)
    for table, entries in tables.items():
        for index, values in enumerate(entries):
            _check_values(values, (table, index) if table == "grade" else (table,), draft.error)
    base = path.parent
    settings = (tables.get("experiment") or [{}])[0]
    name = settings.get("name") or path.stem
    out = base / settings.get("out", f"{name}-out")
    store = base / settings["store"] if "store" in settings else out / f"{name}.db"
    inputs = (tables.get("inputs") or [{}])[0]
    sources = tuple(_sources(inputs, base, draft.error))
    import_options = {k: v for k, v in inputs.items() if k not in INPUT_KINDS}
    graders = tuple(_grader(values, index, base, draft.error) for index, values in enumerate(tables.get("grade", [])))
    names = [g.name for g in graders]
    for index, grader in enumerate(graders):
        if names.index(grader.name) != index:
            raise draft.error(("grade", index), "name" if "name" in tables["grade"][index] else "method",
                              f"a second grader named {grader.name!r}; give each [[grade]] its own name")
    evaluation = _evaluation((tables.get("evaluate") or [{}])[0], base, draft.error)
    if "correlations" in (tables.get("evaluate") or [{}])[0] and evaluation.correlations and not evaluation.official:
        raise draft.error(("evaluate",), "correlations", "correlations need evaluate.official (the official "
                          "leaderboard)")
    if evaluation.report and evaluation.official is None:
        raise draft.error(("evaluate",), "report", "the report needs evaluate.official (the official leaderboard)")
    return Experiment(path, text, name, store, out, sources, import_options, graders, evaluation)


def _check_values(values: dict[str, Any], where, error) -> None:
    for key, value in values.items():
        if key in CHOICES and value not in CHOICES[key]:
            raise error(where, key, f"{value!r} is not one of {', '.join(CHOICES[key])}")
        if (problem := number_problem(key, value)) is not None:
            raise error(where, key, problem)
        if key in ("min_grade",) and not all(1 <= v <= 5 for v in value):
            raise error(where, key, f"grades are 1..5 (got {list(value)})")
        if key in ("cover_budget",) and not all(v >= 1 for v in value):
            raise error(where, key, f"budgets are 1 or more (got {list(value)})")
        if key == "method" and value not in METHOD_NAMES:
            raise error(where, key, f"unknown method {value!r}; choose one of {', '.join(METHOD_NAMES)}")
        if key == "measures":
            for measure in value:
                try:
                    spec = api.measures().parse(measure)  # the one measure registry
                except ProctorError as exc:
                    raise error(where, key, str(exc)) from None
                if spec.kind in ("nuggets", "citations"):  # no [[grade]] method makes the grade sets they read
                    raise error(where, key, f"{measure!r} scores generated answers (a {spec.kind} leaderboard of "
                                "a store); an experiment's measures score its [[grade]] grade sets of passages")
                if getattr(spec, "missing", None) is not None:  # its human and report leaderboards: skip
                    raise error(where, key, f"{measure!r}: an experiment skips a query a run did not answer for "
                                "measures over labels (trec_eval without -c); give it without missing=")
        if key == "leaderboards" and not set(value) <= set(FORMATS):
            raise error(where, key, f"formats are {', '.join(FORMATS[:-1])} and {FORMATS[-1]} (got {list(value)})")


def _existing(base: Path, text: str, where, key: str, error) -> Path:
    path = base / text
    if not path.exists():
        raise error(where, key, f"no such file or folder: {path}")
    return path


def _sources(inputs: dict[str, Any], base: Path, error) -> list[Source]:
    sources = []
    for kind in INPUT_KINDS:
        for text in inputs.get(kind, ()):
            if text.startswith("irds:"):
                if kind not in ("queries", "qrels", "corpus"):
                    raise error(("inputs",), kind, "ir_datasets ids give queries, qrels and corpus only")
                sources.append(Source(kind, None, text.removeprefix("irds:")))
            else:
                sources.append(Source(kind, _existing(base, text, ("inputs",), kind, error)))
    return sources


def _grader(values: dict[str, Any], index: int, base: Path, error) -> Grader:
    where = ("grade", index)
    if "method" not in values:
        raise error(where, None, "missing key method (e.g. method = \"self-rating\")")
    method = values["method"]
    llm = values.get("llm") or ("embed:minilm" if method == "embedding" else None)
    if llm is None:
        raise error(where, "method", "missing key llm (e.g. llm = \"openai:MODEL\" or \"replay:FILE\")")
    if (method == "embedding") != llm.startswith("embed:"):
        raise error(where, "llm", "method embedding goes with llm embed:..., and embed backends only with it")
    if llm.startswith("replay:"):
        source = llm.removeprefix("replay:")
        file, at, model = source.partition("@")
        llm = f"replay:{_existing(base, file, where, 'llm', error)}{at}{model}"
    if ("prefilter" in values) != ("prefilter_below" in values):
        raise error(where, "prefilter", "prefilter and prefilter_below go together")
    if values.get("verify") == "llm" and method != "qa":
        raise error(where, "verify", "verify = \"llm\" applies to method qa only")
    thresholds = values.get("sum_thresholds", Grader.thresholds)
    if len(thresholds) != 3 or not thresholds[0] >= thresholds[1] >= thresholds[2]:
        raise error(where, "sum_thresholds", "three decreasing integers, e.g. [10, 7, 5]")
    templates = tuple(_existing(base, t, where, "template", error) for t in values.get("template", ()))
    rate = values.get("pairs_per_second")
    if rate is not None and not rate > 0:
        raise error(where, "pairs_per_second", "a positive number (pairs graded per second, for dry-run estimates)")
    return Grader(values.get("name", method), method, llm, error(where, None, "").line, templates,
                  {k: values[k] for k in OPTION_KEYS if k in values},
                  {k: values[k] for k in BACKEND_KEYS if k in values}, values.get("aggregate", Grader.aggregate),
                  tuple(thresholds), values.get("prefilter"), rate)


def _evaluation(values: dict[str, Any], base: Path, error) -> Evaluation:
    defaults = Evaluation()
    official = _existing(base, values["official"], ("evaluate",), "official", error) if "official" in values else None
    return Evaluation(values.get("measures", defaults.measures), values.get("min_grade", defaults.min_grades),
                      values.get("cover_budget", defaults.cover_budgets), values.get("missing", defaults.missing),
                      values.get("min_questions", defaults.min_questions), official,
                      values.get("judged_relevant", defaults.judged_relevant), values.get("human", defaults.human),
                      values.get("leaderboards", defaults.formats), values.get("qrels", defaults.qrels),
                      values.get("correlations", official is not None), values.get("report", defaults.report),
                      values.get("bootstrap", defaults.bootstrap), values.get("seed", defaults.seed))
