"""A large exam_pp file is read in a forked child while the parent writes the store. The
store must hold exactly what an in-process import writes; an error in the child stops the import at the same
line with the same message and leaves the store as it was; a reader closed early leaves no child behind."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from conftest import opened_store
from proctor.errors import InputError
from proctor.io import background
from proctor.io.background import in_background
from proctor.store import Store

pytestmark = pytest.mark.skipif(not background.background_available(), reason="no fork here")


def _produce(n: int, fail_at: int | None = None, error: type = InputError):
    def produce():
        for i in range(n):
            if i == fail_at:
                if error is InputError:
                    raise InputError("f.jsonl", i + 1, f"bad line {i + 1}")
                raise error(f"broken at {i}")
            yield i, os.getpid()
    return produce


def test_items_arrive_in_order_from_a_child_process():
    items = list(in_background(_produce(50), size=background.MIN_BYTES))
    assert [i for i, _ in items] == list(range(50))
    assert {pid for _, pid in items} != {os.getpid()}  # computed elsewhere
    assert list(in_background(_produce(3), size=0)) == [(i, os.getpid()) for i in range(3)]  # small: in-process


def test_an_input_error_in_the_child_is_raised_in_the_parent_after_the_earlier_items():
    got = []
    with pytest.raises(InputError) as err:
        for item in in_background(_produce(10, fail_at=7), size=background.MIN_BYTES):
            got.append(item[0])
    assert got == list(range(7))
    assert (err.value.path, err.value.line, err.value.message) == ("f.jsonl", 8, "bad line 8")


def test_another_error_in_the_child_is_reported_with_its_traceback():
    with pytest.raises(RuntimeError, match="(?s)background reader failed.*ZeroDivisionError: broken at 2"):
        list(in_background(_produce(5, fail_at=2, error=ZeroDivisionError), size=background.MIN_BYTES))


def test_closing_the_reader_early_leaves_no_child():
    reader = in_background(_produce(10_000), size=background.MIN_BYTES)
    _, child = next(reader)
    reader.close()
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(child, 0)


def _exampp_line(q: int, passages: int) -> str:
    qid = f"q{q}"
    paras = [{
        "paragraph_id": f"p{q}-{p}", "text": f"passage {p} of {qid} " + "word " * 60,
        "paragraph_data": {"judgments": [{"query": qid, "relevance": p % 3}],
                           "rankings": [{"method": f"run{r}", "queryId": qid, "rank": p + 1, "score": 1.0 / (p + 1)}
                                        for r in range(3)]},
        "exam_grades": [{"llm": "m", "prompt_info": {"is_self_rated": True, "prompt_class": "P"},
                         "self_ratings": [{"question_id": f"{qid}/{k}", "self_rating": (p + k) % 6} for k in range(5)],
                         "answers": [[f"{qid}/{k}", "ans"] for k in range(5)]}]}
        for p in range(passages)]
    return json.dumps([qid, paras])


def _import(cli, monkeypatch, path: Path, store: Path, background_on: bool):
    """`import exampp` in-process (a reader in the background is a child forked by this process)."""
    monkeypatch.setenv("PROCTOR_READ_IN_BACKGROUND", "1" if background_on else "0")
    return cli("import", "exampp", path, "--store", store)


def _content(store: Path) -> dict[str, list]:
    """What the store holds, without the write times (they differ between two imports)."""
    opened = Store.open(store, read_only=True)
    try:
        dump = opened.dump()
    finally:
        opened.close()
    stamp = re.compile(r"^\d{4}-\d\d-\d\dT")
    return {table: [tuple(v for v in row if not (isinstance(v, str) and stamp.match(v))) for row in rows]
            for table, rows in dump.items()}


def test_a_large_import_writes_the_same_store_as_an_in_process_one(cli, monkeypatch, tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(_exampp_line(q, 120) for q in range(30)) + "\n")
    assert path.stat().st_size >= background.MIN_BYTES
    stores = []
    for on in (True, False):
        store = tmp_path / f"s{on}.db"
        done = _import(cli, monkeypatch, path, store, on)
        assert done.code == 0, done.err
        assert "18000 grades" in done.err
        stores.append(_content(store))
    assert stores[0] == stores[1]
    assert len(stores[0]["grades"]) == 30 * 120 * 5


def test_an_error_late_in_a_large_file_names_its_line_and_writes_nothing(cli, monkeypatch, tmp_path):
    lines = [_exampp_line(q, 120) for q in range(30)]
    lines[27] = lines[27].replace('"self_rating": 5', '"self_rating": 9', 1)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    store = tmp_path / "s.db"
    started = time.monotonic()
    done = _import(cli, monkeypatch, path, store, True)
    assert done.code == 2
    assert f"{path}:28: paragraph" in done.err and "9 is not a grade 0..5" in done.err
    assert "Traceback" not in done.err
    assert time.monotonic() - started < 60
    if store.exists():
        with opened_store(store) as opened:
            counts = opened.counts()
        assert counts["grades"] == 0 and counts["passages"] == 0


def _read_in_a_daemon(queue) -> None:
    queue.put([pid for _, pid in in_background(_produce(3), size=background.MIN_BYTES)])


def test_a_daemonic_worker_reads_in_process():
    """A pool worker may not have children: there the reader runs in the worker itself."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    worker = context.Process(target=_read_in_a_daemon, args=(queue,), daemon=True)
    worker.start()
    pids = queue.get(timeout=60)
    worker.join(timeout=60)
    assert worker.exitcode == 0 and pids == [worker.pid] * 3
