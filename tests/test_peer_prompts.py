"""The peers' prompts byte for byte: UMBRELA's own template file (vendored from castorini/umbrela at 01cc3ab,
tests/data/peers) renders to the user message Proctor sends, with the system message umbrela's run_gpt adds."""

from __future__ import annotations

from pathlib import Path

import yaml

from proctor.llm.base import Request
from proctor.llm.openai_backend import OpenAIOptions, chat_body
from proctor.methods import get_method

PEERS = Path(__file__).parent / "data" / "peers"
QUERY = "how long is life cycle of flea"
PASSAGE = ("The life cycle of a flea can last anywhere from 20 days to an entire year. It depends on how long the "
           "flea remains in the dormant stage (eggs, larvae, pupa).")


def umbrela_messages(query: str, passage: str) -> list[dict[str, str]]:
    """What umbrela's GPTJudge.run_gpt sends for the zero-shot Bing template (system + rendered prefix_user)."""
    template = yaml.safe_load((PEERS / "umbrela_qrel_zeroshot_bing.yaml").read_text(encoding="utf-8"))
    prompt = template["prefix_user"].format(examples="", query=query, passage=passage)
    return [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": prompt}]


def test_umbrela_user_message_is_umbrelas_byte_for_byte():
    ours = get_method("umbrela").template.render(QUERY, PASSAGE)
    theirs = umbrela_messages(QUERY, PASSAGE)[1]["content"]
    assert ours.encode() == theirs.encode()
    assert ours.count(" \n") == 3  # the three lines that end in a space in umbrela's file


def test_umbrela_messages_list_is_umbrelas():
    template = get_method("umbrela").template
    request = Request("q", "p", "q", template.render(QUERY, PASSAGE), QUERY, PASSAGE, template.max_tokens,
                      template.system)
    assert chat_body("m", request, OpenAIOptions())["messages"] == umbrela_messages(QUERY, PASSAGE)
