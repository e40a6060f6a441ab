"""QA with answer verification (000 §4.2.1, 004 §3.2.2).

The LLM answers the question from the context. With an answer key, the extracted and the gold answer are
normalised (lower-case, stopwords removed, Porter-stemmed) and match when their edit distance is below
20% of the longer normalised string; ill-formed answers ("a.", "(iii)") and unanswerability expressions are
wrong. Without an answer key, any well-formed answer counts as answered. Grades are binary: 1 or 0."""

from __future__ import annotations

import re
from collections.abc import Sequence

from proctor.methods.base import ANSWERED, CORRECT, FAILED, WRONG, Parsed
from proctor.methods.porter import stem
from proctor.methods.unanswerable import is_unanswerable, normalise

STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "been", "being", "but", "by", "did", "do", "does", "for",
    "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "in", "into", "is", "it", "its",
    "me", "my", "of", "on", "or", "our", "she", "so", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "was", "we", "were", "what", "when", "where", "which",
    "who", "whom", "why", "will", "with", "would", "you", "your",
})

_ILL_FORMED = re.compile(r"^\(?\[?([a-e]|i{1,3}|iv|v|vi{0,3}|ix|x)\]?\)?\.?$", re.IGNORECASE)


def normalise_answer(text: str) -> str:
    """Lower-case, punctuation and stopwords removed, every word Porter-stemmed."""
    return " ".join(stem(word) for word in normalise(text).split() if word not in STOPWORDS)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def is_ill_formed(answer: str) -> bool:
    """Answers that only name an option or are too short to mean anything ("a.", "(iii)", "")."""
    stripped = answer.strip()
    return not normalise(stripped) or bool(_ILL_FORMED.match(stripped))


def matches(answer: str, gold: str) -> bool:
    """The normalised edit-distance rule: distance < 20% of the longer normalised string."""
    a, g = normalise_answer(answer), normalise_answer(gold)
    if not a or not g:
        return False
    return edit_distance(a, g) < 0.2 * max(len(a), len(g))


def parse_answer(reply: str | None, gold_answers: Sequence[str] | None) -> Parsed:
    """Grade 1/0 from an extracted answer, against the answer key when there is one."""
    if reply is None or not reply.strip():
        return Parsed(None, FAILED, reply, {"reason": "empty reply"})
    answer = reply.strip()
    if is_ill_formed(answer) or is_unanswerable(answer):
        return Parsed(0, WRONG, answer, {"reason": "ill-formed or unanswerable"})
    if not gold_answers:
        return Parsed(1, ANSWERED, answer, {"verification": "none (no answer key)"})
    hit = next((g for g in gold_answers if matches(answer, g)), None)
    if hit is not None:
        return Parsed(1, CORRECT, answer, {"verification": "edit distance", "matched": hit})
    return Parsed(0, WRONG, answer, {"verification": "edit distance"})
