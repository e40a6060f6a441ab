"""What a grading method is: a prompt template kept as YAML data, and the parser that turns a reply into a
grade. Every parsed grade says how it was parsed (`status`)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from proctor.errors import InputError

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
        return _parts(self.template, question, tuple(variables.items()) if variables else ())


@lru_cache(maxsize=4096)
def _parts(template: str, question: str, variables: tuple[tuple[str, str], ...]) -> tuple[str, str]:
    """`Template.parts`, remembered: a question's prompt is the same for every passage of its query (DL19: 430
    questions, 92,600 pairs)."""
    before, _, after = template.partition("{context}")
    named = dict(variables)
    return fill(before, question, named), fill(after, question, named)


def fill(text: str, question: str, variables: dict[str, str] | None) -> str:
    """Replace `{question}` and every `{name}` of `variables` (other braces are left alone)."""
    text = text.replace("{question}", question)
    for name, value in (variables or {}).items():
        text = text.replace("{" + name + "}", value)
    return text


def load_template(name: str) -> Template:
    """Read a packaged template."""
    from importlib import resources  # with yaml, imported by the commands that read templates, not every command

    import yaml

    text = resources.files("proctor.methods").joinpath("templates", f"{name}.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    known = {"name", "version", "items", "source", "template", "max_tokens", "system"}
    return Template(**{k: v for k, v in data.items() if k in known},
                    extra={k: v for k, v in data.items() if k not in known})


PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_ ]*)\}")
ALWAYS = frozenset({"question", "context", "query", "criterion_name"})
PARSERS = {"rating": (0, 5), "qa": (0, 1), "yes-no": (0, 1), "range": (0, 5), "generated": (0, 0),
           "similarity": (0, 5)}
"""Parser kinds and the widest scale each can produce."""
_FIELDS = {"name", "version", "items", "source", "template", "max_tokens", "system", "parser", "scale",
           "criteria", "verify_template"}


def load_template_file(path: str, known_steps: tuple[str, ...], packaged: Callable[[str], Template]) -> Template:
    """A user's template file: the schema of the packaged templates; `name` says which step it replaces.
    Unknown fields or placeholders, a missing or unknown parser and a bad scale are refused (FILE: field).
    Its version is the declared one plus a digest of its content, so any edit makes a new prompt version."""
    import yaml

    from proctor.io.textfile import read_text

    text = read_text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(path, mark.line + 1 if mark else None, f"invalid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(path, 1, "expected a mapping (name, template, ...)")
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        raise InputError(path, _line(text, unknown[0]),
                         f"{unknown[0]}: unknown field (known: {', '.join(sorted(_FIELDS))})")
    name = data.get("name")
    if name not in known_steps:
        raise InputError(path, _line(text, "name"), f"name: {name!r} is not a method or step; it names the step the "
                         f"template replaces ({', '.join(known_steps)})")
    base = packaged(name)
    if not isinstance(data.get("template"), str) or not data["template"].strip():
        raise InputError(path, _line(text, "template"), "template: a non-empty text is required")
    allowed = ALWAYS | set(PLACEHOLDER.findall(base.template))
    for placeholder in PLACEHOLDER.findall(data["template"]):
        if placeholder not in allowed:
            raise InputError(path, _line(text, "template"), f"template: unknown placeholder {{{placeholder}}} "
                             f"(this step knows {', '.join('{' + p + '}' for p in sorted(allowed))})")
    _check_parser(path, text, data, base)
    if data.get("items", base.items) != base.items:
        raise InputError(path, _line(text, "items"), f"items: step {name} grades {base.items}s")
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:8]
    own = ("criteria", "verify_template", "parser", "scale")
    merged = {**base.extra, **{k: v for k, v in data.items() if k in own}}
    return Template(name=name, version=f"{data.get('version') or name}+{digest}", items=base.items,
                    source=str(data.get("source") or f"user template {path}"), template=data["template"],
                    max_tokens=int(data.get("max_tokens") or base.max_tokens),
                    system=data.get("system", base.system), extra={**merged, "user_template": str(path)})


def _check_parser(path: str, text: str, data: dict, packaged: Template) -> None:
    parser = data.get("parser", packaged.extra.get("parser"))
    if "parser" in data and parser not in PARSERS:
        raise InputError(path, _line(text, "parser"), f"parser: {parser!r} is not one of {', '.join(PARSERS)}")
    if "scale" in data:
        scale = data["scale"]
        ok = (isinstance(scale, list) and len(scale) == 2 and all(isinstance(v, int) for v in scale)
              and scale[0] < scale[1])
        widest = PARSERS.get(parser or "", (0, 5))
        if not ok or scale[0] < widest[0] or scale[1] > widest[1]:
            raise InputError(path, _line(text, "scale"), f"scale: expected [low, high] integers with low < high "
                             f"within {list(widest)}")
    if data.get("max_tokens") is not None and (not isinstance(data["max_tokens"], int) or data["max_tokens"] < 1):
        raise InputError(path, _line(text, "max_tokens"), "max_tokens: a positive integer")


def _line(text: str, key: str) -> int | None:
    for n, line in enumerate(text.splitlines(), start=1):
        if line.startswith(f"{key}:"):
            return n
    return None
