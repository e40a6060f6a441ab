"""Grade sets: one experiment, one identity. Prompt versions, banks and steps never mix; every reader
resolves exactly one grade set or lists the candidates; multi-step methods replay exactly; user templates
make new grade sets; stores of release 0.1.0 migrate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from dl19_fixture import DL19_BANK, dl19_replay_fixture, dl19_replay_store_fixture  # noqa: F401
from fake_openai import FakeOpenAI
from inprocess import run_cli
from proctor.store import Store

V1 = ROOT / "tests" / "data" / "store-v1"


def info(store: Path) -> dict:
    result = run_cli("info", "--store", store, "--format", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)


def grade(store: Path, server, *extra: str, method: str = "self-rating", model: str = "judge"):
    return run_cli("grade", "--store", store, "--method", method, "--llm", f"openai:{model}", "--base-url",
                   server.base_url, "--format", "json", *extra)


def qrels(store: Path, *select: str) -> str:
    result = run_cli("qrels", "--store", store, *select)
    assert result.code == 0, result.err
    return result.out


def _first_columns(tsv: str) -> str:
    """The four columns release 0.1.0 wrote (later releases add `measure` and `labels`)."""
    return "".join("\t".join(line.split("\t")[:4]) + "\n" for line in tsv.splitlines())


# -- a store written by release 0.1.0 ------------------------------------------------------------------------
@pytest.mark.slow
def test_a_store_of_the_previous_release_migrates_and_gives_the_same_results(tmp_path):
    store = tmp_path / "old.db"
    shutil.copy(V1 / "store-v1.sqlite", store)
    first = run_cli("info", "--store", store, "--format", "json")
    assert first.code == 0 and "migrated the store from schema 1 to 2" in first.err
    sets = {s["method"]: s for s in json.loads(first.out)["grade_sets"]}
    assert set(sets) == {"embedding", "thomas", "four-prompts", "self-rating", "criteria"}
    assert sets["criteria"].get("intermediate") and sets["self-rating"]["bank"] == "bank@b55fe6d6ffc8"
    assert sets["thomas"]["bank"] == "-" and sets["self-rating"]["grades"] == 72
    assert "migrated" not in run_cli("info", "--store", store).err  # once only
    for method in ("embedding", "thomas", "four-prompts", "self-rating"):
        board = run_cli("leaderboard", "--store", store, "--method", method, "--measure", "P@3",
                        "--min-grade", "1")
        assert board.code == 0, board.err
        assert _first_columns(board.out) == (V1 / f"lb-{method}-P3.tsv").read_text(), method
        assert {row.split("\t")[4] for row in board.out.splitlines()[1:]} == {"P(rel=1)@3"}
        assert qrels(store, "--method", method) == (V1 / f"qrels-{method}.txt").read_text(), method
    cover = run_cli("leaderboard", "--store", store, "--method", "self-rating", "--metric", "cover",
                    "--min-grade", "3", "--budget", "2")
    assert _first_columns(cover.out) == (V1 / "lb-self-rating-cover.tsv").read_text()
    # the migrated four-prompts set replays (its criteria come from the intermediate set)
    fresh = tmp_path / "fresh.db"
    shutil.copy(V1 / "store-v1.sqlite", fresh)
    db = Store.open(fresh)
    with db.transaction():
        for grade_set in db.grades.grade_sets():
            db.grades.drop_grade_set(grade_set.id)
    db.close()
    replayed = run_cli("grade", "--store", fresh, "--method", "four-prompts", "--llm", f"replay:{store}",
                       "--format", "json")
    assert replayed.code == 0 and json.loads(replayed.out)["failures"] == 0, replayed.err
    assert qrels(fresh, "--method", "four-prompts") == (V1 / "qrels-four-prompts.txt").read_text()


# -- multi-step methods are replayed step by step ----------------------------------------------------------
def _reply(prompt: str) -> str:
    """Deterministic replies that differ by prompt (and are sometimes invalid)."""
    if prompt.startswith("Is the answer"):
        return "Yes" if "nectar" in prompt else "No"
    h = sum(map(ord, prompt)) % 7
    if "generate" in prompt.lower() and "query" in prompt.lower() and "passage" in prompt.lower() and h == 6:
        return "what do bees make"
    return {5: "yes", 6: "No."}.get(h, str(h % 4))


@pytest.mark.parametrize("method,extra", [
    ("four-prompts", ()),
    ("four-prompts", ("--aggregate", "sum")),
    ("four-prompts", ("--aggregate", "naive-bayes")),
    ("four-prompts-cot", ()),
    ("query-gen", ()),
    ("qa", ("--verify", "llm")),
])
def test_multi_step_methods_replay_into_a_fresh_store_exactly(demo_store, tmp_path, method, extra):
    from conftest import seed_demo

    with FakeOpenAI(reply=_reply) as server:
        result = grade(demo_store, server, *extra, method=method)
    assert result.code == 0, result.err
    graded = json.loads(result.out)
    fresh = seed_demo(tmp_path / "fresh")
    replay = run_cli("grade", "--store", fresh, "--method", method, "--llm", f"replay:{demo_store}",
                     "--format", "json", *extra)
    assert replay.code == 0, replay.err
    data = json.loads(replay.out)
    steps = data.get("steps", [data])
    # the replay reproduces the original, failures included (the fake server's "3" is no yes/no reply)
    assert [s["failures"] for s in steps] == [s["failures"] for s in graded.get("steps", [graded])]
    if method == "four-prompts":
        assert all(s["failures"] == 0 for s in steps)
    assert qrels(fresh, "--method", method) == qrels(demo_store, "--method", method)
    assert data["grade_set"]["id"] != graded["grade_set"]["id"]  # a replay is an experiment of its own
    assert data["grade_set"]["params"]["replayed_from"].endswith("#" + graded["grade_set"]["id"])


def test_replay_refuses_an_ambiguous_source_and_takes_a_grade_set_id(demo_store, tmp_path):
    from conftest import seed_demo

    with FakeOpenAI(reply=_reply) as server:
        prompt = json.loads(grade(demo_store, server, method="four-prompts").out)["grade_set"]["id"]
        assert grade(demo_store, server, "--aggregate", "sum", method="four-prompts").code == 0
    fresh = seed_demo(tmp_path / "fresh")
    refused = run_cli("grade", "--store", fresh, "--method", "four-prompts", "--llm", f"replay:{demo_store}")
    assert refused.code == 2 and "several grade sets" in refused.err and prompt in refused.err
    chosen = run_cli("grade", "--store", fresh, "--method", "four-prompts", "--llm",
                     f"replay:{demo_store}@{prompt}")
    assert chosen.code == 0, chosen.err
    assert qrels(fresh) == qrels(demo_store, "--grade-set", prompt)


# -- prompt versions never mix ------------------------------------------------------------------------------
MY_SELF_RATING = """\
name: self-rating
version: my-self-rating
source: our own wording (a test)
template: |-
  Rate from 0 to 5 how well the context answers the question.
  Question: {question}
  Context: {context}
"""


def test_a_user_template_is_a_new_grade_set_and_grades_every_pair_again(demo_store, tmp_path):
    template = tmp_path / "my-self-rating.yaml"
    template.write_text(MY_SELF_RATING)
    with FakeOpenAI() as server:
        base = json.loads(grade(demo_store, server).out)
        assert server.requests == 72
        mine = grade(demo_store, server, "--template", template)
        assert mine.code == 0, mine.err
        assert server.requests == 144 and json.loads(mine.out)["already_graded"] == 0
        again = json.loads(grade(demo_store, server, "--template", template).out)
        assert server.requests == 144 and again["already_graded"] == 72  # same template, same grade set
        template.write_text(MY_SELF_RATING.replace("Rate from", "Rate, from"))
        edited = json.loads(grade(demo_store, server, "--template", template).out)
        assert server.requests == 216 and edited["graded_now"] == 72
    sets = {s["id"]: s for s in info(demo_store)["grade_sets"]}
    ids = [base["grade_set"]["id"], json.loads(mine.out)["grade_set"]["id"], edited["grade_set"]["id"]]
    assert len(set(ids)) == 3 and set(ids) == set(sets)
    assert sets[ids[0]]["prompt_version"] == "QuestionSelfRatedUnanswerablePromptWithChoices"
    assert sets[ids[1]]["prompt_version"].startswith("my-self-rating+")
    assert sets[ids[1]]["prompt_version"] != sets[ids[2]]["prompt_version"]
    plain = run_cli("leaderboard", "--store", demo_store, "--measure", "P@3", "--min-grade", "3")
    assert plain.code == 2 and all(i in plain.err for i in ids)
    boards = [run_cli("leaderboard", "--store", demo_store, "--grade-set", i, "--measure", "P@3",
                      "--min-grade", "3", "--format", "json") for i in ids]
    assert all(b.code == 0 for b in boards)
    assert [json.loads(b.out)["grade_set"] for b in boards] == ids


@pytest.mark.parametrize("text,field", [
    ("name: self-rating\ntemplate: 'Q: {question} C: {context} {colour}'\n", "unknown placeholder {colour}"),
    ("name: self-rating\ntemplate: x {question}\nparser: astrology\n", "parser:"),
    ("name: self-rating\ntemplate: x {question}\nscale: [0, 9]\n", "scale:"),
    ("name: self-rating\ntemplate: x {question}\nscale: [3, 1]\n", "scale:"),
    ("name: self-rating\ntemplate: x {question}\ncolour: blue\n", "colour: unknown field"),
    ("name: horoscope\ntemplate: x {question}\n", "name:"),
    ("name: self-rating\n", "template:"),
    ("name: self-rating\ntemplate: [unclosed\n", "invalid YAML"),
    ("name: self-rating\ntemplate: x {question}\nmax_tokens: -1\n", "max_tokens:"),
    ("name: criteria\ntemplate: x {question}\n", "does not have"),
])
def test_bad_templates_are_refused_with_file_and_field(demo_store, tmp_path, text, field):
    template = tmp_path / "bad.yaml"
    template.write_text(text)
    before = Store.open(demo_store).dump()
    result = run_cli("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:x",
                     "--base-url", "http://127.0.0.1:9/v1", "--template", template)
    assert result.code == 2 and str(template) in result.err and field in result.err, result.err
    assert "Traceback" not in result.err and Store.open(demo_store).dump() == before


# -- banks side by side -------------------------------------------------------------------------------------
def _bank_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_question_ids_never_move_between_banks_or_queries(demo_store, tmp_path):
    bank = tmp_path / "collection" / "bank.jsonl"
    lines = _bank_lines(bank)
    before = Store.open(demo_store).dump()
    changed = [{**lines[0], "items": [{**lines[0]["items"][0], "question_text": "Another text?"}]}]
    other = run_cli("import", "bank", _write(tmp_path / "other.jsonl", changed), "--store", demo_store)
    assert other.code == 2 and "other.jsonl:1:" in other.err and "another text in bank 'bank'" in other.err
    moved = [dict(line) for line in lines]
    moved[1] = {**moved[1], "items": moved[1]["items"] + [dict(moved[0]["items"][0], query_id=moved[1]["query_id"])]}
    moved[0] = {**moved[0], "items": moved[0]["items"][1:]}
    result = run_cli("import", "bank", _write(tmp_path / "bank.jsonl", moved), "--store", demo_store)
    assert result.code == 2 and "bank.jsonl:2:" in result.err and "query 'q1'" in result.err, result.err
    assert Store.open(demo_store).dump() == before


def test_grading_a_new_bank_version_carries_unchanged_grades_over(demo_store, tmp_path):
    bank = tmp_path / "collection" / "bank.jsonl"
    lines = _bank_lines(bank)
    lines[0]["items"].append({"question_id": "q1/new", "question_text": "Do bees sleep at night?"})
    with FakeOpenAI() as server:
        first = json.loads(grade(demo_store, server).out)
        assert run_cli("import", "bank", _write(bank, lines), "--store", demo_store).code == 0
        second = json.loads(grade(demo_store, server).out)
        assert server.requests == 72 + 6  # only the new question, for the 6 pool passages of q1
    assert second["grade_set"]["id"] != first["grade_set"]["id"]
    assert second["by_status"]["carried over"] == 72 and second["graded_now"] == 6
    banks = {s["id"]: s["bank"] for s in info(demo_store)["grade_sets"]}
    assert len(set(banks.values())) == 2 and all(b.startswith("bank@") for b in banks.values())
    old = run_cli("qrels", "--store", demo_store, "--bank", first["grade_set"]["bank"])
    assert old.code == 0 and old.out == qrels(demo_store, "--grade-set", first["grade_set"]["id"])
    latest = run_cli("qrels", "--store", demo_store, "--bank", "bank")  # NAME is the latest version
    assert latest.code == 0 and latest.out == qrels(demo_store, "--grade-set", second["grade_set"]["id"])


def test_a_refused_impact_writes_nothing(demo_store, tmp_path):
    bank = tmp_path / "collection" / "bank.jsonl"
    lines = _bank_lines(bank)
    lines[0]["items"].append({"question_id": "q1/new", "question_text": "Do bees sleep at night?"})
    with FakeOpenAI() as server:
        assert grade(demo_store, server).code == 0
    before = Store.open(demo_store).dump()
    refused = run_cli("bank", "impact", bank, _write(tmp_path / "b.jsonl", lines), "--store", demo_store)
    assert refused.code == 2 and "pass --llm" in refused.err
    assert Store.open(demo_store).dump() == before


# -- the DL19 must-show -------------------------------------------------------------------------------------
@pytest.mark.slow
def test_dl19_leaderboard_is_unchanged_by_a_bank_impact_run(dl19_replay, tmp_path):
    store, bank = dl19_replay, DL19_BANK  # the pool without its grades, the bank, the replayed grades
    board = ("leaderboard", "--store", store, "--measure", "P@20", "--min-grade", "3")
    before = run_cli(*board)
    assert before.code == 0
    v1 = info(store)["grade_sets"][0]["bank"]
    import gzip

    fewer = tmp_path / "fewer.jsonl"
    with gzip.open(bank, "rt") as handle:
        lines = [json.loads(line) for line in handle]
    for line in lines:
        line["questions"] = line["questions"][2:]
    _write(fewer, lines)
    impact = run_cli("bank", "impact", bank, fewer, "--store", store, "--format", "json")
    assert impact.code == 0, impact.err
    assert json.loads(impact.out)["questions"] == {"old": 430, "new": 344}
    after = run_cli(*board)
    assert after.code == 2 and after.out == "" and "several grade sets match" in after.err
    assert after.err.count("self-rating / google/flan-t5-large") == 2
    named = run_cli(*board, "--bank", v1)
    assert named.code == 0 and named.out == before.out


def test_exampp_grades_can_name_the_bank_they_graded(tmp_path):
    from proctor.demo.write import write_collection

    paths = write_collection(tmp_path / "c")
    store = tmp_path / "s.db"
    assert run_cli("import", "bank", paths["bank"], "--store", store, "--name", "demo").code == 0
    wrong = run_cli("import", "exampp", paths["exampp"], "--store", store, "--bank", "nope")
    assert wrong.code == 2 and "--bank nope" in wrong.err
    ok = run_cli("import", "exampp", paths["exampp"], "--store", store, "--bank", "demo")
    assert ok.code == 0, ok.err
    [grade_set] = info(store)["grade_sets"]
    assert grade_set["bank"].startswith("demo@") and grade_set["params"] == {"source": "exampp"}
    assert run_cli("qrels", "--store", store, "--bank", "demo").code == 0
    other = tmp_path / "other.db"
    assert run_cli("import", "queries", paths["queries"], "--store", other).code == 0
    lines = _bank_lines(paths["bank"])[:1]
    assert run_cli("import", "bank", _write(tmp_path / "one.jsonl", lines), "--store", other, "--name", "one"
                   ).code == 0
    missing = run_cli("import", "exampp", paths["exampp"], "--store", other, "--bank", "one")
    assert missing.code == 2 and "is graded but not in bank one" in missing.err
    assert not Store.open(other).grades.grade_sets()


def test_bank_is_refused_for_methods_that_grade_the_query_and_read_only_old_stores_say_why(demo_store, tmp_path):
    refused = run_cli("grade", "--store", demo_store, "--method", "thomas", "--llm", "openai:x", "--bank", "bank")
    assert refused.code == 2 and "grades the query itself" in refused.err
    old = tmp_path / "ro" / "old.db"
    old.parent.mkdir()
    shutil.copy(V1 / "store-v1.sqlite", old)
    old.chmod(0o444)
    old.parent.chmod(0o555)
    try:
        result = run_cli("info", "--store", old)
    finally:
        old.parent.chmod(0o755)
    import os

    if os.geteuid() != 0:  # root writes read-only files anyway
        assert result.code == 2 and "cannot be written" in result.err and "Traceback" not in result.err
