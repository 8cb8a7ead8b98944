# One command per chore; CI runs `make test`. Each target creates and fills .venv when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYPI_VERIFIERS := 0.4.0

.PHONY: setup system-deps demo test lint format bench docs screenshots clean reset

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip uninstall --quiet --yes arbiter 2>/dev/null || true  # the distribution's old name
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# PyPI's unrelated `verifiers` (tests/test_installed.py installs Arbiter's wheel beside it, offline)
	$(BIN)/python -m pip download --quiet --no-deps --dest $(VENV)/wheels 'verifiers==$(PYPI_VERIFIERS)'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/arbiter demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

system-deps:
	.ci/system-deps.sh

test: lint system-deps
	$(BIN)/pytest -n 2 --dist loadgroup

bench: $(STAMP)
	$(BIN)/python bench/run.py

# The documentation site (mkdocs.yml) into build/docs/ (git-ignored), strict: a broken link or a missing page
# fails. The reference pages are generated from the code as it builds.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/docs

# The review desk at 1366x768 in Debian's Chromium (docs/screenshots/, shown in the README), from the
# browser tests of the corrections, and the Metrics page over `arbiter demo --trust` (its full size: a few minutes).
screenshots: $(STAMP) system-deps
	ARBITER_SHOTS=docs/screenshots $(BIN)/pytest tests/test_browser_corrections.py tests/test_browser_metrics.py -q

# Files a run can rebuild; the database (output/arbiter.db: accounts, reviews, ground-truth history) stays.
clean:
	rm -rf output/bundles output/agent_outputs output/sme_packets output/ground_truth output/runs output/index output/cache

# Start over: everything under output/, the database and its accounts included; output/README.md is tracked
# and stays.
reset:
	if [ -d output ]; then find output -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +; fi
