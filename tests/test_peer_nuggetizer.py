"""AutoNuggetizer against nuggetizer's own code (PyPI `nuggetizer`, run with a stub in place of its LLM
client): nugget creation across windows keeps the reply's list as it is (our de-duplication an option, recorded
in the bank's creator info); the assigner gets the nuggets in the bank's order, 10 per prompt; nuggetizer's
`calculate_nugget_scores` on the same assignments gives our scores; a nuggetizer record without `qid` is
refused by name."""

from __future__ import annotations

import ast
import importlib.util
import json
from collections import Counter

import pytest

from fake_openai import FakeOpenAI

# found, not imported, at collection (every xdist worker collects this file; nuggetizer loads the openai SDK):
# each test imports what it uses of it
pytestmark = pytest.mark.skipif(importlib.util.find_spec("nuggetizer") is None, reason="needs nuggetizer")


class StubLLM:
    """Stands in for nuggetizer's LLMHandler: records the messages, answers with `reply`."""

    def __init__(self, reply) -> None:
        self.reply, self.sent = reply, []

    def run(self, messages, temperature=0):
        self.sent.append(messages)
        return self.reply(messages[-1]["content"]), 0


def nuggetizer_with(reply) -> tuple[object, StubLLM]:
    """nuggetizer's own Nuggetizer, its three LLM handlers replaced by one stub."""
    from nuggetizer.models.nuggetizer import Nuggetizer

    stub = StubLLM(reply)
    nz = Nuggetizer(model="stub", api_keys="none")
    nz.creator_llm = nz.scorer_llm = nz.assigner_llm = stub
    return nz, stub


def list_after(prompt: str, key: str) -> list[str]:
    return ast.literal_eval(prompt.split(key)[1].split("\n")[0])


def creator_reply(prompt: str) -> str:
    """The creator: window 2 repeats a nugget the list already holds; window 3 returns a list without repeats.
    The scorer: every other nugget vital."""
    if prompt.startswith("Based on the query, label each of the"):
        return repr(["vital" if i % 2 == 0 else "okay" for i in range(len(list_after(prompt, "Nugget List: ")))])
    initial = list_after(prompt, "Initial Nugget List: ")
    context = prompt.split("Context:\n")[1].split("\nSearch Query:")[0]
    new = [f"Fact of {line.split('] ')[1].split()[0]}" for line in context.splitlines()]
    if not initial:
        return repr(["Shared fact", *new])
    if "P11 passage" in context:
        return repr([*initial, "Shared fact", *new])
    return repr(list(dict.fromkeys(initial)) + new)


@pytest.fixture
def pool_store(tmp_path, cli):
    """One query with 25 passages judged relevant (three creator windows)."""
    store = tmp_path / "s.db"
    (tmp_path / "q.tsv").write_text("q1\thow do bees make honey\n")
    passages = {f"p{i:02d}": f"P{i:02d} passage text" for i in range(1, 26)}
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in passages.items()))
    (tmp_path / "q.qrels").write_text("".join(f"q1 0 {pid} 2\n" for pid in passages))
    for kind, name in (("queries", "q.tsv"), ("corpus", "c.jsonl"), ("qrels", "q.qrels")):
        assert cli("import", kind, tmp_path / name, "--store", store).code == 0
    return store, passages


@pytest.mark.parametrize("dedup", [False, True])
def test_creation_across_windows_is_nuggetizers(pool_store, tmp_path, cli, dedup):
    store, passages = pool_store
    out = tmp_path / "bank.jsonl"
    with FakeOpenAI(reply=creator_reply) as server:
        result = cli("bank", "generate", "--from-pool", "--store", store, "--nuggets", "--llm", "openai:m",
                     "--base-url", server.base_url, "--out", out, *(["--dedup"] if dedup else []))
        ours = Counter(server.attempts)
    assert result.code == 0, result.err
    from nuggetizer.core.types import Document, Query, Request

    nz, stub = nuggetizer_with(creator_reply)
    scored = nz.create(Request(Query("q1", "how do bees make honey"),
                               [Document(pid, text) for pid, text in passages.items()]))
    theirs = Counter(m[-1]["content"] for m in stub.sent if "Initial Nugget List" in m[-1]["content"])
    creator_ours = Counter({p: n for p, n in ours.items() if "Initial Nugget List" in p})
    third = next(p for p in creator_ours if "P21 passage" in p)
    if dedup:  # Proctor's own variant: the repeat is gone from the third window's list
        assert creator_ours != theirs and list_after(third, "Initial Nugget List: ").count("Shared fact") == 1
    else:  # nuggetizer's: every creator prompt the same, byte for byte
        assert creator_ours == theirs and list_after(third, "Initial Nugget List: ").count("Shared fact") == 2
    line = json.loads(out.read_text())
    assert line["info"]["dedup"] is dedup and line["info"]["repeats_merged"] == 0
    # the creator's final list in its order (nuggetizer at d00dc3e keeps it; PyPI 0.0.5 then puts vital first)
    final = ast.literal_eval(creator_reply(stub.sent[2][-1]["content"]))[:30]
    assert [i["nugget_text"] for i in line["items"]] == final and {n.text for n in scored} == set(final)


def assign_reply(prompt: str) -> str:
    """The assigner: support for nuggets whose number is even, partial for multiples of 3, else not."""
    nuggets = list_after(prompt, "\nNugget List: ")
    labels = []
    for text in nuggets:
        n = int(text.split()[-1])
        labels.append("support" if n % 2 == 0 else "partial_support" if n % 3 == 0 else "not_support")
    return repr(labels)


ORDER = (14, 3, 9, 1, 12, 7, 5, 13, 2, 8, 11, 6, 10, 4)
NUGGETS = [(f"Nugget number {n}", "vital" if n % 4 else "okay") for n in ORDER]
ANSWERS = {"r1": "Bees make honey from nectar.", "r2": "Honey is sweet."}


@pytest.fixture
def assigned(tmp_path, cli):
    """A nuggetizer bank of 14 nuggets (file order unlike id order), two answers, graded with nugget-assign."""
    store = tmp_path / "s.db"
    (tmp_path / "q.tsv").write_text("t1\thow do bees make honey\n")
    bank = tmp_path / "nuggets.jsonl"
    bank.write_text(json.dumps({"query": "how do bees make honey", "qid": "t1",
                                "nuggets": [{"text": t, "importance": i} for t, i in NUGGETS]}) + "\n")
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"run_id": run, "topic_id": "t1", "topic": "how do bees make honey",
                                           "references": [], "response_length": len(text.split()),
                                           "answer": [{"text": text, "citations": []}]}) + "\n"
                               for run, text in ANSWERS.items()))
    for kind, path in (("queries", tmp_path / "q.tsv"), ("bank", bank), ("responses", answers)):
        assert cli("import", kind, path, "--store", store).code == 0, kind
    with FakeOpenAI(reply=assign_reply) as server:
        assert cli("grade", "--store", store, "--method", "nugget-assign", "--llm", "openai:judge",
                   "--base-url", server.base_url).code == 0
        prompts = Counter(server.attempts)
    return store, prompts


def test_assignment_prompts_are_nuggetizers_in_bank_order(assigned):
    from nuggetizer.core.types import ScoredNugget

    _, ours = assigned
    nz, stub = nuggetizer_with(assign_reply)
    nuggets = [ScoredNugget(text=t, importance=i) for t, i in NUGGETS]
    for text in ANSWERS.values():
        nz.assign("how do bees make honey", text, nuggets)
    theirs = Counter(messages[-1]["content"] for messages in stub.sent)
    assert sum(theirs.values()) == 4 and ours == theirs  # 2 answers x 2 windows (10 + 4), every prompt the same


@pytest.mark.parametrize("score", ["all", "vital", "strict_all", "strict_vital"])
def test_nugget_scores_are_nuggetizers_metrics(assigned, cli, score):
    from nuggetizer.core.metrics import calculate_nugget_scores
    from nuggetizer.core.types import ScoredNugget

    store, _ = assigned
    nz, _ = nuggetizer_with(assign_reply)
    nuggets = [ScoredNugget(text=t, importance=i) for t, i in NUGGETS]
    result = cli("leaderboard", "--store", store, "--metric", "nuggets", "--score", score, "--format", "json")
    assert result.code == 0, result.err
    ours = {row["system"]: row["score"] for row in json.loads(result.out)["systems"]}
    for run, text in ANSWERS.items():
        records = [vars(n) for n in nz.assign("how do bees make honey", text, nuggets)]
        theirs = getattr(calculate_nugget_scores("t1", records), f"{score}_score")
        assert ours[run] == pytest.approx(theirs, rel=0, abs=1e-15), run


def test_a_nuggetizer_record_without_qid_names_the_missing_field(tmp_path, cli):
    bank = tmp_path / "created.jsonl"
    bank.write_text(json.dumps({"query": "how do bees make honey",
                                "nuggets": [{"text": "Bees collect nectar", "importance": "vital"}]}) + "\n")
    result = cli("import", "bank", bank, "--store", tmp_path / "s.db")
    assert result.code == 2
    assert f"{bank}:1:" in result.err and '"qid"' in result.err and "'items'" not in result.err
    assert "Traceback" not in result.err


def test_bank_order_is_kept_and_a_store_made_before_goes_by_id(assigned, cli, tmp_path):
    from conftest import raw_script
    from proctor.store import Store

    store_path, _ = assigned
    store = Store.open(store_path)
    try:
        [(name, version)] = [(b["bank"], b["version"]) for b in store.banks.versions()]
        texts = [t for _, t, _ in store.banks.bank_items("nugget", name, version)["t1"]]
        assert texts == [t for t, _ in NUGGETS]  # the file's order, not the ids'
    finally:
        store.close()
    raw_script(store_path, "DROP TABLE question_positions",  # as a store written before the order was kept (schema 4)
               "UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    store = Store.open(store_path)
    try:
        ids = [i for i, _, _ in store.banks.bank_items("nugget", name, version)["t1"]]
        assert ids == sorted(ids)
    finally:
        store.close()
    other = tmp_path / "more.jsonl"
    other.write_text(json.dumps({"query": "how do bees make honey", "qid": "t1",  # the stored text: no contradiction
                                 "nuggets": [{"text": "Zeta"}, {"text": "Alpha"}]}) + "\n")
    assert cli("import", "bank", other, "--store", store_path, "--name", "more").code == 0
    store = Store.open(store_path)
    try:
        [version] = [b["version"] for b in store.banks.versions() if b["bank"] == "more"]
        assert [t for _, t, _ in store.banks.bank_items("nugget", "more", version)["t1"]] == ["Zeta", "Alpha"]
    finally:
        store.close()
