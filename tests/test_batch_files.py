"""Batch files: export → a local test server as the batch worker → import gives exactly the grades of the
in-process engine (DL19 subset when ../shared is present, else the demo collection); importing twice
changes nothing; errored lines are recorded as failures and exported again. The claims hold per query: the DL19
store holds three queries (the tests grade two), so comparing a whole store before and after is cheap."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import DL19, DL19_POOL, on_ci, require_shared, seed_demo
from fake_openai import FakeOpenAI, run_batch_file
from proctor.cli import main
from proctor.store import Store

SUBSET = ("--max-queries", "2", "--max-passages", "6")


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    """A store without grades of the chosen method: the first three DL19 queries (their lines of the graded pool,
    imported with their grades) with their questions of the bank, or the demo collection."""
    folder = tmp_path_factory.mktemp("batch")
    if not DL19_POOL.exists() and not on_ci():  # on CI the DL19 subset is required
        return seed_demo(folder)
    subset, store = folder / "dl19-first-queries.jsonl", folder / "dl19.db"
    _first_queries(require_shared(DL19_POOL), 3, subset)  # fails on CI when ../shared is absent
    assert main(["import", "exampp", str(subset), "--store", str(store)]) == 0
    assert main(["import", "bank", str(DL19 / "dl19-questions-graded.jsonl.gz"), "--store", str(store),
                 "--skip-unknown-queries"]) == 0
    return store


def _first_queries(pool: Path, count: int, out: Path) -> None:
    """The lines of the `count` first query ids (in sorted order, as `--max-queries` takes them) of an exam_pp
    file, written to `out`."""
    with gzip.open(pool, "rt") as handle:
        lines = handle.readlines()
    ids = [re.match(r'\s*\[\s*"([^"]+)"', line).group(1) for line in lines]
    keep = set(sorted(ids)[:count])
    out.write_text("".join(line for line, qid in zip(lines, ids, strict=True) if qid in keep))


def _copy(seeded: Path, tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copy(seeded, target)
    return target


def _grades(store_path: Path) -> dict:
    store = Store.open(store_path)
    try:
        rows = {}
        for grade_set in store.grades.grade_sets():
            if grade_set.method == "self-rating" and grade_set.model == "m":
                rows.update({(grade_set.id, g.query_id, g.passage_id, g.question_id):
                             (g.grade, g.parse_status, g.raw_reply) for g in store.grades.records(grade_set)})
        return rows
    finally:
        store.close()


def _grade(cli, store: Path, server, *extra: str):
    return cli("grade", "--store", store, "--method", "self-rating", "--llm", "openai:m", "--base-url",
               server.base_url, *SUBSET, "--format", "json", *extra)


def test_export_worker_import_equals_in_process_and_is_idempotent(cli, seeded, tmp_path):
    with FakeOpenAI() as server:
        direct = _copy(seeded, tmp_path, "direct.db")
        assert _grade(cli, direct, server).code == 0
        expected = _grades(direct)
        assert expected and all(status != "failed" for _, status, _ in expected.values())

        batched = _copy(seeded, tmp_path, "batched.db")
        export = _grade(cli, batched, server, "--batch-export", tmp_path / "out", "--batch-max-requests", "25")
        assert export.code == 0, export.err
        report = json.loads(export.out)
        assert report["requests"] == len(expected) and len(report["shards"]) == -(-len(expected) // 25)
        assert server.requests == len(expected)  # the export itself asked nothing
        results = []
        for n, shard in enumerate(report["shards"]):
            results.append(tmp_path / f"result-{n}.jsonl")
            run_batch_file(server.base_url, Path(shard), results[-1], style="vllm-0.4" if n == 1 else "openai")
        imported = _grade(cli, batched, server, "--batch-import", *results)
        assert imported.code == 0, imported.err
        assert json.loads(imported.out)["graded_now"] == len(expected)
    assert _grades(batched) == expected

    before = Store.open(batched).dump()
    again = cli("grade", "--store", batched, "--method", "self-rating", "--llm", "openai:m", *SUBSET,
                "--batch-import", *results)
    assert again.code == 0 and "imported before, skipped" in again.err
    assert Store.open(batched).dump() == before
    nothing = cli("grade", "--store", batched, "--method", "self-rating", "--llm", "openai:m", *SUBSET,
                  "--batch-export", tmp_path / "out2", "--format", "json")
    assert json.loads(nothing.out)["requests"] == 0 and not (tmp_path / "out2").exists()


def test_errored_lines_are_failures_and_exported_again(cli, seeded, tmp_path):
    store = _copy(seeded, tmp_path, "s.db")
    with FakeOpenAI() as server:
        report = json.loads(_grade(cli, store, server, "--batch-export", tmp_path / "out").out)
        [shard] = report["shards"]
        lines = Path(shard).read_text().splitlines()
        Path(tmp_path / "half.jsonl").write_text("\n".join(lines[:5]) + "\n")
        Path(tmp_path / "rest.jsonl").write_text("\n".join(lines[5:]) + "\n")
        run_batch_file(server.base_url, tmp_path / "half.jsonl", tmp_path / "bad.jsonl", style="error")
        run_batch_file(server.base_url, tmp_path / "rest.jsonl", tmp_path / "good.jsonl")
        result = _grade(cli, store, server, "--batch-import", tmp_path / "bad.jsonl", tmp_path / "good.jsonl")
        data = json.loads(result.out)
        assert data["failures"] == 5 and data["graded_now"] == len(lines)
        assert data["failure_reasons"] == {"batch error server_error: worker lost": 5}
        again = json.loads(_grade(cli, store, server, "--batch-export", tmp_path / "out").out)
    assert again["requests"] == 5  # only the failed pairs, in the same place (the old shard replaced)
    retried = {json.loads(x)["custom_id"] for x in Path(again["shards"][0]).read_text().splitlines()}
    assert retried == {json.loads(x)["custom_id"] for x in lines[:5]}
    cache = Store.open(store)
    assert cache.caches.cache_count() == len(lines) - 5  # failures never cached


def test_bad_result_file_names_its_line_and_changes_nothing(cli, seeded, tmp_path):
    store = _copy(seeded, tmp_path, "s.db")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"custom_id": "x", "response": null, "error": {"message": "m"}}\n{not json\n')
    before = Store.open(store).dump()
    result = cli("grade", "--store", store, "--method", "self-rating", "--llm", "openai:m", "--batch-import", bad)
    assert result.code == 2 and f"{bad}:2: not JSON" in result.err and "Traceback" not in result.err
    assert Store.open(store).dump() == before
    hf = cli("grade", "--store", store, "--method", "self-rating", "--llm", "hf:x", "--batch-export", tmp_path / "o")
    assert hf.code == 2
