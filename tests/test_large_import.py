"""The exam_pp reader keeps one line's keys (not the file's) yet still refuses a conflicting
repeat on another line of the same query or of a facet of it; the import holds the store under a rollback
journal (no WAL as large as the store) and stays all-or-nothing."""

from __future__ import annotations

import json

import pytest

from proctor.errors import InputError
from proctor.io.exampp import _shared_lines, read_exampp


def _line(qid, pid="d1", rating=1, rank=1, relevance=1, query=None, text="bees make honey"):
    query = query or qid
    return json.dumps([qid, [{
        "paragraph_id": pid, "text": text,
        "paragraph_data": {"judgments": [{"query": query, "relevance": relevance}],
                           "rankings": [{"method": "r", "queryId": query, "rank": rank, "score": 1.0}]},
        "exam_grades": [{"llm": "m", "prompt_info": {"is_self_rated": True, "prompt_class": "P"},
                         "self_ratings": [{"question_id": f"{qid}/a", "self_rating": rating}],
                         "answers": [[f"{qid}/a", "x"]]}]}]])


def _write(tmp_path, *lines):
    path = tmp_path / "e.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_lines_of_distinct_queries_share_nothing_but_passage_texts(tmp_path):
    path = _write(tmp_path, _line("q1"), _line("q2", rating=3), _line("q10", rank=5), "", _line(7, pid="d2"))
    assert _shared_lines(path) == set()
    queries = list(read_exampp(path))
    assert [q.query_id for q in queries] == ["q1", "q2", "q10", "7"]
    assert [g.grade for q in queries for g in q.grades] == [1, 3, 1, 1]


def test_a_passage_text_is_checked_across_lines(tmp_path):
    path = _write(tmp_path, _line("q1"), _line("q2", text="other"))
    with pytest.raises(InputError, match="given again with another text \\(first on line 1\\)") as err:
        list(read_exampp(path))
    assert err.value.line == 2


@pytest.mark.parametrize("second,message", [
    (_line("q1", rating=4), "graded twice differently .* \\(first on line 1\\)"),
    (_line("q1", pid="d1", rank=3), "ranks passage 'd1' twice for query 'q1'"),
    (_line("q1", relevance=2), "judged 1 and 2 for query 'q1' \\(first on line 1\\)"),
    (_line("q1/f", relevance=2), "judged 1 and 2 for query 'q1/f' \\(first on line 1\\)"),  # a facet's own line
])
def test_a_repeated_query_is_checked_against_its_earlier_lines(tmp_path, second, message):
    first = _line("q1", query="q1/f") if "q1/f" in second else _line("q1")
    path = _write(tmp_path, first, _line("q2"), second)
    assert _shared_lines(path) == {1, 3}
    with pytest.raises(InputError, match=message) as err:
        list(read_exampp(path))
    assert err.value.line == 3


def test_identical_repeats_on_other_lines_are_merged(tmp_path):
    path = _write(tmp_path, _line("q1"), _line("q2"), _line("q1"))
    queries = list(read_exampp(path))
    assert [len(q.grades) for q in queries] == [1, 1, 0] and [len(q.rankings) for q in queries] == [1, 1, 0]


def test_a_line_not_starting_with_an_id_shares_everything(tmp_path):
    path = _write(tmp_path, _line("q1"), ' [ {"a": 1}, []]')
    assert _shared_lines(path) is None


def _pool(path, queries=30, passages=20, questions=10):
    lines = []
    for q in range(queries):
        qid = f"q{q}"
        paragraphs = [{"paragraph_id": f"d{q}-{p}", "text": f"passage {q} {p} " * 20, "paragraph_data": {
            "judgments": [{"query": qid, "relevance": p % 3}],
            "rankings": [{"method": "r", "queryId": qid, "rank": p + 1, "score": -p}]},
            "exam_grades": [{"llm": "m", "prompt_info": {"is_self_rated": True, "prompt_class": "P"},
                             "self_ratings": [{"question_id": f"{qid}/{i}", "self_rating": (p + i) % 6}
                                              for i in range(questions)], "answers": []}]} for p in range(passages)]
        lines.append(json.dumps([qid, paragraphs]))
    path.write_text("\n".join(lines) + "\n")
    return path


CRASH = """
import os, sys
import proctor.store as store_module
from proctor.importing import import_files
from proctor.store import Store
from proctor.store.bulk import GradeImport
store_module.BULK_CACHE_KB = 16  # spill changed pages into the store file early
calls = []
def killing(real):
    def write(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 25:
            os._exit(3)  # killed mid-import (the kept results' triggers held): no rollback, no cleanup
        return real(self, *args, **kwargs)
    return write
GradeImport.write, GradeImport.write_blocks = killing(GradeImport.write), killing(GradeImport.write_blocks)
import_files(Store.create_or_open(sys.argv[1]), "exampp", [sys.argv[2]])
"""


def test_an_import_killed_midway_leaves_the_store_as_it_was(tmp_path):
    import os
    import subprocess
    import sys

    from proctor.importing import import_files
    from proctor.store import Store

    db = tmp_path / "s.db"
    first = tmp_path / "first.jsonl"
    first.write_text("\n".join(_line(f"q{q}") for q in range(30)) + "\n")
    store = Store.create_or_open(db)
    import_files(store, "exampp", [first])
    before, size = store.dump(), db.stat().st_size
    triggers = store.schema.triggers()
    assert len([t for t in triggers if " ON grades " in t[1]]) == 9
    store.close()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    result = subprocess.run([sys.executable, "-c", CRASH, str(db), str(_pool(tmp_path / "pool.jsonl"))], env=env)
    assert result.returncode == 3
    assert (tmp_path / "s.db-journal").exists() and not (tmp_path / "s.db-wal").exists()  # a hot rollback journal
    assert db.stat().st_size > size  # the killed import had written pages into the store file
    store = Store.open(db)
    assert store.dump() == before and store.schema.journal_mode() == "wal"
    assert store.schema.triggers() == triggers  # the rollback brought back the triggers the import had dropped


def test_an_import_beside_another_connection_keeps_the_wal(tmp_path):
    from conftest import RawConnection
    from proctor.importing import import_files
    from proctor.store import Store

    db = tmp_path / "s.db"
    store = Store.create_or_open(db)
    other = RawConnection(db)  # another program's connection: what it sees is the point
    assert other.rows("SELECT COUNT(*) FROM grades") == [(0,)]
    import_files(store, "exampp", [_pool(tmp_path / "pool.jsonl", queries=3)])
    assert other.rows("SELECT COUNT(*) FROM grades") == [(3 * 20 * 10,)]
    assert store.schema.journal_mode() == "wal"
    other.close()
    import_files(store, "exampp", [_pool(tmp_path / "pool2.jsonl", queries=3, questions=12)])  # a rollback journal
    assert store.schema.journal_mode() == "wal"
    assert store.counts()["grades"] == 3 * 20 * 12 and not (tmp_path / "s.db-journal").exists()


def test_the_line_heads_of_a_plain_and_a_gzip_file_are_those_the_full_reading_sees(tmp_path):
    import gzip

    from proctor.io.textfile import line_heads, read_lines

    body = b'\xef\xbb\xbf["a", []]\n   \n\r\n' + b" " * 2000 + b'["b", []]\n["\xc3\xa9", []]'
    plain, packed = tmp_path / "e.jsonl", tmp_path / "e.jsonl.gz"
    plain.write_bytes(body)
    packed.write_bytes(gzip.compress(body))
    heads = [(1, b'["a", []]\n'), (2, None), (3, None), (4, b" " * 1024), (5, '["é", []]'.encode())]
    assert list(line_heads(plain)) == list(line_heads(packed)) == heads  # a BOM dropped, blank lines None
    assert [n for n, text in read_lines(plain) if text.strip()] == [n for n, head in heads if head]
    assert _shared_lines(plain) is None  # line 4 does not start like ["id", within its head: share everything


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 22])
def test_line_heads_are_the_same_whatever_the_chunks(chunk):
    import io
    import random

    from proctor.io.textfile import _heads

    rnd = random.Random(chunk)
    lines = [bytes(rnd.choice(b"ab \t") for _ in range(rnd.randint(0, 40))) + b"\n" for _ in range(200)] + [b"tail"]
    got = list(_heads(io.BytesIO(b"".join(lines)), 16, chunk))
    assert got == [(line[:16], len(line)) for line in lines]


def test_a_passage_an_earlier_line_gave_is_marked_and_stored_once_with_its_text(tmp_path):
    from proctor.importing import import_files
    from proctor.options.inputs import ImportOptions
    from proctor.store import Store

    path = _write(tmp_path, _line("q1"), _line("q2"), _line("q3", text=None), _line("q4", pid="d9"))
    assert [q.given_before for q in read_exampp(path)] == [[], ["d1"], ["d1"], []]
    store = Store.create_or_open(tmp_path / "s.db")
    [report] = import_files(store, "exampp", [path])
    assert report.counts["passages"] == 2 and report.counts["query-passage pairs"] == 4
    assert store.corpus.passage_texts() == {"d1": "bees make honey", "d9": "bees make honey"}
    # a first line that was skipped (its query unknown) wrote nothing: the repeat on a later line is written
    other = Store.create_or_open(tmp_path / "t.db")
    queries = tmp_path / "q.tsv"
    queries.write_text("q2\twhat do bees make\n")
    import_files(other, "queries", [queries])
    import_files(other, "exampp", [path], ImportOptions(skip_unknown_queries=True))
    assert other.corpus.passage_texts() == {"d1": "bees make honey"}
