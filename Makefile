# Proctor — set-up and everyday commands. Only Python 3.11 and the package registries are needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.proctor-installed

.PHONY: install test demo lint bench clean

install: $(STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall only when the package metadata changes (the install is editable: code changes need nothing).
# torch is installed first, pinned, so that nothing pulls a multi-GB build.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet 'torch==2.13.0'
	$(BIN)/python -m pip install --quiet -e '.[test,embed,hf]'
	touch $(STAMP)

test: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest

demo: install
	$(BIN)/proctor demo

lint: install
	$(BIN)/ruff check src tests benchmarks

bench: install
	$(BIN)/python benchmarks/bench_foundation.py
	$(BIN)/python benchmarks/bench_analyze.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
