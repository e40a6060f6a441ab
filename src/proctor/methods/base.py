"""What a grading method is: a prompt template kept as YAML data, and the parser that turns a reply into a
grade. Every parsed grade says how it was parsed (`status`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

NUMBER = "number"          # a standalone grade was found in the reply
DISTRIBUTION = "distribution"  # read from the probabilities of the grade tokens
UNANSWERABLE = "unanswerable"  # no number; an unanswerability expression → 0
DEFAULTED = "defaulted"    # no number, some other text → the papers' default
CORRECT = "correct"        # QA: the answer matches the answer key
WRONG = "wrong"            # QA: the answer does not match, or is ill-formed/unanswerable
ANSWERED = "answered"      # QA without an answer key: an answer was given
SIMILARITY = "similarity"  # embedding: graded by cosine similarity
PREFILTERED = "prefiltered"  # below the pre-filter similarity: grade 0 without an LLM call
FAILED = "failed"          # nothing usable: empty reply, backend error, no recorded grade


@dataclass(frozen=True)
class Parsed:
    """A reply's grade (None when failed), how it was parsed, and the extracted answer if any."""

    grade: int | None
    status: str
    answer: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Template:
    """A prompt template loaded from `proctor/methods/templates/NAME.yaml`."""

    name: str
    version: str
    items: str
    source: str
    template: str
    max_tokens: int = 32
    system: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def render(self, question: str, context: str, variables: dict[str, str] | None = None) -> str:
        """The prompt with the question, other variables and the (already fitted) context filled in."""
        before, after = self.parts(question, variables)
        return before + (context if "{context}" in self.template else "") + after

    def parts(self, question: str, variables: dict[str, str] | None = None) -> tuple[str, str]:
        """The prompt before and after the context, everything else filled in (for fitting the context)."""
        before, _, after = self.template.partition("{context}")
        return fill(before, question, variables), fill(after, question, variables)


def fill(text: str, question: str, variables: dict[str, str] | None) -> str:
    """Replace `{question}` and every `{name}` of `variables` (other braces are left alone)."""
    text = text.replace("{question}", question)
    for name, value in (variables or {}).items():
        text = text.replace("{" + name + "}", value)
    return text


def load_template(name: str) -> Template:
    """Read a packaged template."""
    text = resources.files("proctor.methods").joinpath("templates", f"{name}.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    known = {"name", "version", "items", "source", "template", "max_tokens", "system"}
    return Template(**{k: v for k, v in data.items() if k in known},
                    extra={k: v for k, v in data.items() if k not in known})
