"""Experiments: one TOML file names the inputs, the graders and the evaluation; `run_experiment` runs the
steps whose inputs changed and writes `run.json` (docs/experiments.md)."""

from proctor.experiment.load import load_experiment
from proctor.experiment.request import Estimate, ExperimentRequest, experiment_request
from proctor.experiment.runner import RunResult, run_experiment

__all__ = ["Estimate", "ExperimentRequest", "RunResult", "experiment_request", "load_experiment", "run_experiment"]
