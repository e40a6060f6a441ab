"""Grading methods: a registry of name → (template, how to parse a reply). Prompts are YAML data under
`templates/`; each parser lives in the module named after what it parses. Multi-step methods
(`four-prompts`, `four-prompts-cot`, `query-gen`) are declared as lists of these single-prompt steps in
`proctor.methods.steps`. A user's variant of a template (`--template FILE`) is loaded by `user_method`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from proctor.errors import UsageError
from proctor.methods.base import Parsed, Template, load_template, load_template_file
from proctor.methods.embedding import parse_similarity
from proctor.methods.qa import parse_answer
from proctor.methods.relevance import parse_generated, parse_in_range, parse_yes_no, within_scale
from proctor.methods.self_rating import parse_rating


@dataclass(frozen=True)
class Method:
    """A grading method (or one step of a multi-step method): its template and how a reply becomes a grade."""

    name: str
    template: Template
    kind: str
    """`rating` (0–5), `qa` (answer + verification), `similarity` (embedding), `yes-no`, `range` (low–high),
    `generated` (text kept for a later step)."""
    low: int = 0
    high: int = 5

    @property
    def items(self) -> str:
        """What it grades per passage: bank `question`s or `nugget`s, the `query` itself, or the `criteria`."""
        return self.template.items

    def parse(self, reply: str | None, *, probabilities: dict[int, float] | None = None, score: float | None = None,
              gold_answers: Sequence[str] | None = None) -> Parsed:
        """Turn a backend reply into a grade; a grade outside the declared scale (`low`-`high`, e.g. a user
        template's `scale: [0, 3]`) is `invalid`, label 0, as the range parser makes it."""
        return within_scale(self._parse(reply, probabilities, score, gold_answers), self.low, self.high)

    def _parse(self, reply: str | None, probabilities: dict[int, float] | None, score: float | None,
               gold_answers: Sequence[str] | None) -> Parsed:
        if self.kind == "rating":
            return parse_rating(reply, probabilities)
        if self.kind == "qa":
            return parse_answer(reply, gold_answers)
        if self.kind == "yes-no":
            return parse_yes_no(reply)
        if self.kind == "range":
            return parse_in_range(reply, self.low, self.high)
        if self.kind == "generated":
            return parse_generated(reply)
        return parse_similarity(reply, score)


# name → (template file, kind, low, high)
_STEPS: dict[str, tuple[str, str, int, int]] = {
    "self-rating": ("self-rating", "rating", 0, 5),
    "nugget-rating": ("nugget-rating", "rating", 0, 5),
    "qa": ("qa", "qa", 0, 1),
    "qa-verify": ("qa-verify", "yes-no", 0, 1),
    "embedding": ("embedding", "similarity", 0, 5),
    "thomas": ("thomas", "range", 0, 2),
    "fagb": ("fagb", "yes-no", 0, 1),
    "fagb-few": ("fagb-few", "yes-no", 0, 1),
    "helm": ("helm", "yes-no", 0, 1),
    "sun": ("sun", "yes-no", 0, 1),
    "sun-few": ("sun-few", "yes-no", 0, 1),
    "umbrela": ("umbrela", "range", 0, 3),
    "criteria": ("criteria", "range", 0, 3),
    "four-prompts": ("four-prompts", "range", 0, 3),
    "cot-relevant": ("cot-relevant", "range", 2, 3),
    "cot-nonrelevant": ("cot-nonrelevant", "range", 0, 1),
    "query-gen-query": ("query-gen-generate", "generated", 0, 0),
    "query-gen": ("query-gen", "range", 0, 3),
}
DIRECT = ("thomas", "fagb", "fagb-few", "helm", "sun", "sun-few", "umbrela")
MULTI_STEP = ("four-prompts", "four-prompts-cot", "query-gen")
INTERMEDIATE = ("criteria", "query-gen-query")
"""Steps whose grades feed a later step rather than labels of their own."""
ANSWER_METHODS = ("nugget-assign", "citation-support")
"""Methods graded on whole generated answers or their cited sentences (`proctor.grading.answers`)."""
METHOD_NAMES = ("self-rating", "nugget-rating", "qa", "embedding", *DIRECT, *MULTI_STEP)


@cache
def get_method(name: str) -> Method:
    """The method (or step) called `name`; unknown names are a usage error."""
    template, kind, low, high = _step(name)
    loaded = load_template(template)
    return Method(loaded.name, loaded, kind, low, high)


def method_scale(name: str) -> tuple[int, int]:
    """The grades (low, high) the method (or step) called `name` gives, its template left unread; unknown names
    are a usage error."""
    _, _, low, high = _step(name)
    return low, high


def _step(name: str) -> tuple[str, str, int, int]:
    """The step's template name, parser kind and scale; unknown names are a usage error."""
    if name not in _STEPS:
        raise UsageError(f"unknown method {name!r}; choose one of {', '.join(METHOD_NAMES)}")
    return _STEPS[name]


def user_method(path: str) -> Method:
    """A step with a user's template (same schema as the packaged ones; validated, versioned by content)."""
    template = load_template_file(path, tuple(_STEPS), lambda name: get_method(name).template)
    _, kind, low, high = _STEPS[template.name]
    low, high = template.extra.get("scale") or (low, high)
    return Method(template.name, template, template.extra.get("parser") or kind, low, high)


def steps_help() -> str:
    """One line per method for `--help`."""
    return ", ".join(METHOD_NAMES)


__all__ = ["ANSWER_METHODS", "user_method", "DIRECT", "INTERMEDIATE", "METHOD_NAMES", "MULTI_STEP", "Method",
           "Parsed", "get_method"]
