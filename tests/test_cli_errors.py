"""Bad input, as a user meets it: one message naming file and line, exit status 2, no traceback, and the
store unchanged (or not created at all)."""

from __future__ import annotations

import gzip

import pytest

from proctor.demo.write import write_collection
from proctor.store import Store


def _bad_files(tmp_path):
    big = gzip.compress(b"".join(b"q1 Q0 d%d 1 1.0 r\n" % i for i in range(20000)))
    cases = {
        "run-columns": ("runs", "r.run", b"q1 Q0 d101 1 2.0 x\nq1 Q0 d102 2 x\n", ":2:"),
        "qrels-relevance": ("qrels", "q.qrels", b"q1 0 d101 1\nq1 0 d102 high\n", ":2:"),
        "corpus-jsonl": ("corpus", "c.jsonl", b'{"id": "a", "text": "x"}\n{"id": "b", "text": \n', ":2:"),
        "queries-json": ("queries", "q.json", b'{\n"q1": "a",\n"q2" "b"\n}\n', ":3:"),
        "truncated-gzip": ("runs", "r.run.gz", big[: len(big) // 3], ".gz:"),
        "undecodable": ("queries", "q.tsv", b"q1\tfine\nq2\tbad \xfe\n", ":2:"),
        "empty": ("qrels", "empty.qrels", b"", ":1:"),
        "unknown-query": ("qrels", "u.qrels", b"q1 0 d101 1\nnope 0 d101 1\n", ":2:"),
        "exampp-shape": ("exampp", "e.jsonl", b'["q1", [{"paragraph_id": "d1", "text": "t"}]]\n{"x": 1}\n', ":2:"),
        "bank-json": ("bank", "b.jsonl", b'{"query_id": "q1", "items": []}\n[1, 2\n', ":2:"),
    }
    for key, (kind, name, content, where) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        cases[key] = (kind, path, where)
    return cases


@pytest.fixture
def seeded_store(tmp_path, cli):
    paths = write_collection(tmp_path / "collection")
    store = tmp_path / "s.db"
    assert cli("import", "queries", paths["queries"], "--store", store).code == 0
    return store


@pytest.mark.parametrize("case", ["run-columns", "qrels-relevance", "corpus-jsonl", "queries-json",
                                  "truncated-gzip", "undecodable", "empty", "unknown-query", "exampp-shape",
                                  "bank-json"])
def test_bad_input_is_one_clear_message(tmp_path, seeded_store, cli, case):
    kind, path, where = _bad_files(tmp_path)[case]
    before = Store.open(seeded_store).dump()
    result = cli("import", kind, path, "--store", seeded_store)
    assert result.code == 2
    assert "Traceback" not in result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("proctor: error: ") and str(path) in lines[0] and where in lines[0]
    assert Store.open(seeded_store).dump() == before


def test_missing_file_and_no_store_left_behind(tmp_path, cli):
    store = tmp_path / "new.db"
    result = cli("import", "runs", tmp_path / "absent.run", "--store", store)
    assert result.code == 2 and "absent.run: no such file" in result.err and "Traceback" not in result.err
    assert not store.exists() and not (tmp_path / "new.db-wal").exists()


def test_missing_store_for_reading(tmp_path, cli):
    result = cli("leaderboard", "--store", tmp_path / "none.db", "--measure", "P@20", "--min-grade", "3")
    assert result.code == 2 and "no such store" in result.err
    assert not (tmp_path / "none.db").exists()


def test_unknown_measure_and_ambiguous_use(tmp_path, seeded_store, cli):
    result = cli("leaderboard", "--store", seeded_store, "--measure", "bpreff", "--min-grade", "3")
    assert result.code == 2 and "unknown measure 'bpreff'; did you mean bpref" in result.err
    result = cli("qrels", "--store", seeded_store)
    assert result.code == 2 and "holds no grades" in result.err
