# `make run` and `make test` each set up their own virtual environment first, so both work
# on a fresh clone. PYTHON must be 3.11 or newer.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
WORKERS ?= 2

.PHONY: setup run test test-quick lint bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

run: setup
	$(BIN)/taskforge generate recipes/quickstart.yaml --out out --workers $(WORKERS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/lint-imports

# Every test (CI runs this). The slowest are listed at the end, to keep `slow` marks honest.
test: setup lint
	$(BIN)/python -m pytest -q --durations=25

# The quick loop: everything not marked `slow` (no end-to-end runs of real suites).
test-quick: setup lint
	$(BIN)/python -m pytest -q -m "not slow"

clean:
	rm -rf $(VENV) out
