# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-slow test-browser test-all lint bench readme-screenshot clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/canasta serve

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-logo
	$(BIN)/mypy

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-logo
	$(BIN)/mypy
	$(BIN)/pytest -q

# The slow soak runs only (CI runs them after `make test`).
test-slow: $(STAMP)
	$(BIN)/pytest -q -m slow || [ $$? -eq 5 ]

# The web table in a real browser: Debian's Chromium (apt-get install chromium
# chromium-headless-shell; .ci/run installs it). Screenshots go to out/browser/.
test-browser: $(STAMP)
	$(BIN)/pytest -q -m browser tests/browser

# docs/table.png, the README's screenshot, from a browser test's game.
readme-screenshot: $(STAMP)
	CANASTA_README_SCREENSHOT=docs/table.png $(BIN)/pytest -q -m browser tests/browser -k whole_game

# Everything, soak runs and browser tests included.
test-all: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-logo
	$(BIN)/mypy
	$(BIN)/pytest -q -m ''

bench: $(STAMP)
	$(BIN)/canasta bench engine

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .import_linter_cache
