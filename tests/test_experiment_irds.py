"""ir_datasets ids as experiment inputs, with a small dataset registered by the test itself (local files, no
download); a dataset whose files are not local is refused before any work, saying what is missing."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from test_experiment import write_experiment

# found, not imported: ir_datasets loads when a test registers its dataset (collection in every xdist worker stays
# light)
pytestmark = pytest.mark.skipif(importlib.util.find_spec("ir_datasets") is None, reason="needs ir_datasets")

IRDS_EXPERIMENT = """\
[inputs]
queries = "irds:{name}"
corpus = "irds:{name}"
qrels = "irds:{name}"
runs = "col/runs"
banks = "col/bank.jsonl"

[[grade]]
name = "recorded"
method = "self-rating"
llm = "replay:col/grades.jsonl"

[evaluate]
measures = ["nDCG@5"]
correlations = false
"""


def _register(name: str, docs) -> None:
    import ir_datasets
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvQueries

    if name not in ir_datasets.registry._registered:
        ir_datasets.registry.register(name, Dataset(docs[0], TsvQueries(docs[1]), TrecQrels(docs[2], {})))


def test_irds_inputs_give_the_same_results_as_the_files(tmp_path, cli):
    from ir_datasets.formats import TsvDocs
    from ir_datasets.util import LocalDownload

    files = write_experiment(tmp_path).parent / "col"
    corpus = tmp_path / "corpus.tsv"
    corpus.write_text("".join(f"{json.loads(line)['id']}\t{json.loads(line)['text']}\n"
                              for line in (files / "corpus.jsonl").read_text().splitlines()))
    _register("proctor-test/tiny", (TsvDocs(LocalDownload(corpus)), LocalDownload(files / "queries.tsv"),
                                    LocalDownload(files / "qrels.txt")))
    path = tmp_path / "irds.toml"
    path.write_text(IRDS_EXPERIMENT.format(name="proctor-test/tiny"))
    result = cli("run", path)
    assert result.code == 0, result.err
    manifest = json.loads((tmp_path / "irds-out" / "run.json").read_text())
    written = sorted(p.name for p in (tmp_path / "irds-out" / "inputs").iterdir())
    assert written == ["proctor-test_tiny.corpus.jsonl", "proctor-test_tiny.qrels.txt", "proctor-test_tiny.queries.tsv"]
    assert all(str(tmp_path / "irds-out" / "inputs" / w) in manifest["inputs"] for w in written)
    assert manifest["steps"]["grade:recorded"]["usage"]["graded_now"] == 72
    human = (tmp_path / "irds-out" / "leaderboards" / "human.nDCG@5.tsv").read_text()
    assert cli("run", path).code == 0
    assert json.loads((tmp_path / "irds-out" / "run.json").read_text())["last_run"]["ran"] == []
    plain = tmp_path / "plain.toml"
    plain.write_text(IRDS_EXPERIMENT.replace('"irds:{name}"', "X").replace(
        "queries = X", 'queries = "col/queries.tsv"').replace("corpus = X", 'corpus = "col/corpus.jsonl"').replace(
        "qrels = X", 'qrels = "col/qrels.txt"'))
    assert cli("run", plain).code == 0
    assert (tmp_path / "plain-out" / "leaderboards" / "human.nDCG@5.tsv").read_text() == human


def test_irds_without_local_files_is_refused(tmp_path, cli):
    from ir_datasets.formats import TsvDocs
    from ir_datasets.util import Download, LocalDownload, RequestsDownload

    files = write_experiment(tmp_path).parent / "col"
    remote = Download([RequestsDownload("http://127.0.0.1:9/corpus.tsv")], cache_path=str(tmp_path / "absent.tsv"))
    _register("proctor-test/remote", (TsvDocs(remote), LocalDownload(files / "queries.tsv"),
                                      LocalDownload(files / "qrels.txt")))
    path = tmp_path / "irds.toml"
    path.write_text(IRDS_EXPERIMENT.format(name="proctor-test/remote"))
    result = cli("run", path)
    assert result.code == 2
    assert f"{path}:3: inputs.corpus: irds:proctor-test/remote: its corpus are not in the local copy" in result.err
    assert "never downloads" in result.err and 'corpus = "corpus.jsonl"' in result.err
    assert not (tmp_path / "irds-out").exists() and not (tmp_path / "absent.tsv").exists()
    assert cli("run", path, "--dry-run").code == 2


def test_irds_without_the_package(tmp_path, cli, monkeypatch):
    write_experiment(tmp_path)
    path = tmp_path / "irds.toml"
    path.write_text(IRDS_EXPERIMENT.format(name="any/dataset"))
    monkeypatch.setitem(sys.modules, "ir_datasets", None)
    result = cli("run", path)
    assert result.code == 2 and f"{path}:2: inputs.queries" in result.err
    assert "needs the optional ir_datasets package" in result.err and 'queries = "queries.tsv"' in result.err
