"""Resolving one grade set: a grade set without a single grade never blocks resolution (it is listed as empty),
`--bank NAME` means the bank's latest version, and the review app takes grade-set id prefixes as every command
does, with the same errors."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from conftest import seed_demo
from fake_openai import FakeOpenAI
from proctor.gradesets.resolve import resolve_grade_set
from proctor.store import Store

LEADERBOARD = ("leaderboard", "--measure", "P@3", "--min-grade", "1", "--format", "json")


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The demo store with one self-rating grade set of model `good`."""
    from proctor.cli import main

    store = seed_demo(tmp_path_factory.mktemp("graded"))
    with FakeOpenAI(models=["good"]) as server:
        assert main(["grade", "--store", str(store), "--method", "self-rating", "--llm", "openai:good",
                     "--base-url", server.base_url]) == 0
    return store


FAILING = [  # (model, base URL or None for the test server, what the user is told)
    ("nosuch", None, "is not served there"),
    ("dead", "DEAD", "cannot reach the server"),
    ("ftp", "ftp://127.0.0.1/v1", "not an http:// or https:// URL"),
]


@pytest.mark.parametrize("model,url,said", FAILING, ids=[c[0] for c in FAILING])
def test_a_grade_that_fails_before_its_first_grade_never_blocks_resolution(cli, graded, tmp_path, model, url, said):
    store = tmp_path / "s.db"
    store.write_bytes(graded.read_bytes())
    with FakeOpenAI(models=["good"]) as server:
        base = {None: server.base_url, "DEAD": _dead_url()}.get(url, url)
        failed = cli("grade", "--store", store, "--method", "self-rating", "--llm", f"openai:{model}", "--base-url",
                     base)
    assert failed.code == 2 and said in failed.err, failed.err
    for args in (("--method", "self-rating"), ()):
        result = cli(*LEADERBOARD, *args, "--store", store)
        assert result.code == 0, result.err
        assert json.loads(result.out)["model"] == "good"
    listing = cli("grade-sets", "list", "--store", store, "--format", "json")
    empty = [s for s in json.loads(listing.out) if s.get("empty")]
    assert empty == []  # refused before anything was sent: no grade set was left behind at all


def _empty_grade_set(store, model: str) -> None:
    """A grade set without a single grade, as a `grade` interrupted before its first reply leaves it."""
    import dataclasses

    db = Store.open(store)
    try:
        good = next(s for s in db.grades.grade_sets() if s.model == "good")
        with db.transaction():
            db.grades.ensure_grade_set(dataclasses.replace(good, model=model, grades=0, failures=0, created=None))
    finally:
        db.close()


def test_an_empty_grade_set_alone_is_no_match_and_is_listed(cli, graded, tmp_path):
    store = tmp_path / "s.db"
    store.write_bytes(graded.read_bytes())
    _empty_grade_set(store, "gone")
    info = cli("info", "--store", store)
    assert any("self-rating / gone" in line and line.endswith("(empty)") for line in info.out.splitlines())
    result = cli(*LEADERBOARD, "--model", "gone", "--store", store)
    assert result.code == 2 and "no grade set matches --model gone" in result.err
    assert "left out, without a single grade" in result.err and "self-rating / gone" in result.err
    db = Store.open(store)
    try:
        empty = next(s for s in db.grades.grade_sets() if s.model == "gone")
        assert resolve_grade_set(db, empty.id[:6]) == empty  # named by id, it is what was asked for
        assert "(empty)" in empty.describe()
    finally:
        db.close()


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory):
    """The demo store whose bank has two versions, each graded (self-ratings of the test server: no model to
    load)."""
    from proctor.cli import main

    root = tmp_path_factory.mktemp("versions")
    store = seed_demo(root)
    with FakeOpenAI() as server:
        grade = ["grade", "--store", str(store), "--method", "self-rating", "--llm", "openai:judge", "--base-url",
                 server.base_url]
        assert main(grade) == 0
        bank = root / "collection" / "bank.jsonl"
        lines = [json.loads(line) for line in bank.read_text().splitlines()]
        lines[0]["items"].append({"question_id": "q1/extra", "question_text": "What do bees make?"})
        bank.write_text("".join(json.dumps(line) + "\n" for line in lines))
        assert main(["import", "bank", str(bank), "--store", str(store)]) == 0
        assert main(grade) == 0
    db = Store.open(store)
    try:
        versions = [b["version"] for b in db.banks.versions()]
    finally:
        db.close()
    return store, versions


@pytest.mark.parametrize("bank,version", [("bank", 1), ("bank@OLD", 0), ("bank@NEW", 1)])
def test_bank_name_means_its_latest_version(cli, two_versions, bank, version):
    store, versions = two_versions
    bank = bank.replace("OLD", versions[0]).replace("NEW", versions[1])
    result = cli(*LEADERBOARD, "--bank", bank, "--store", store)
    assert result.code == 0, result.err
    assert json.loads(result.out)["bank"] == f"bank@{versions[version]}"


def test_without_bank_two_versions_are_still_two_grade_sets(cli, two_versions):
    store, _ = two_versions
    result = cli(*LEADERBOARD, "--store", store)
    assert result.code == 2 and "several grade sets match" in result.err


def _get(app, path: str) -> tuple[int, str]:
    """GET `path` from an ASGI app in this process."""
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    target, _, query = path.partition("?")
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": target, "raw_path": target.encode(), "query_string": query.encode(), "root_path": "",
             "headers": [(b"host", b"127.0.0.1:8765")], "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8765),
             "app": app}
    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body").decode()


@pytest.mark.parametrize("prefix,status,said", [
    ("FULL", 200, "self-rating"), ("PREFIX", 200, "self-rating"), ("zzz", 400, "no grade set matches --grade-set zzz"),
    ("", 400, "several grade sets match"),
])
def test_the_review_app_resolves_grade_set_prefixes_as_the_cli_does(cli, graded, tmp_path, prefix, status, said):
    from proctor.review.app import create_app

    store = tmp_path / "s.db"
    store.write_bytes(graded.read_bytes())
    db = Store.open(store)
    good = next(s for s in db.grades.grade_sets() if s.model == "good")
    db.close()
    if prefix == "":  # grade sets whose ids share their first character with the graded one
        prefix = good.id[0]
        for model in (f"m{i}" for i in range(200)):
            _empty_grade_set(store, model)
            db = Store.open(store)
            if sum(s.id.startswith(prefix) for s in db.grades.grade_sets()) > 1:
                db.close()
                break
            db.close()
    wanted = {"FULL": good.id, "PREFIX": good.id[:3]}.get(prefix, prefix)
    cli_result = cli(*LEADERBOARD, "--grade-set", wanted, "--store", store)
    app = create_app(store)
    try:
        code, body = _get(app, f"/cell?gs={wanted}&q=q1&p=d101&k=")
    finally:
        app.state.review.store.close()
    assert code == status and (said in body or said.replace(" ", "&#32;") in body), body[:2000]
    assert cli_result.code == (0 if status == 200 else 2) and (status == 200 or said in cli_result.err)


def test_agreement_leaves_empty_grade_sets_out_of_its_columns(cli, graded, tmp_path):
    store = tmp_path / "s.db"
    store.write_bytes(graded.read_bytes())
    _empty_grade_set(store, "gone")
    result = cli("agreement", "--store", store, "--judged-relevant", "1", "--format", "json")
    assert result.code == 0, result.err
    assert [s["model"] for s in json.loads(result.out)["grade_sets"]] == ["good"]
