"""An import logs its file's SHA-256, computed in a thread beside the reading (for a large exam_pp file, started
once its reader has forked): the digest hashlib gives the whole file, for every kind and either way of reading."""

from __future__ import annotations

import hashlib
import json

import pytest

from conftest import raw_rows
from proctor.importing import import_files
from proctor.io.background import MIN_BYTES
from proctor.store import Store


def _exampp(path, lines: int) -> None:
    with open(path, "w") as f:
        for q in range(lines):
            paragraphs = [{"paragraph_id": f"q{q}p{p}", "text": "x" * 400, "paragraph_data": {"judgments": [],
                           "rankings": [{"method": "run", "paragraphId": f"q{q}p{p}", "queryId": f"q{q}",
                                         "rank": p + 1, "score": float(-p)}]},
                           "exam_grades": [{"llm": "m", "self_ratings": [{"question_id": f"q{q}/a", "self_rating": 4}],
                                            "answers": [[f"q{q}/a", "yes"]], "prompt_info": {"is_self_rated": True}}]}
                          for p in range(50)]
            f.write(json.dumps([f"q{q}", paragraphs]) + "\n")


@pytest.mark.parametrize("lines", [2, 60])
def test_the_import_log_holds_the_files_digest(tmp_path, lines):
    source = tmp_path / "pool.jsonl"
    _exampp(source, lines)
    assert (source.stat().st_size >= MIN_BYTES) == (lines == 60)  # read in a forked child, or in-process
    store = Store.create_or_open(tmp_path / "s.db")
    import_files(store, "exampp", [source])
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"q{q}\tquery {q}\n" for q in range(lines)))
    import_files(store, "queries", [queries])
    expected = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (source, queries)]
    assert [entry["sha256"] for entry in store.imports.import_log()] == expected
    assert sorted(row[0] for row in raw_rows(store.path, "SELECT sha256 FROM imports")) == sorted(expected)


def test_a_folders_digest_takes_any_file_name(tmp_path):
    """A text-dir folder holding a file whose name is no UTF-8 (a hidden cache the reader ignores): the import
    logs the digest of every name and byte, never an empty one."""
    folder = tmp_path / "answers"
    (folder / "sys").mkdir(parents=True)
    (folder / "sys" / "q1.txt").write_text("An answer of one sentence.")
    (folder / ".cache").mkdir()
    odd = bytes(folder / ".cache") + b"/\xff.bin"
    with open(odd, "wb") as f:
        f.write(b"x")
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tquery one\n")
    store = Store.create_or_open(tmp_path / "s.db")
    import_files(store, "queries", [queries])
    import_files(store, "responses", [folder])
    digest = hashlib.sha256()
    for file in sorted(f for f in folder.rglob("*") if f.is_file()):
        digest.update(str(file.relative_to(folder)).encode("utf-8", "surrogateescape") + b"\0" + file.read_bytes())
    assert store.imports.import_log()[-1]["sha256"] == digest.hexdigest()
