"""Read human-editable banks (YAML). Writing banks (YAML and both workbench formats) is `proctor.bank.manual`'s.

```yaml
bank: my-rubric                 # optional name
queries:
  - query_id: "q1"
    query_text: how do bees make honey
    facet_id: null              # optional (CAR subtopics)
    questions:
      - text: What do bees collect from flowers?
        answers: [nectar]       # optional gold answers
      - text: Which part of the flower produces nectar?
        choices: {A: petal, B: nectary, C: stem}   # optional multiple-choice options (TQA style)
        correct: B                                 # the correct option; its text counts as a gold answer
    nuggets:
      - text: Bees evaporate water from nectar
        importance: vital       # optional: vital or okay (AutoNuggetizer)
      - text: Are bees insects?
        spurious: true          # optional: marked spurious by a reviewer (kept, never graded or counted)
```
Ids are computed as the workbench does (`query[/facet]/md5(text)`) unless an item gives `id`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from proctor.errors import InputError
from proctor.io.banks import Bank, check_importance
from proctor.io.fields import optional_text, record_id
from proctor.io.ids import item_id
from proctor.io.textfile import read_text


def read_yaml_bank(path: str | Path) -> Bank:
    """Parse a YAML bank; problems name the file and (where YAML knows it) the line."""
    text = read_text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(str(path), mark.line + 1 if mark else None, f"invalid YAML: {exc.problem or exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("queries"), list):
        raise InputError(str(path), 1, f"expected a mapping with a list under `queries`, found {_found(data)}; the "
                         f"shape: {SHAPE} (docs/banks.md has a complete example)")
    lines = _node_lines(text)
    bank = Bank(info={"format": "proctor-yaml", **({"name": data["bank"]} if data.get("bank") else {})})
    for index, query in enumerate(data["queries"]):
        where = f"queries[{index}]"
        if not isinstance(query, dict) or query.get("query_id") is None:
            raise InputError(str(path), lines.get(where), f"{where}: needs a query_id (found {_found(query)}); "
                             f"each entry of `queries`: {QUERY_SHAPE}")
        qid, facet = record_id(path, None, query["query_id"], "query"), query.get("facet_id")
        if optional_text(query.get("query_text")) is not None and facet is None:
            bank.query_texts.setdefault(qid, query["query_text"])
        for kind, key in (("question", "questions"), ("nugget", "nuggets")):
            for n, item in enumerate(query.get(key) or []):
                try:
                    bank.questions.append(_item(path, f"{where}.{key}[{n}]", qid, facet, kind, item, bank))
                except InputError as exc:  # the item's line, from YAML's own node marks
                    raise InputError(str(path), exc.line or lines.get(f"{where}.{key}[{n}]"), exc.message) from None
    return bank


SHAPE = ("`queries: [{query_id: q1, query_text: ..., questions: [{text: ..., answers: [...]}], "
         "nuggets: [{text: ..., importance: vital}]}]`")
QUERY_SHAPE = "`{query_id: q1, query_text: ..., facet_id: (optional), questions: [...], nuggets: [...]}`"


def _found(value: Any) -> str:
    """What stands where a mapping was expected, in a few words."""
    if isinstance(value, dict):
        keys = ", ".join(map(str, list(value)[:6]))
        return f"a mapping with keys {keys}" if keys else "an empty mapping"
    if isinstance(value, list):
        return f"a list of {len(value)} entries (put it under `queries:`)"
    return "nothing" if value is None else f"{type(value).__name__} {str(value)[:40]!r}"


def _node_lines(text: str) -> dict[str, int]:
    """The line of every node by its path (`queries[0].questions[2]`), from YAML's own marks."""
    out: dict[str, int] = {}

    def walk(node: Any, where: str) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                inner = f"{where}.{key.value}" if where else str(key.value)
                out[inner] = value.start_mark.line + 1
                walk(value, inner)
        elif isinstance(node, yaml.SequenceNode):
            for n, value in enumerate(node.value):
                out[f"{where}[{n}]"] = value.start_mark.line + 1
                walk(value, f"{where}[{n}]")

    walk(yaml.compose(text, Loader=yaml.SafeLoader), "")
    return out


def _item(path, where: str, qid: str, facet: Any, kind: str, item: Any, bank: Bank) -> dict[str, Any]:
    if isinstance(item, str):
        item = {"text": item}
    if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
        raise InputError(str(path), None, f"{where}: needs a non-empty `text`")
    text = item["text"].strip()
    answers = item.get("answers")
    if isinstance(answers, str):
        answers = [answers]
    answers = list(answers or [])
    info: dict[str, Any] = {}
    if item.get("choices") is not None:
        choices = item["choices"]
        if not isinstance(choices, dict):
            raise InputError(str(path), None, f"{where}: `choices` must map option keys to texts")
        info["choices"] = {str(k): str(v) for k, v in choices.items()}
        if item.get("correct") is not None:
            key = str(item["correct"])
            if key not in info["choices"]:
                raise InputError(str(path), None, f"{where}: `correct` {key!r} is not one of the choices")
            info["correct"] = key
            answers.append(info["choices"][key])
    importance = check_importance(path, None, item.get("importance"), where)
    if importance:
        info["importance"] = importance
    if item.get("spurious") not in (None, False, True):
        raise InputError(str(path), None, f"{where}: `spurious` must be true or false (got {item['spurious']!r})")
    if item.get("spurious"):
        info["spurious"] = True  # kept in the bank, never graded or counted (see io.banks.is_spurious)
    identifier = record_id(path, None, item.get("id") or item_id(qid, text, str(facet) if facet else None), kind)
    if identifier in bank.lines:
        raise InputError(str(path), None, f"{where}: id {identifier!r} appears twice")
    bank.lines[identifier] = 1
    return {"question_id": identifier, "query_id": qid, "facet_id": str(facet) if facet else None, "kind": kind,
            "text": text, "answers": sorted(set(answers)) or None, "info": info or None}


