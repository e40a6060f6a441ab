"""Which model and endpoint the judge grades with: Proctor's settings (`llm`, `base_url`) first, then an LLM
configuration file as the AutoJudge starter kit's `llm-config.yml` (`llm_config_file`: `base_url`, `model`,
`model_preferences` — the first model the endpoint lists wins — and `on_no_match`), then AutoJudge's own
configuration (`OPENAI_BASE_URL`, `OPENAI_MODEL`, `OPENAI_API_KEY`, as its runner reads them)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from proctor.errors import InputError, UsageError

ON_NO_MATCH = ("use_default", "error")


def read_config(path: str | Path) -> dict[str, Any]:
    """The LLM configuration file, checked: a mapping with known keys and a list of model names."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except OSError as e:
        raise UsageError(f"workflow setting llm_config_file: cannot read {path}: {e.strerror}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise InputError(str(path), mark.line + 1 if mark else None, f"not YAML: {e}") from None
    if not isinstance(data, dict):
        raise InputError(str(path), None, "expected a mapping (base_url, model, model_preferences, on_no_match)")
    unknown = sorted(set(data) - {"base_url", "model", "model_preferences", "on_no_match"})
    if unknown:
        raise InputError(str(path), None, f"unknown keys {unknown} (known: base_url, model, model_preferences, "
                         "on_no_match; the API key comes from OPENAI_API_KEY only)")
    prefs = data.get("model_preferences") or []
    if not isinstance(prefs, list) or not all(isinstance(m, str) and m for m in prefs):
        raise InputError(str(path), None, "model_preferences: a list of model names")
    if data.get("on_no_match", "use_default") not in ON_NO_MATCH:
        raise InputError(str(path), None, f"on_no_match: one of {', '.join(ON_NO_MATCH)}")
    return data


def resolve(path: str | None, model: str | None, base_url: str | None, record: Path
            ) -> tuple[str | None, str | None]:
    """(model, base_url) after the configuration file, over AutoJudge's environment configuration. The model
    chosen from `model_preferences` is recorded in `record`; a later run that cannot list the endpoint's models
    (the endpoint down: a replay from the store) uses the recorded choice, and says so."""
    if not path:
        return model, base_url
    config = read_config(path)
    base_url = config.get("base_url") or base_url
    model = config.get("model") or model
    prefs = config.get("model_preferences") or []
    if not prefs:
        return model, base_url
    try:
        listed = served_models(base_url)
    except UsageError as e:
        recorded = json.loads(record.read_text()) if record.is_file() else {}
        if recorded.get("model_preferences") != prefs:
            raise
        print(f"[proctor] {e}; using the model chosen on the first run: {recorded['model']} ({record})",
              file=sys.stderr)
        return recorded["model"], base_url
    chosen = next((m for m in prefs if m in listed), None)
    if chosen is not None:
        record.write_text(json.dumps({"model_preferences": prefs, "model": chosen, "base_url": base_url}) + "\n")
        return chosen, base_url
    if config.get("on_no_match", "use_default") == "error":
        raise UsageError(f"{path}: none of the model_preferences {prefs} is served at {base_url} "
                         f"(it lists {', '.join(sorted(listed)) or 'none'}), and on_no_match is error")
    return model, base_url


def served_models(base_url: str | None) -> set[str]:
    """The models an OpenAI-compatible endpoint lists (GET /models)."""
    import openai

    if not base_url:
        raise UsageError("model_preferences need an endpoint: set OPENAI_BASE_URL or base_url in the file")
    client = openai.OpenAI(base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY") or "none", max_retries=1,
                           timeout=30)
    try:
        return {m.id for m in client.models.list()}
    except openai.OpenAIError as e:
        raise UsageError(f"model_preferences: cannot list the models at {base_url}: {e}") from None
    finally:
        client.close()
