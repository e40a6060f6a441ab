"""Grading methods: a registry of name → (template, how to parse a reply). Prompts are YAML data under
`templates/`; each parser lives in the module named after what it parses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from proctor.errors import UsageError
from proctor.methods.base import Parsed, Template, load_template
from proctor.methods.embedding import parse_similarity
from proctor.methods.qa import parse_answer
from proctor.methods.self_rating import parse_rating


@dataclass(frozen=True)
class Method:
    """A grading method: its template and how a reply becomes a grade."""

    name: str
    template: Template
    kind: str
    """`rating` (0–5 from the reply), `qa` (answer + verification), `similarity` (embedding score)."""

    @property
    def items(self) -> str:
        """Which bank items it grades: `question` or `nugget`."""
        return self.template.items

    def parse(self, reply: str | None, *, probabilities: dict[int, float] | None = None, score: float | None = None,
              gold_answers: Sequence[str] | None = None) -> Parsed:
        """Turn a backend reply into a grade."""
        if self.kind == "rating":
            return parse_rating(reply, probabilities)
        if self.kind == "qa":
            return parse_answer(reply, gold_answers)
        return parse_similarity(reply, score)


_KINDS = {"self-rating": "rating", "nugget-rating": "rating", "qa": "qa", "embedding": "similarity"}
METHOD_NAMES = tuple(_KINDS)


@cache
def get_method(name: str) -> Method:
    """The method called `name`; unknown names are a usage error."""
    if name not in _KINDS:
        raise UsageError(f"unknown method {name!r}; choose one of {', '.join(METHOD_NAMES)}")
    return Method(name, load_template(name), _KINDS[name])


__all__ = ["METHOD_NAMES", "Method", "Parsed", "get_method"]
