"""Question banks (phase 1): generation with an LLM, human-editable files, versions, diffs and impact."""
