"""`proctor run EXPERIMENT.toml`: validation (file, line, key; nothing written), steps skipped by content
hash, the run.json manifest and the commands it lists reproducing the same files."""

from __future__ import annotations

import hashlib
import json
import shlex
import time
from pathlib import Path

import pytest

import proctor
from proctor.store import Store

EXPERIMENT = """\
# the demo collection, graded by replaying its recorded example grades
[experiment]
name = "t"
out = "out"

[inputs]
queries = "col/queries.tsv"
corpus = "col/corpus.jsonl"
qrels = "col/qrels.txt"
runs = "col/runs"
banks = "col/bank.jsonl"

[[grade]]
name = "recorded"
method = "self-rating"
llm = "replay:col/grades.jsonl"

[evaluate]
measures = ["P@3", "nDCG@5"]
min_grade = [3, 4]
cover_budget = 2
official = "col/official.json"
bootstrap = 50
"""


def write_experiment(folder: Path, text: str = EXPERIMENT) -> Path:
    """The demo collection, an official leaderboard and an experiment file in `folder`."""
    from proctor.demo.write import write_collection

    write_collection(folder / "col")
    (folder / "col" / "official.json").write_text(json.dumps({"strong": 1, "middling": 2, "weak": 3, "partial": 4}))
    path = folder / "exp.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_second_run_does_nothing_and_manifest_says_how(tmp_path, cli):
    path = write_experiment(tmp_path)
    first = cli("run", path)
    assert first.code == 0, first.err
    manifest = json.loads((tmp_path / "out" / "run.json").read_text())
    assert manifest["last_run"]["ran"] == ["import", "grade:recorded", "evaluate"]
    boards = sorted(p.name for p in (tmp_path / "out" / "leaderboards").iterdir())
    assert "recorded.P@3.t3.tsv" in boards and "recorded.nDCG@5.json" in boards and "human.P@3.tsv" in boards
    assert "recorded.cover.t4.k2.tsv" in boards and (tmp_path / "out" / "qrels" / "recorded.qrels").exists()
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "out").rglob("*") if p.is_file() and p.name != "run.json"}
    start = time.monotonic()
    second = cli("run", path)  # in-process: the skip, not the start-up, is what is timed
    elapsed = time.monotonic() - start
    assert second.code == 0, second.err
    assert elapsed < 10.0, elapsed  # a guard only (the skip is proven below); 0.6 s on a quiet machine
    again = json.loads((tmp_path / "out" / "run.json").read_text())
    assert again["last_run"] == {"ran": [], "skipped": ["import", "grade:recorded", "evaluate"], "status": 0}
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    store = Store.open(tmp_path / "out" / "t.db")
    try:
        (grade_set,) = store.grades.grade_sets()
    finally:
        store.close()
    recorded = again["grade_sets"]["recorded"]
    assert (recorded["id"], recorded["model"], recorded["prompt_version"]) == (
        grade_set.id, grade_set.model, grade_set.prompt_version)
    assert again["proctor_version"] and again["experiment"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    bank = tmp_path / "col" / "bank.jsonl"
    assert again["inputs"][str(bank)] == hashlib.sha256(bank.read_bytes()).hexdigest()
    usage = again["steps"]["grade:recorded"]["usage"]
    assert usage["graded_now"] == 72 and usage["failures"] == 0
    assert all(again["steps"][s]["seconds"] >= 0 for s in ("import", "grade:recorded", "evaluate"))
    assert {r["leaderboard"] for r in again["steps"]["evaluate"]["correlations"]} >= {"recorded.P@3.t3", "human.P@3"}


def test_manifest_commands_reproduce_the_files(tmp_path, cli, monkeypatch):
    path = write_experiment(tmp_path)
    assert cli("run", path).code == 0
    out = tmp_path / "out"
    manifest = json.loads((out / "run.json").read_text())
    copy = tmp_path / "copy"
    for sub in ("leaderboards", "qrels"):
        (copy / sub).mkdir(parents=True)
    for line in manifest["commands"]:
        line = line.replace(str(out), str(copy))
        command, _, target = line.partition(" > ")
        args = shlex.split(command)
        assert args[0] == "proctor"
        if args[1] == "correlate":
            continue
        result = cli(*args[1:])
        assert result.code == 0, (line, result.err)
        if target:
            Path(target).write_text(result.out)
    for produced in (out / "leaderboards").iterdir():
        assert (copy / "leaderboards" / produced.name).read_text() == produced.read_text(), produced.name
    assert (copy / "qrels" / "recorded.qrels").read_text() == (out / "qrels" / "recorded.qrels").read_text()


def test_changed_input_reruns_what_depends_on_it(tmp_path, cli):
    path = write_experiment(tmp_path)
    assert cli("run", path).code == 0
    official = tmp_path / "col" / "official.json"
    official.write_text(json.dumps({"strong": 1, "middling": 3, "weak": 2, "partial": 4}))
    assert cli("run", path).code == 0
    manifest = json.loads((tmp_path / "out" / "run.json").read_text())
    assert manifest["last_run"]["ran"] == ["evaluate"]
    run = tmp_path / "col" / "runs" / "weak.run"
    run.write_text(run.read_text().replace("d404 1 9.0", "d404 1 9.5"))
    assert cli("run", path).code == 0
    manifest = json.loads((tmp_path / "out" / "run.json").read_text())
    assert manifest["last_run"]["ran"] == ["import", "grade:recorded", "evaluate"]
    assert manifest["steps"]["grade:recorded"]["usage"]["graded_now"] == 0


def test_only_runs_one_step(tmp_path, cli):
    path = write_experiment(tmp_path)
    assert cli("run", path, "--only", "import").code == 0
    manifest = json.loads((tmp_path / "out" / "run.json").read_text())
    assert list(manifest["steps"]) == ["import"]
    refused = cli("run", path, "--only", "evaluate")
    assert refused.code == 2 and "grader recorded has not graded yet" in refused.err
    assert cli("run", path, "--only", "grade").code == 0
    assert cli("run", path).code == 0
    manifest = json.loads((tmp_path / "out" / "run.json").read_text())
    assert manifest["last_run"]["ran"] == ["evaluate"]
    nope = cli("run", path, "--only", "nope")
    assert nope.code == 2 and "--only nope: no such step; steps: import, grade:recorded, evaluate" in nope.err


def test_a_step_is_named_as_the_caller_names_it(tmp_path):
    """Below the command line the refusal names the parameter (`only`), as `proctor run` names its flag."""
    from proctor.errors import UsageError

    with pytest.raises(UsageError, match=r"^only nope: no such step; steps: import, grade:recorded, evaluate"):
        proctor.experiment_request(write_experiment(tmp_path), only="nope").run()


@pytest.mark.parametrize(("edit", "line", "words"), [
    (("bootstrap = 50", "bootstrap = 50\nboostrap = 3"), 24, ["evaluate.boostrap", "unknown key"]),
    (("cover_budget = 2", "cover_budget = \"2\""), 21, ["evaluate.cover_budget", "integer"]),
    (("col/bank.jsonl", "col/banks.jsonl"), 11, ["inputs.banks", "no such file", "banks.jsonl"]),
    (("llm = \"replay:col/grades.jsonl\"", "llm = \"replay:col/gone.jsonl\""), 16, ["[[grade]] #1 llm", "gone"]),
    (("method = \"self-rating\"", "method = \"self-rated\""), 15, ["[[grade]] #1 method", "unknown method"]),
    (("min_grade = [3, 4]", "min_grade = [3, 6]"), 20, ["evaluate.min_grade", "1..5"]),
    (("[evaluate]", "[evaluation]"), 18, ["evaluation", "unknown table"]),
    (("measures = [\"P@3\", \"nDCG@5\"]", "measures = [\"P@3\", \"nDCG@5\""), 20, ["not valid TOML"]),
    (("name = \"recorded\"", "name = \"recorded\"\nllm_timeout = 5"), 15, ["[[grade]] #1 llm_timeout"]),
])
def test_malformed_experiment_exits_2_naming_line_and_key(tmp_path, cli, edit, line, words):
    path = write_experiment(tmp_path, EXPERIMENT.replace(*edit))
    result = cli("run", path)
    assert result.code == 2
    assert f"{path}:{line}:" in result.err, result.err
    assert all(w in result.err for w in words), result.err
    assert "Traceback" not in result.err and not (tmp_path / "out").exists()


def test_grades_added_by_another_command_make_evaluate_run_again(tmp_path, cli):
    path = write_experiment(tmp_path, EXPERIMENT.replace('llm = "replay:col/grades.jsonl"',
                                                         'llm = "replay:col/grades.jsonl"\nmax_passages = 2'))
    assert cli("run", path).code == 0
    before = (tmp_path / "out" / "leaderboards" / "recorded.P@3.t4.tsv").read_text()
    grade = cli("grade", "--store", tmp_path / "out" / "t.db", "--method", "self-rating", "--llm",
                f"replay:{tmp_path / 'col' / 'grades.jsonl'}")
    assert grade.code == 0, grade.err
    assert cli("run", path).code == 0
    manifest = json.loads((tmp_path / "out" / "run.json").read_text())
    assert manifest["last_run"]["ran"] == ["evaluate"]
    assert (tmp_path / "out" / "leaderboards" / "recorded.P@3.t4.tsv").read_text() != before


def test_two_experiments_never_share_an_out_folder(tmp_path, cli):
    path = write_experiment(tmp_path)
    assert cli("run", path).code == 0
    other = tmp_path / "other.toml"
    other.write_text(path.read_text().replace('name = "t"', 'name = "u"'), encoding="utf-8")
    before = (tmp_path / "out" / "run.json").read_bytes()
    refused = cli("run", other)
    assert refused.code == 2 and "holds the outputs of another experiment" in refused.err and "exp.toml" in refused.err
    assert (tmp_path / "out" / "run.json").read_bytes() == before and not (tmp_path / "out" / "u.db").exists()
