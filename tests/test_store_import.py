"""Imports are idempotent and atomic; unknown query ids are refused or skipped on request."""

from __future__ import annotations

import json

import pytest

from proctor.demo.write import write_collection
from proctor.errors import InputError
from proctor.importing import ImportOptions, import_files
from proctor.store import Store


@pytest.fixture
def collection(tmp_path):
    return write_collection(tmp_path / "collection")


def _import_all(store: Store, paths) -> None:
    import_files(store, "queries", [paths["queries"]])
    import_files(store, "corpus", [paths["corpus"]])
    import_files(store, "runs", sorted(paths["runs"].iterdir()))
    import_files(store, "qrels", [paths["qrels"]])
    import_files(store, "bank", [paths["bank"]])
    import_files(store, "exampp", [paths["exampp"]])


def test_importing_twice_changes_nothing(tmp_path, collection):
    store = Store.create_or_open(tmp_path / "s.db")
    _import_all(store, collection)
    first = store.dump()
    assert first["grades"] and first["rankings"] and first["questions"]
    _import_all(store, collection)
    assert store.dump() == first
    reports = import_files(store, "exampp", [collection["exampp"]])
    assert reports[0].unchanged


def test_failed_import_changes_nothing(tmp_path, collection):
    store = Store.create_or_open(tmp_path / "s.db")
    _import_all(store, collection)
    before = store.dump()
    good = collection["runs"] / "strong.run"
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d101 1 2.0 newrun\nq1 Q0 d102 2 oops newrun\n")
    with pytest.raises(InputError):
        import_files(store, "runs", [good, bad])
    assert store.dump() == before


def test_unknown_query_ids_are_refused_or_skipped(tmp_path, collection):
    store = Store.create_or_open(tmp_path / "s.db")
    import_files(store, "queries", [collection["queries"]])
    run = tmp_path / "extra.run"
    run.write_text("q1 Q0 d101 1 2.0 extra\nq99 Q0 d101 1 2.0 extra\n")
    with pytest.raises(InputError, match=r"extra\.run:2: unknown query id 'q99'"):
        import_files(store, "runs", [run])
    report = import_files(store, "runs", [run], ImportOptions(skip_unknown_queries=True))[0]
    assert report.skipped_unknown_queries == 1 and report.counts["rankings"] == 1


def test_bank_reimport_of_an_edited_bank_makes_a_new_version(tmp_path, collection):
    store = Store.create_or_open(tmp_path / "s.db")
    import_files(store, "bank", [collection["bank"]])
    v1 = store.banks.versions()[0]["version"]
    lines = [json.loads(x) for x in collection["bank"].read_text().splitlines()]
    lines[0]["items"] = lines[0]["items"][:2]
    collection["bank"].write_text("".join(json.dumps(x) + "\n" for x in lines))
    import_files(store, "bank", [collection["bank"]])
    banks = store.banks.versions()
    # the old version stays beside the new one; the new one is the latest
    assert [(b["bank"], b["version"], b["questions"], b["latest"]) for b in banks] == [
        ("bank", v1, 12, False), ("bank", banks[1]["version"], 11, True)]
    assert banks[1]["version"] != v1 and store.banks.bank_version("bank") == ("bank", banks[1]["version"])
    assert store.banks.bank_version(f"bank@{v1}") == ("bank", v1)
    # importing either file again changes nothing
    before = store.dump()
    import_files(store, "bank", [collection["bank"]])
    assert store.dump()["questions"] == before["questions"] and store.dump()["banks"] == before["banks"]


def test_exampp_no_grades(tmp_path, collection):
    store = Store.create_or_open(tmp_path / "s.db")
    import_files(store, "exampp", [collection["exampp"]], ImportOptions(with_grades=False))
    counts = store.counts()
    assert counts["grades"] == 0 and counts["passages"] == 24
