"""How user-facing text cites the papers Proctor implements (author, year and short title; the files are
listed in ../shared/papers/README.md). Docstrings and docs may use the file numbers 000–004 of that list."""

EXAM = "Sander & Dietz 2021 (EXAM)"  # 001
EXAM_PP = "Farzi & Dietz 2024 (EXAM++)"  # 000
FOUR_PROMPTS = "Farzi & Dietz 2024 (Best in Tau@LLMJudge)"  # 002
RUBRIC = "Farzi & Dietz 2024 (RUBRIC)"  # 003
FLAN_T5_EXAM = "Farzi & Dietz 2024 (FLAN-T5-EXAM)"  # 004
