"""Which model and endpoint the judge grades with: Proctor's settings (`llm`, `base_url`) first, then an LLM
configuration file as the AutoJudge starter kit's `llm-config.yml` (`llm_config_file`: `base_url`, `model`,
`model_preferences` — the first model the endpoint lists wins — and `on_no_match`), then AutoJudge's own
configuration (`OPENAI_BASE_URL`, `OPENAI_MODEL`, `OPENAI_API_KEY`, as its runner reads them). Where its
replies are cached (the track's prompt-cache contract): the file's `cache_dir` and `force_refresh`, else
AutoJudge's `llm_config.cache_dir` (`CACHE_DIR`) and `CACHE_FORCE_REFRESH`, as minima-llm reads them."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from proctor.errors import InputError, UsageError

ON_NO_MATCH = ("use_default", "error")
KEYS = ("base_url", "model", "model_preferences", "on_no_match", "cache_dir", "force_refresh")
TRUE, FALSE = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")
"""How `CACHE_FORCE_REFRESH` may be spelled (minima-llm reads an integer: 0 off, any other on)."""


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
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise InputError(str(path), None, f"unknown keys {unknown} (known: {', '.join(KEYS)}; the API key comes "
                         "from OPENAI_API_KEY only)")
    if not isinstance(data.get("cache_dir", ""), str):
        raise InputError(str(path), None, "cache_dir: a folder name")
    if not isinstance(data.get("force_refresh", False), bool):
        raise InputError(str(path), None, "force_refresh: true or false")
    prefs = data.get("model_preferences") or []
    if not isinstance(prefs, list) or not all(isinstance(m, str) and m for m in prefs):
        raise InputError(str(path), None, "model_preferences: a list of model names")
    if data.get("on_no_match", "use_default") not in ON_NO_MATCH:
        raise InputError(str(path), None, f"on_no_match: one of {', '.join(ON_NO_MATCH)}")
    return data


def resolve(path: str | None, model: str | None, base_url: str | None, record: Path, cache_dir: str | None = None
            ) -> tuple[str | None, str | None]:
    """(model, base_url) after the configuration file, over AutoJudge's environment configuration. The model
    chosen from `model_preferences` is recorded in `record` (in `cache_dir` when given: `choice_record`); a
    later run that cannot list the endpoint's models (the endpoint down: a replay from the store or the response
    cache) uses the recorded choice, and says so."""
    if not path:
        return model, base_url
    config = read_config(path)
    base_url = config.get("base_url") or base_url
    model = config.get("model") or model
    prefs = config.get("model_preferences") or []
    if not prefs:
        return model, base_url
    record = choice_record(cache_dir, prefs, record)
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
        _record(record, {"model_preferences": prefs, "model": chosen, "base_url": base_url})
        return chosen, base_url
    if config.get("on_no_match", "use_default") == "error":
        raise UsageError(f"{path}: none of the model_preferences {prefs} is served at {base_url} "
                         f"(it lists {', '.join(sorted(listed)) or 'none'}), and on_no_match is error")
    return model, base_url


def _record(path: Path, choice: dict[str, Any]) -> None:
    """Write the model choice whole or not at all (judges may share the cache folder), creating the folder."""
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part.write_text(json.dumps(choice) + "\n")
        os.replace(part, path)
    except OSError as e:
        raise UsageError(f"cannot record the model choice in {path}: {e.strerror}") from None


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


def cache_choice(path: str | None, cache_dir: Any) -> tuple[str | None, bool]:
    """(response cache folder, force refresh): the configuration file's `cache_dir` / `force_refresh`, else
    AutoJudge's `llm_config.cache_dir` (`cache_dir`; the runner reads `CACHE_DIR`) or `CACHE_DIR` itself (else
    `LLM_CACHE_DIR`, as autojudge-base 1.0.0 reads them), and `CACHE_FORCE_REFRESH`. No folder: the store in
    --out-dir is the cache, as always (refreshing is ignored)."""
    config = read_config(path) if path else {}
    folder = config.get("cache_dir") or (str(cache_dir) if cache_dir else None) or os.environ.get("CACHE_DIR")\
        or os.environ.get("LLM_CACHE_DIR") or None  # autojudge_base/llm_config.py:54 reads both, in this order
    refresh = config["force_refresh"] if "force_refresh" in config else _flag("CACHE_FORCE_REFRESH")
    if refresh and not folder:
        print("[proctor] CACHE_FORCE_REFRESH (force_refresh) without CACHE_DIR (cache_dir): no response cache to "
              "refresh; ignored (the store in --out-dir resumes what it holds)", file=sys.stderr)
    return folder, refresh and bool(folder)


def _flag(name: str) -> bool:
    """An environment variable as on/off; anything else is refused naming it."""
    value = os.environ.get(name, "").strip().lower()
    if value in TRUE or value in FALSE:
        return value in TRUE
    try:
        return int(value) != 0
    except ValueError:
        raise UsageError(f"{name}={os.environ[name]!r}: 1 (on) or 0 (off)") from None


def choice_record(folder: str | None, prefs: list[str], fallback: Path) -> Path:
    """Where the model chosen from `model_preferences` is recorded: in the response cache folder when there is
    one (a fresh --out-dir replays it there), one file per list of preferences; else beside the store."""
    if not folder:
        return fallback
    digest = hashlib.sha256(json.dumps(prefs).encode()).hexdigest()[:16]
    return Path(folder) / f"proctor-model-choice-{digest}.json"
