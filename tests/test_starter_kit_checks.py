"""The TREC AutoJudge starter kit's own workflow checks (vendored in tests/vendor/starter_kit, its commit named
there) on every workflow Proctor ships: it parses and its classes import as the kit reads `judge_class`
(`module:Class`), every phase it turns on is implemented, and the judge, run by the track's runner as a real
process on kiddie's first topic, contacts the injected endpoint (OPENAI_BASE_URL) with the injected model."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from vendor.starter_kit import workflow_checks as kit

pytestmark = pytest.mark.skipif(not importlib.util.find_spec("autojudge_base"),
                                reason="needs the autojudge-base package (extra test)")

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / "src" / "proctor" / "autojudge").glob("workflow*.yml"))


def test_proctor_ships_both_workflows():
    assert [w.name for w in WORKFLOWS] == ["workflow-nuggetizer.yml", "workflow.yml"]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_parses_and_classes_import(workflow, peer_nltk):
    kit.check_workflow_parses_and_classes_import(workflow)


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_enabled_phases_are_implemented(workflow, peer_nltk):
    kit.check_enabled_phases_are_implemented(workflow)


def test_the_kit_check_fails_on_the_dotted_class_form(tmp_path, peer_nltk):
    """The form the shipped workflows used before (`proctor.autojudge.ProctorJudge`) fails the kit's check as it
    failed in the kit's suite: the check is not vacuous."""
    dotted = tmp_path / "workflow.yml"
    dotted.write_text('judge_class: "proctor.autojudge.ProctorJudge"\n')
    with pytest.raises(ModuleNotFoundError, match="proctor.autojudge.ProctorJudge"):
        kit.check_workflow_parses_and_classes_import(dotted)


@pytest.mark.slow
@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_judge_uses_injected_endpoint(workflow, tmp_path, peer_nltk):
    assert kit.uses_llm(workflow)  # Proctor's default configurations grade with the endpoint
    (peer_nltk / "tokenizers" / "punkt").mkdir(parents=True, exist_ok=True)
    kit.check_judge_uses_injected_endpoint(workflow, tmp_path, ROOT,
                                           {"PYTHONPATH": str(ROOT / "src"), "NLTK_DATA": str(peer_nltk),
                                            "HF_HUB_OFFLINE": "1"})
