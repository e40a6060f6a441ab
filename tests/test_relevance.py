"""Relevance-label methods: prompts are the papers' texts, parsers map replies to labels, Naive Bayes never
trains on the query it predicts, and every method runs against a local OpenAI-compatible server."""

from __future__ import annotations

import json
import random

import pytest
from sklearn.naive_bayes import GaussianNB as SklearnNB

from conftest import grades_of
from fake_openai import FakeOpenAI
from proctor.methods import get_method
from proctor.methods.aggregate import GaussianNB, cross_validated, sum_label

Q, P = "how do bees make honey", "Bees evaporate nectar."

PAPER = {  # 000 Appendix A; 002 Tables 2, 3, 5 and 6 (line breaks where the papers put fields on their own line)
    "thomas": "Instruction: You are a search quality rater evaluating the relevance of passages. Given a query and a "
              "passages, you must provide a score on an integer scale of 0 to 2 with the following meanings:\n"
              "2 = highly relevant, very helpful for this query\n"
              "1 = relevant, may be partly helpful but might contain other irrelevant content\n"
              "0 = not relevant, should never be shown for this query\n"
              f"Question: {Q}\nPassage: {P}\nAnswer:",
    "fagb": "Instruction: Indicate if the passage is relevant for the question. Respond with 'Yes' or 'No'.\n"
            f"Question: {Q}\nPassage: {P}\nAnswer:",
    "helm": "Instruction: Does the passage answer the query? Respond with 'Yes' or 'No'.\n"
            f"Question: {Q}\nPassage: {P}\nAnswer:",
    "sun": "Instruction: Given a passage and a query, predict whether the passage includes an answer to the query "
           'by producing either "Yes" or "No".\n'
           f"Question: {Q}\nPassage: {P}\nAnswer:",
}


@pytest.mark.parametrize("name", sorted(PAPER))
def test_direct_prompts_are_the_papers(name):
    assert get_method(name).template.render(Q, P) == PAPER[name]


@pytest.mark.parametrize(("name", "instruction"), [
    ("fagb-few", "Instruction: Indicate if the passage is relevant for the question. Respond with 'Yes' or 'No'.\n"),
    ("sun-few", "Instruction: Given a passage and a query, predict whether the passage includes an answer to the "
                'query by producing either "Yes" or "No".\n'),
])
def test_few_shot_prompts(name, instruction):
    text = get_method(name).template.render(Q, P)
    assert text.startswith(instruction + "Passage: Its 25 drops per ml, you guys are all wrong.")
    assert text.count("Answer: Yes") == 2 and text.count("Answer: No") == 2
    assert "They offer free checking accounts with free online banking." in text
    assert text.endswith(f"Question: {Q}\nPassage: {P}\nAnswer:")


def test_umbrela_prompt():
    text = get_method("umbrela").template.render(Q, P)
    assert text.startswith("Given a query and a passage, you must provide a score on an integer scale of 0 to 3")
    assert f"Query: {Q}\nPassage: {P}\n\nSplit this problem into steps:" in text
    assert text.endswith("Provide each score in the format of: ##final score: score without providing any reasoning.")


def test_four_prompts_texts():
    criteria = get_method("criteria").template
    assert criteria.system.startswith("Please assess how well the provided passage meets specific criteria in "
                                      "relation to the query. Use the following scoring scale (0-3) for evaluation:")
    assert criteria.render("How precisely does the passage answer the query.", P,
                           {"criterion_name": "Exactness", "query": Q}) == (
        "Please rate how well the given passage meets the Exactness criterion in relation to the query. The output "
        "should be a single score (0-3) indicating How precisely does the passage answer the query.\n"
        f"Query: {Q}\nPassage: {P}\nScore:")
    assert list(criteria.extra["criteria"]) == ["Exactness", "Coverage", "Topicality", "Contextual Fit"]
    grades = {"Exactness": "2", "Topicality": "3", "Coverage": "1", "Contextual Fit": "0"}
    aggregate = get_method("four-prompts").template
    assert aggregate.render(Q, P, grades) == (
        "Please rate how the given passage is relevant to the query based on the given scores. The output must be "
        f"only a score that indicates how relevant they are.\nQuery: {Q}\nPassage: {P}\nExactness: 2\nTopicality: 3"
        "\nCoverage: 1\nContextual Fit: 0\nScore:")
    assert aggregate.system.startswith("You are a search quality rater evaluating the relevance of passages.")
    relevant = get_method("cot-relevant").template.render(Q, P, grades)
    assert relevant.startswith("The given passage is relevant to the query, please rate how relevant it is to the "
                               "query. The output must be only a score (2 or 3)")
    assert relevant.endswith("Exactness: 2\nCoverage: 1\nScore:")
    assert get_method("cot-nonrelevant").template.render(Q, P, grades).endswith(
        "Topicality: 3\nContextual Fit: 0\nScore:")
    generate = get_method("query-gen-query").template
    assert generate.render(Q, P) == ("Please identify the search query that best corresponds to the following "
                                     f"passage. Keep your response concise. Passage: {P}.")
    assert generate.system.startswith("You are a query generator.")
    assert get_method("query-gen").template.render(Q, P, {"generated_query": "bee honey"}) == (
        "Please rate the similarity between the following queries:\nbee honey\nand\n"
        f"{Q}\n3: Highest similarity\n2: Fairly similar\n1: Minor similarity\n0: Not similar")


@pytest.mark.parametrize(("reply", "label", "status"), [
    ("Yes", 1, "yes-no"), ("Yes.", 1, "yes-no"), ("yes,", 1, "yes-no"), (" YES! it is", 1, "yes-no"),
    ("No", 0, "yes-no"), ("no.", 0, "yes-no"), ("Maybe", 0, "invalid"), ("", None, "failed"),
    ("The answer is yes", 0, "invalid"),
])
def test_yes_no_parser(reply, label, status):
    parsed = get_method("sun").parse(reply)
    assert (parsed.grade, parsed.status) == (label, status)


@pytest.mark.parametrize(("method", "reply", "label", "status"), [
    ("thomas", "2", 2, "number"), ("thomas", "Score: 1.", 1, "number"), ("thomas", "3", 0, "invalid"),
    ("thomas", "relevant", 0, "invalid"), ("umbrela", "M: 3, T: 2\n##final score: 1", 1, "number"),
    ("umbrela", "##final score: 7 ... 2", 2, "number"), ("criteria", "3", 3, "number"),
    ("cot-relevant", "1", 0, "invalid"), ("cot-relevant", "3", 3, "number"), ("cot-nonrelevant", "1", 1, "number"),
    ("query-gen", "Similarity: 2", 2, "number"),
])
def test_range_parsers(method, reply, label, status):
    parsed = get_method(method).parse(reply)
    assert (parsed.grade, parsed.status) == (label, status)


def test_generated_query_is_kept_as_text():
    parsed = get_method("query-gen-query").parse('"bee honey making"\n')
    assert (parsed.grade, parsed.status, parsed.answer) == (None, "generated", "bee honey making")


@pytest.mark.parametrize(("grades", "label"), [((3, 3, 3, 3), 3), ((3, 3, 3, 1), 3), ((3, 3, 3, 0), 2),
                                                ((2, 2, 2, 1), 2), ((2, 2, 1, 1), 1), ((1, 1, 1, 1), 0)])
def test_sum_table(grades, label):
    assert sum_label(grades) == label


@pytest.mark.parametrize("seed", range(5))
def test_gaussian_nb_equals_scikit_learn(seed):
    rng = random.Random(seed)
    x = [[rng.randrange(4) for _ in range(4)] for _ in range(200)]
    y = [min(3, sum(row) // 3 + rng.choice([-1, 0, 0, 1])) for row in x]
    y = [max(0, v) for v in y]
    ours = GaussianNB.fit(x, y)
    theirs = SklearnNB().fit(x, y)
    probe = [[rng.randrange(4) for _ in range(4)] for _ in range(100)]
    assert [ours.predict(r) for r in probe] == list(theirs.predict(probe))


def test_naive_bayes_never_trains_on_the_query_it_predicts():
    # q1 and q2 have identical criterion grades but opposite judgments: a model that saw the query's own
    # judgments would reproduce them; a cross-validated one must predict q1 from q2 and vice versa.
    rows = [("q1", f"a{i}", (3.0, 3.0, 3.0, 3.0), 3) for i in range(5)]
    rows += [("q1", f"b{i}", (0.0, 0.0, 0.0, 0.0), 0) for i in range(5)]
    rows += [("q2", f"a{i}", (3.0, 3.0, 3.0, 3.0), 0) for i in range(5)]
    rows += [("q2", f"b{i}", (0.0, 0.0, 0.0, 0.0), 3) for i in range(5)]
    rows += [("q3", "unjudged", (3.0, 3.0, 3.0, 3.0), None)]
    seen: dict[str, set[str]] = {}
    labels = cross_validated(rows, on_train=lambda q, queries: seen.__setitem__(q, queries))
    assert seen == {"q1": {"q2"}, "q2": {"q1"}, "q3": {"q1", "q2"}}
    assert labels[("q1", "a0")][0] == 0 and labels[("q1", "b0")][0] == 3
    assert labels[("q2", "a0")][0] == 3 and labels[("q2", "b0")][0] == 0
    assert labels[("q1", "a0")][1] == 10  # trained on q2's ten judged passages only


def reply(prompt: str) -> str:
    if "'Yes' or 'No'" in prompt or '"Yes" or "No"' in prompt:
        return "Yes." if "nectar" in prompt.lower() or "bees" in prompt.split("Passage:")[-1].lower() else "No"
    if "search query that best corresponds" in prompt:
        return "honey bees"
    if "##final score" in prompt:
        return "##final score: 2"
    return "3" if "honey" in prompt else "1"


RANGES = {"thomas": {0, 1, 2}, "fagb": {0, 1}, "fagb-few": {0, 1}, "helm": {0, 1}, "sun": {0, 1}, "sun-few": {0, 1},
          "umbrela": {0, 1, 2, 3}, "four-prompts": {0, 1, 2, 3}, "four-prompts-cot": {0, 1, 2, 3},
          "query-gen": {0, 1, 2, 3}}


@pytest.mark.slow  # the analyze report draws every method's plots (~30 s on a quiet machine)
@pytest.mark.usefixtures("stand_in_plots")  # asserts nothing about the plot files
def test_every_method_against_a_local_server(cli, demo_store):
    with FakeOpenAI(reply=reply) as server:
        for method in RANGES:
            result = cli("grade", "--store", demo_store, "--method", method, "--llm", "openai:judge",
                         "--base-url", server.base_url, "--format", "json")
            assert result.code == 0, (method, result.err)
        for aggregate in ("sum", "naive-bayes"):
            result = cli("grade", "--store", demo_store, "--method", "four-prompts", "--aggregate", aggregate,
                         "--llm", "openai:judge", "--base-url", server.base_url)
            assert result.code == 0, (aggregate, result.err)
    ranges = {**RANGES, "four-prompts-sum": {0, 1, 2, 3}, "four-prompts-naive-bayes": {0, 1, 2, 3}}
    for method, allowed in ranges.items():
        qrels = cli("qrels", "--store", demo_store, "--method", method)
        assert qrels.code == 0, (method, qrels.err)
        labels = {int(line.split()[3]) for line in qrels.out.splitlines()}
        assert len(qrels.out.splitlines()) == 24 and labels <= allowed, (method, labels)
    criteria = grades_of(demo_store, "four-prompts", "judge", step="criteria", aggregate="prompt")
    assert {g.question_id for g in criteria} == {"Exactness", "Coverage", "Topicality", "Contextual Fit"}
    nb = grades_of(demo_store, "four-prompts", "judge", aggregate="naive-bayes")[0]
    assert set(nb.extra["criteria"]) == {"Exactness", "Coverage", "Topicality", "Contextual Fit"}
    # the whole meta-evaluation takes them all, side by side, without special cases
    official = demo_store.parent / "official.json"
    official.write_text(json.dumps({"strong": 1, "partial": 2, "middling": 3, "weak": 4}))
    report = cli("analyze", "--store", demo_store, "--official", official, "--out", demo_store.parent / "r",
                 "--measures", "P@3,nDCG@5", "--budget", "3")
    assert report.code == 0, report.err
    text = (demo_store.parent / "r" / "report.md").read_text()
    for method in ranges:
        assert f"| {method} | judge |" in text
    assert "| criteria |" not in text and "parse failures" in text


def test_direct_methods_need_query_texts(cli, tmp_path):
    store = tmp_path / "s.db"
    run = tmp_path / "r.run"
    run.write_text("q1 Q0 d1 1 1.0 sys\n")
    assert cli("import", "runs", run, "--store", store).code == 0
    result = cli("grade", "--store", store, "--method", "thomas", "--llm", "openai:x", "--base-url",
                 "http://127.0.0.1:9/v1")
    assert result.code == 2 and "no query texts" in result.err and "proctor import queries" in result.err
