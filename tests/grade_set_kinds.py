"""A store that holds a grade set of every kind Proctor makes: one per grading method of the registry
(`proctor.methods.METHOD_NAMES`, graded by the local test server, embedding by the packaged model), a user
template's grade set, grades imported from a Workbench file, an ensemble of one bank version (a cell per
question) and one across bank versions (a cell per passage). Built once per test run; tests copy it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import opened_store, seed_demo
from fake_openai import FakeOpenAI
from inprocess import built_once, once, run_cli
from proctor.methods import METHOD_NAMES

V2 = """\
name: self-rating
version: v2
source: a second wording (a test)
scale: [0, 5]
template: |-
  Rate from 0 to 5 how well the context answers the question.
  Question: {question}
  Context: {context}
"""


def _grade(store: Path, server: FakeOpenAI | None, method: str, *extra: str) -> str:
    llm = ["--llm", "openai:judge", "--base-url", server.base_url] if server else []
    result = run_cli("grade", "--store", store, "--method", method, *llm, "--format", "json", *extra)
    assert result.code == 0, (method, result.err)
    return json.loads(result.out)["grade_set"]["id"]


def _ensemble(store: Path, *members: str) -> str:
    result = run_cli("ensemble", "--store", store, "--grade-set", members[0], "--grade-set", members[1],
                     "--rule", "mean", "--format", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)["grade_set"]["id"]


def _build(root: Path) -> tuple[Path, dict[str, str]]:
    store = seed_demo(root)
    collection = root / "collection"
    nuggets = root / "nuggets.jsonl"
    nuggets.write_text("".join(json.dumps({"query_id": q, "query_text": None, "items": [
        {"nugget_id": f"{q}/n1", "nugget_text": f"a key fact of {q}"}]}) + "\n" for q in ("q1", "q2", "q3", "q4")))
    assert run_cli("import", "bank", nuggets, "--store", store, "--name", "nuggets").code == 0
    kinds: dict[str, str] = {}
    with FakeOpenAI() as server:
        for method in METHOD_NAMES:
            if method == "embedding":
                kinds[method] = _grade(store, None, method, "--bank", "bank")
            elif method == "nugget-rating":
                kinds[method] = _grade(store, server, method, "--bank", "nuggets")
            elif method in ("self-rating", "qa"):
                kinds[method] = _grade(store, server, method, "--bank", "bank")
            else:
                kinds[method] = _grade(store, server, method)
        template = root / "v2.yaml"
        template.write_text(V2)
        kinds["user template"] = _grade(store, server, "self-rating", "--bank", "bank", "--template", template)
        kinds["ensemble"] = _ensemble(store, kinds["self-rating"], kinds["embedding"])
        bank = collection / "bank.jsonl"
        lines = [json.loads(line) for line in bank.read_text().splitlines()]
        lines[0]["items"].append({"question_id": "q1/extra", "question_text": "What do bees make?"})
        bank.write_text("".join(json.dumps(line) + "\n" for line in lines))
        assert run_cli("import", "bank", bank, "--store", store).code == 0
        kinds["second bank version"] = _grade(store, server, "self-rating", "--bank", "bank")
        kinds["ensemble across bank versions"] = _ensemble(store, kinds["self-rating"], kinds["second bank version"])
    workbench = root / "workbench.jsonl"
    workbench.write_text(json.dumps(["q1", [{"paragraph_id": "wb1", "text": "bees make honey from nectar",
                                             "paragraph_data": {"judgments": [], "rankings": []}, "exam_grades": [{
                                                 "llm": "flan", "prompt_info": {"is_self_rated": True,
                                                                                "prompt_class": "P"},
                                                 "self_ratings": [{"question_id": "q1/wb", "self_rating": 1},
                                                                  {"question_id": "q1/wb2", "self_rating": 0}],
                                                 "answers": [["q1/wb", "nectar"], ["q1/wb2", "x"]]}]}]]) + "\n")
    assert run_cli("import", "exampp", workbench, "--store", store).code == 0
    with opened_store(store) as s:
        kinds["imported from the Workbench"] = next(g.id for g in s.grades.grade_sets() if g.model == "flan")
    (root / "banks").mkdir()
    for name, path in (("nuggets", nuggets), ("bank-v2", bank)):
        (root / "banks" / f"{name}.jsonl").write_bytes(path.read_bytes())
    return store, kinds


def fresh_store(folder: Path, kinds_store: Path) -> Path:
    """A store with the demo collection and every bank version of the kinds store (no grades): where an export
    of it is imported."""
    store = seed_demo(folder)
    banks = kinds_store.parent / "banks"
    assert run_cli("import", "bank", banks / "nuggets.jsonl", "--store", store, "--name", "nuggets").code == 0
    assert run_cli("import", "bank", banks / "bank-v2.jsonl", "--store", store, "--name", "bank").code == 0
    return store


def every_kind(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """(store, `{kind: grade set id}`), built once per test run (`inprocess.built_once`: one build, a copy of its
    folder per xdist worker): read only (copy it with `inprocess.copy_store`)."""

    def build(folder: Path) -> Path:
        store, kinds = _build(folder)
        (folder / "kinds.json").write_text(json.dumps(kinds))
        return store

    store = built_once("grade_set_kinds", tmp_path_factory, build)
    return store, once("grade_set_kinds ids", lambda: json.loads((store.parent / "kinds.json").read_text()))
