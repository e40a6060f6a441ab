"""The review app's editing rules on a real store, without a server: drafts, versions, conflicts, audit."""

from __future__ import annotations

import pytest

from proctor.api import commands
from proctor.errors import UsageError
from proctor.review import editing
from proctor.store import Store


@pytest.fixture
def store(demo_store):
    opened = Store.open(demo_store)
    yield opened
    opened.close()


def _q1(store: Store) -> list[dict]:
    return editing.draft_questions(store, "bank", "q1")[1]


def test_edits_go_into_a_draft_published_as_a_new_version_beside_the_old(store):
    [old] = store.banks.versions()
    before = store.banks.bank_questions("bank", old["version"])
    first, second, third = _q1(store)
    editing.edit_question(store, "bank", first["question_id"], 0, "ann", action="edit", text="  Where is  nectar? ",
                          answers=["in flowers"])
    editing.edit_question(store, "bank", second["question_id"], 0, "ann", action="delete")
    editing.edit_question(store, "bank", third["question_id"], 0, "ann", action="spurious")
    added = editing.add_question(store, "bank", "q1", "bob", "Do bees dance?")
    assert store.banks.bank_questions("bank", old["version"]) == before  # nothing published yet
    version = editing.publish(store, "bank", "ann")
    banks = {b["version"]: b for b in store.banks.versions()}
    assert set(banks) == {old["version"], version} and banks[version]["latest"] and not banks[old["version"]]["latest"]
    assert store.banks.bank_questions("bank", old["version"]) == before  # the old version is never rewritten
    new = {q["question_id"]: q for q in store.banks.bank_questions("bank", version)}
    assert new[first["question_id"]]["text"] == "Where is nectar?"
    assert new[first["question_id"]]["answers"] == ["in flowers"]
    assert second["question_id"] not in new and new[third["question_id"]]["info"] == {"spurious": True}
    assert added["question_id"] == "q1/review-1" and new["q1/review-1"]["text"] == "Do bees dance?"
    assert len(new) == len(before) - 1 + 1
    assert store.review.open_draft("bank") is None
    trail = store.review.audit(bank_id="bank")
    assert [e["action"] for e in trail] == ["publish", "add", "spurious", "delete", "edit"]
    assert trail[-1]["reviewer"] == "ann" and trail[-1]["before"]["text"] == first["text"]
    assert trail[-1]["after"]["text"] == "Where is nectar?"
    # a later edit of an edited question starts from its current revision
    assert {q["question_id"]: q["revision"] for q in _q1(store)}[first["question_id"]] == 1


def test_a_save_from_an_older_revision_is_refused_with_the_other_edit(store):
    first = _q1(store)[0]
    editing.edit_question(store, "bank", first["question_id"], 0, "ann", action="edit", text="Ann's wording")
    with pytest.raises(commands.Conflict) as refused:
        editing.edit_question(store, "bank", first["question_id"], 0, "bob", action="edit", text="Bob's wording")
    assert refused.value.other["reviewer"] == "ann" and refused.value.other["after"]["text"] == "Ann's wording"
    assert _q1(store)[0]["text"] == "Ann's wording" and len(store.review.audit()) == 1
    editing.edit_question(store, "bank", first["question_id"], 1, "bob", action="edit", text="Bob's wording")
    assert _q1(store)[0]["text"] == "Bob's wording"


def test_what_cannot_be_published_is_refused_and_leaves_the_store_as_it_was(store, demo_store, tmp_path, cli):
    with pytest.raises(UsageError, match="no draft"):
        editing.publish(store, "bank", "ann")
    third = _q1(store)[2]
    editing.edit_question(store, "bank", third["question_id"], 0, "ann", action="spurious")
    editing.edit_question(store, "bank", third["question_id"], 1, "ann", action="not-spurious")
    with pytest.raises(UsageError, match="nothing to publish"):  # marked and unmarked: the questions are as before
        editing.publish(store, "bank", "ann")
    with pytest.raises(UsageError, match="empty"):
        editing.add_question(store, "bank", "q1", "ann", "   ")
    with pytest.raises(UsageError, match="no query"):
        editing.add_question(store, "bank", "nope", "ann", "Why?")
    editing.edit_question(store, "bank", third["question_id"], 2, "ann", action="edit", text="Reworded")
    bank = tmp_path / "collection" / "bank.jsonl"
    bank.write_text(bank.read_text().replace("How do bees", "How exactly do bees"))
    assert cli("import", "bank", bank, "--store", demo_store).code == 0  # a newer version meanwhile
    versions = len(store.banks.versions())
    with pytest.raises(UsageError, match="newer version"):
        editing.publish(store, "bank", "ann")
    assert len(store.banks.versions()) == versions
    editing.discard(store, "bank", "ann")
    assert store.review.open_draft("bank") is None and store.review.audit()[0]["action"] == "discard"


def test_reviewer_judgments_keep_their_history_and_the_newest_counts(store):
    imported = store.corpus.judgments()
    store.review.add_review_judgment("q1", "d101", 1, "ann", None)
    store.review.add_review_judgment("q1", "d101", 3, "bob", "gs")
    store.review.add_review_judgment("q2", "d201", 0, "ann", None)
    judged = store.review.review_judgments()
    assert judged["q1"]["d101"]["relevance"] == 3 and judged["q1"]["d101"]["reviewer"] == "bob"
    assert judged["q2"]["d201"]["relevance"] == 0
    assert store.corpus.judgments() == imported  # never mixed into the imported judgments
    assert store.review.review_judgments("q2") == {"q2": judged["q2"]}


def test_a_question_marked_spurious_is_published_but_never_graded_carried_or_counted(store, demo_store, cli):
    from fake_openai import FakeOpenAI
    from proctor.evaluate.sources import cover_table

    with FakeOpenAI() as server:
        grade = ("grade", "--store", demo_store, "--method", "self-rating", "--llm", "openai:m", "--base-url",
                 server.base_url)
        assert cli(*grade).code == 0
        asked = server.requests
        third = _q1(store)[2]["question_id"]
        editing.edit_question(store, "bank", third, 0, "ann", action="spurious")
        version = editing.publish(store, "bank", "ann")  # a mark alone makes a new version
        assert {q["question_id"]: q["info"] for q in store.banks.bank_questions("bank",
                                                                                version)}[third] == {"spurious": True}
        assert third not in {i for i, _, _ in store.banks.bank_items("question", "bank", version)["q1"]}
        assert cli(*grade, "--bank", f"bank@{version}").code == 0
        assert server.requests == asked  # every other question's grades carried over, the spurious one not graded
    old_set, new_set = sorted(store.grades.grade_sets(), key=lambda g: g.bank_version != version)[::-1]
    assert new_set.bank_version == version and old_set.bank_version != version
    old_rows = list(store.grades.grade_rows(old_set.id, "self-rating"))
    new_rows = list(store.grades.grade_rows(new_set.id, "self-rating"))
    assert {r[2] for r in new_rows} == {r[2] for r in old_rows} - {third}
    assert len(new_rows) == len([r for r in old_rows if r[2] != third])
    table, _ = cover_table(store, new_set, 1)
    assert third not in table.questions["q1"] and third in cover_table(store, old_set, 1)[0].questions["q1"]
    from proctor.grading.plan import judgment_pool
    from proctor.review.pages import _set_state

    state = _set_state(store, new_set, judgment_pool(store, 20))
    assert state["state"] == "graded" and state["pending"] == 0 and state["expected"] == len(new_rows)
