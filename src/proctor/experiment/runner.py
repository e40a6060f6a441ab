"""Running an experiment: each step runs only when the content hash of what it depends on differs from the
last run's (recorded in `run.json`), so a second run does nothing; an interrupted grading step resumes
(only pairs without a grade are sent). Every step goes through the Python API (`proctor.api`)."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proctor import api
from proctor.api.experiments import folder_target
from proctor.errors import UsageError
from proctor.experiment.evaluate import evaluate
from proctor.experiment.load import load_experiment
from proctor.experiment.manifest import new_manifest, read_manifest, usage, write_manifest
from proctor.experiment.plan import Plan, Step, import_kind, make_plan
from proctor.experiment.schema import Grader
from proctor.options.numeric import check_numbers

if TYPE_CHECKING:
    from proctor.api import Store


@dataclass
class RunResult:
    """What a run did: its manifest, the steps it ran and skipped, its exit status."""

    manifest: dict[str, Any]
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    status: int = 0

    def grade_sets(self) -> dict[str, str]:
        """`{grader name: grade set id}`."""
        return {name.removeprefix("grade:"): step["grade_set"]["id"] for name, step in self.manifest["steps"].items()
                if name.startswith("grade:") and "grade_set" in step}


def prepare(path: str | Path, *, max_queries: int | None = None, max_passages: int | None = None,
            inputs: Path | None = None) -> Plan:
    """Load and validate the file, apply trial limits to every grader, hash the inputs (writes nothing but
    the files of ir_datasets inputs, into `inputs`, default OUT/inputs)."""
    experiment = load_experiment(path)
    limits = {k: v for k, v in (("max_queries", max_queries), ("max_passages", max_passages)) if v is not None}
    check_numbers(limits)
    if limits:
        graders = tuple(replace(g, options={**g.options, **limits}) for g in experiment.graders)
        experiment = replace(experiment, graders=graders)
    from proctor.experiment.irds import materialise

    return make_plan(experiment, materialise(experiment, inputs or experiment.out / "inputs"))


def step_names(plan: Plan, only: str | None) -> list[str]:
    """The steps `only` selects (all without it): `import`, `grade` (every grader), `grade:NAME`, `evaluate`."""
    names = [s.name for s in plan.steps]
    if only is None:
        return names
    chosen = [n for n in names if n == only or (only == "grade" and n.startswith("grade:"))]
    if not chosen:
        raise UsageError(f"{{only}} {only}: no such step; steps: {', '.join(names)} (or grade for every grader)",
                         params=("only",))
    return chosen


def run_experiment(path: str | Path, *, only: str | None = None, max_queries: int | None = None,
                   max_passages: int | None = None, progress: bool | None = False, log=None) -> RunResult:
    """Run an experiment file (steps whose inputs changed); returns what it did. `log` gets one line per step."""
    plan = prepare(path, max_queries=max_queries, max_passages=max_passages)
    experiment = plan.experiment
    selected = step_names(plan, only)
    store_existed = experiment.store.exists()
    _own_out(experiment)
    previous = read_manifest(experiment.out) if store_existed else {}
    out_existed = experiment.out.exists()
    folder_target(experiment.out, "out")
    manifest = new_manifest(experiment, plan.inputs, previous)
    result = RunResult(manifest)
    started = time.monotonic()
    with _Lazy(experiment.store) as store:
        try:
            for step in plan.steps:
                if step.name not in selected:
                    continue
                if _fresh(manifest["steps"].get(step.name), step, store_existed, store):
                    result.skipped.append(step.name)
                    _say(log, f"{step.name}: unchanged, skipped")
                    continue
                status = _run_step(store, plan, step, manifest, progress)
                result.ran.append(step.name)
                _say(log, f"{step.name}: {manifest['steps'][step.name]['status']} "
                          f"({manifest['steps'][step.name]['seconds']} s)")
                write_manifest(experiment.out, _finish(manifest, plan, result, started))
                if status:
                    result.status = status
                    break
        except BaseException:
            if not store_existed and not result.ran:  # the first step failed: leave nothing behind
                store.remove()
                if not out_existed:
                    with contextlib.suppress(OSError):
                        experiment.out.rmdir()
            raise
    write_manifest(experiment.out, _finish(manifest, plan, result, started))
    return result


def _own_out(experiment) -> None:
    """Refuse an out folder whose run.json belongs to another experiment file (its outputs would be mixed)."""
    other = read_manifest(experiment.out).get("experiment", {}).get("file")
    if other and Path(other).resolve() != Path(experiment.path).resolve():
        raise UsageError(f"{experiment.path}: out folder {experiment.out} holds the outputs of another experiment "
                         f"({other}); give this one its own `out` (or delete {experiment.out / 'run.json'} if that "
                         "file was only moved)")


class _Lazy:
    """The store, opened (or created) only when a step needs it."""

    def __init__(self, path: Path) -> None:
        self.path, self.store = path, None

    def __enter__(self) -> _Lazy:
        return self

    def __exit__(self, *exc) -> None:
        if self.store is not None:
            self.store.close()

    def get(self) -> Store:
        """The open store."""
        if self.store is None:
            self.store = api.open_store(self.path, create=True)
        return self.store

    def remove(self) -> None:
        """Remove a store this run created."""
        if self.store is not None:
            self.store.close()
            self.store = None
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)


def _fresh(record: dict[str, Any] | None, step: Step, store_existed: bool, lazy: _Lazy) -> bool:
    """Done before with the same digest, its files still there, and (evaluate) the grade sets it read still
    hold the grades they held then (another command may have graded into them since)."""
    if not record or not store_existed or record.get("digest") != step.digest or record.get("status") != "done":
        return False
    if not all(Path(f).exists() for f in record.get("files", ())):
        return False
    counts = record.get("grade_counts")
    return counts is None or _grade_counts(lazy.get(), list(counts)) == counts


def _grade_counts(store: Store, ids: list[str]) -> dict[str, list[int]]:
    """`{grade set id: [grades, failures]}` of the given grade sets now."""
    return {s.id: [s.grades, s.failures] for s in store.grades.grade_sets() if s.id in ids}


def _run_step(lazy: _Lazy, plan: Plan, step: Step, manifest: dict[str, Any], progress: bool | None) -> int:
    store, experiment = lazy.get(), plan.experiment
    started = time.monotonic()
    record: dict[str, Any] = {"digest": step.digest, "status": "done", "commands": list(step.commands)}
    status = 0
    if step.name == "import":
        record["imported"] = import_sources(store, plan)
    elif step.name.startswith("grade:"):
        grader = next(g for g in experiment.graders if f"grade:{g.name}" == step.name)
        status = _grade(store, grader, record, progress)
    else:
        grade_sets = {}
        for grader in experiment.graders:
            graded = manifest["steps"].get(f"grade:{grader.name}", {})
            if graded.get("status") != "done" or graded.get("digest") != plan.step(f"grade:{grader.name}").digest:
                raise UsageError(f"evaluate: grader {grader.name} has not graded yet "
                                 f"(run the grade:{grader.name} step)")
            grade_sets[grader.name] = graded["grade_set"]["id"]
        outputs = evaluate(store, experiment, grade_sets)
        record.update(files=outputs.files, commands=outputs.commands, correlations=outputs.correlations,
                      notes=outputs.notes,
                      grade_counts=_grade_counts(store, list(grade_sets.values())))
    record["seconds"] = round(time.monotonic() - started, 3)
    record["ran_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    manifest["steps"][step.name] = record
    return status


def import_sources(store: Store, plan: Plan) -> list[str]:
    """Import every input of the plan (each kind in one transaction); one summary line per file."""
    experiment, lines = plan.experiment, []
    options = experiment.import_options
    for source in experiment.sources:
        kind = import_kind(source)
        extra: dict[str, Any] = {"skip_unknown_queries": bool(options.get("skip_unknown_queries")),
                                 "replace": True}  # the experiment declares its inputs: a changed one replaces
        if kind == "exampp":
            extra["with_grades"] = options.get("exampp_grades", True)
        if kind == "responses":
            extra.update(response_format=options.get("response_format", "auto"), word_budget=options.get("word_budget"))
        for report in api.import_files(store, kind, plan.files[source], **extra):
            lines.extend([*report.notes, report.summary()])
    return lines


def _grade(store: Store, grader: Grader, record: dict[str, Any], progress: bool | None) -> int:
    grade_set, summaries = api.grade(store, grader.method, grader.llm, templates=tuple(map(str, grader.templates)),
                                     prefilter=grader.prefilter, aggregate=grader.aggregate,
                                     thresholds=grader.thresholds, progress=progress, **grader.options,
                                     **grader.backend)
    record["grade_set"] = next((s for s in store.grades.grade_sets() if s.id == grade_set.id), grade_set).as_dict()
    record["usage"] = usage(summaries)
    graded, failures = record["usage"]["graded_now"], record["usage"]["failures"]
    if any(s.interrupted for s in summaries):
        record["status"] = "interrupted"
        return 130
    if graded and failures == graded:
        record["status"] = "failed"
        return 3
    if failures:  # failed pairs are tried again by the next run (up to max_attempts), as `proctor grade` does
        record["status"] = "incomplete"
    return 0


def _finish(manifest: dict[str, Any], plan: Plan, result: RunResult, started: float) -> dict[str, Any]:
    manifest["commands"] = [c for s in plan.steps for c in manifest["steps"].get(s.name, {}).get("commands", ())]
    manifest["grade_sets"] = {name.removeprefix("grade:"): step["grade_set"] for name, step in manifest["steps"].items()
                              if name.startswith("grade:") and "grade_set" in step}
    manifest["last_run"] = {"ran": list(result.ran), "skipped": list(result.skipped), "status": result.status}
    manifest["seconds"] = round(time.monotonic() - started, 3)
    return manifest


def _say(log, line: str) -> None:
    if log is not None:
        log(line)
