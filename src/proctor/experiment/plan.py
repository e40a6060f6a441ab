"""The plan of an experiment: its steps (import, one grade step per `[[grade]]`, evaluate), each with the
content hash of everything it depends on and the `proctor` commands it stands for."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.experiment.hashing import expand, file_digest, step_digest
from proctor.experiment.schema import Experiment, Grader, Source
from proctor.options.backend import BackendOptions
from proctor.options.grading import GradingOptions
from proctor.options.model import default, flag

IMPORT_KIND = {"banks": "bank"}


@dataclass
class Step:
    """One step of the plan."""

    name: str
    digest: str
    commands: list[str] = field(default_factory=list)


@dataclass
class Plan:
    """The steps of an experiment and the hashes of its input files."""

    experiment: Experiment
    files: dict[Source, list[Path]]
    """`{source: files}` (a folder of runs is its files)."""
    inputs: dict[str, str]
    """`{file: sha256}`."""
    steps: list[Step]

    def step(self, name: str) -> Step:
        """The step called `name`."""
        return next(s for s in self.steps if s.name == name)


def command(*args: Any) -> str:
    """A `proctor` command line, quoted for a POSIX shell."""
    return shlex.join(["proctor", *map(str, args)])


def make_plan(experiment: Experiment, materialised: dict[Source, list[Path]] | None = None) -> Plan:
    """Hash every input and describe every step (reads the inputs; writes nothing)."""
    files: dict[Source, list[Path]] = {}
    for source in experiment.sources:
        files[source] = (materialised or {}).get(source) or expand(source.path)  # type: ignore[arg-type]
    inputs = {str(f): file_digest(f) for paths in files.values() for f in paths}
    steps = [_import_step(experiment, files, inputs)]
    for grader in experiment.graders:
        steps.append(_grade_step(experiment, grader, steps[0].digest))
    evaluation = {k: str(v) if isinstance(v, Path) else v for k, v in vars(experiment.evaluation).items()}
    official = experiment.evaluation.official
    steps.append(Step("evaluate", step_digest({"grades": [s.digest for s in steps[1:]], "evaluation": evaluation,
                                               "official": file_digest(official) if official else None,
                                               "out": str(experiment.out)})))
    return Plan(experiment, files, inputs, steps)


def import_kind(source: Source) -> str:
    """The `proctor import` kind of a source."""
    return IMPORT_KIND.get(source.kind, source.kind)


def import_flags(experiment: Experiment, source: Source) -> list[str]:
    """The `proctor import` flags of a source, from the `[inputs]` options."""
    options = experiment.import_options
    flags = []
    if source.kind == "exampp" and not options.get("exampp_grades", True):
        flags.append("--no-grades")
    if options.get("skip_unknown_queries"):
        flags.append("--skip-unknown-queries")
    if source.kind == "responses":
        if options.get("response_format", "auto") != "auto":
            flags += ["--format", options["response_format"]]
        if options.get("word_budget"):
            flags += ["--word-budget", str(options["word_budget"])]
    return flags


def _import_step(experiment: Experiment, files: dict[Source, list[Path]], inputs: dict[str, str]) -> Step:
    description = [{"kind": s.kind, "files": [inputs[str(f)] for f in files[s]],
                    "flags": import_flags(experiment, s)} for s in experiment.sources]
    commands = [command("import", import_kind(s), *files[s], "--store", experiment.store,
                        *import_flags(experiment, s)) for s in experiment.sources]
    return Step("import", step_digest({"sources": description, "store": str(experiment.store)}), commands)


def grade_flags(grader: Grader) -> list[str]:
    """The `proctor grade` flags of a grader."""
    flags = ["--method", grader.method, "--llm", grader.llm]
    for template in grader.templates:
        flags += ["--template", str(template)]
    if grader.aggregate != default(GradingOptions, "aggregate"):
        flags += [flag(GradingOptions, "aggregate"), grader.aggregate]
    if grader.thresholds != default(GradingOptions, "sum_thresholds"):
        flags += [flag(GradingOptions, "sum_thresholds"), ",".join(map(str, grader.thresholds))]
    if grader.prefilter:
        flags += [flag(GradingOptions, "prefilter"), grader.prefilter]
    for key, value in {**grader.options, **grader.backend}.items():
        option = flag(BackendOptions if key in grader.backend else GradingOptions, key)
        if isinstance(value, bool):
            flags += [option] if value else []
        else:
            flags += [option, str(value)]
    return flags


def _grade_step(experiment: Experiment, grader: Grader, imported: str) -> Step:
    replay = grader.llm.removeprefix("replay:").partition("@")[0] if grader.llm.startswith("replay:") else None
    description = {"imported": imported, "method": grader.method, "llm": grader.llm, "options": grader.options,
                   "backend": grader.backend, "aggregate": grader.aggregate, "thresholds": grader.thresholds,
                   "prefilter": grader.prefilter, "templates": [file_digest(t) for t in grader.templates],
                   "replay": file_digest(Path(replay)) if replay else None}
    return Step(f"grade:{grader.name}", step_digest(description),
                [command("grade", "--store", experiment.store, *grade_flags(grader))])
