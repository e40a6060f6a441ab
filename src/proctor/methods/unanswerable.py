"""Unanswerability expressions (003 footnote 3, 000 §4.2.2) and the normalisation used to recognise them."""

from __future__ import annotations

import re
import string

UNANSWERABLE = frozenset({
    "unanswerable", "no", "no answer", "not enough information", "unknown", "it is not possible to tell",
    "it does not say", "no relevant information",
})

_PUNCTUATION = re.compile(f"[{re.escape(string.punctuation)}]")


def normalise(text: str) -> str:
    """Lower-case, punctuation removed, whitespace collapsed."""
    return " ".join(_PUNCTUATION.sub(" ", text.lower()).split())


def is_unanswerable(reply: str) -> bool:
    """True when the reply, normalised, is one of the unanswerability expressions."""
    return normalise(reply) in UNANSWERABLE
