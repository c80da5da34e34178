# Taskyard developer entry points. See docs/development.md.
#
#   make install     Python deps (editable, with [dev]) + buf from npm
#   make gen         regenerate clients/ from protos/
#   make test        every check, then the whole test suite (what CI runs)
#   make test-fast   the test suite only
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
BUF ?= node_modules/.bin/buf
# Per-test limit (pytest-timeout); a hung test fails alone and the run goes on.
PYTEST_TIMEOUT ?= 120
# pytest arguments, e.g. make test-fast PYTEST_ARGS='tests/unit -k lanes -x'
# (none: everything under tests/, the testpaths of pyproject.toml)
PYTEST_ARGS ?=
PYTEST := $(PYTHON) -m pytest -p no:cacheprovider --timeout=$(PYTEST_TIMEOUT)
# Hand-written Python checked by mypy --strict (tests leniently, see pyproject.toml).
TYPECHECK_PATHS := services clients/python/taskyard/client tests \
	$(if $(shell find bench -name '*.py' 2>/dev/null | head -n1),bench)
BENCH_SCRIPTS := bench/throughput bench/latency bench/rss

.PHONY: help install gen gen-check lint lint-py lint-proto format typecheck breaking \
	test test-fast dev bench clean tools

help:
	@echo "make install    pip install -e '.[dev]' and npm ci (buf)"
	@echo "make gen        regenerate clients/ from protos/"
	@echo "make gen-check  fail when committed generated code is stale"
	@echo "make lint       ruff (Python) + buf lint (protos)"
	@echo "make format     ruff format + ruff check --fix"
	@echo "make typecheck  mypy --strict on hand-written code"
	@echo "make breaking   buf breaking (FILE) against the previous protos"
	@echo "make test       lint, typecheck, gen-check, breaking, then pytest (CI)"
	@echo "make test-fast  pytest only (PYTEST_ARGS=... to narrow)"
	@echo "make dev        run the whole suite locally (taskyard dev)"
	@echo "make bench      throughput and latency benchmarks"

install:
	$(PYTHON) -m pip install -e '.[dev]'
	npm ci --no-audit --no-fund

$(BUF):
	npm ci --no-audit --no-fund

gen:
	PYTHON=$(PYTHON) tools/gen.sh

gen-check:
	PYTHON=$(PYTHON) tools/gen-check.sh

lint: lint-py lint-proto

# The bench scripts have no .py suffix (they are commands): name them explicitly.
BENCH_COMMANDS := $(BENCH_SCRIPTS) bench/store_writes bench/chaos bench/seal bench/compare bench/db_work

lint-py:
	$(PYTHON) -m ruff check . $(BENCH_COMMANDS)
	$(PYTHON) -m ruff format --check . $(BENCH_COMMANDS)

lint-proto: $(BUF)
	$(BUF) lint
	@echo "buf lint: ok"

format:
	$(PYTHON) -m ruff format .
	$(PYTHON) -m ruff check --fix .

typecheck:
	$(PYTHON) -m mypy $(TYPECHECK_PATHS)
	@for script in $(BENCH_COMMANDS); do MYPYPATH=bench $(PYTHON) -m mypy "$$script" | tail -n 1; done

breaking: $(BUF)
	BUF=$(BUF) tools/breaking.sh

# Every check runs even when an earlier one fails, so one run shows everything;
# pytest runs last so its summary is the last thing printed.
# Installs what is missing first (quick when everything is there), so it works on a fresh clone.
test: tools
	@failed=""; \
	for check in lint typecheck gen-check breaking; do \
	  echo "=== make $$check"; \
	  if ! $(MAKE) --no-print-directory $$check; then failed="$$failed $$check"; fi; \
	done; \
	if [ -n "$$failed" ]; then echo "=== checks FAILED:$$failed (running the tests anyway)"; \
	else echo "=== checks passed: lint typecheck gen-check breaking"; fi; \
	echo "=== make test-fast"; \
	rc=0; $(MAKE) --no-print-directory test-fast || rc=$$?; \
	if [ -n "$$failed" ] && [ $$rc -eq 0 ]; then rc=1; fi; \
	exit $$rc

# pytest exits 5 when it collected no test: that is a failure here, never a pass.
test-fast:
	@rc=0; $(PYTEST) $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; \
	exit $$rc

dev:
	@tools/install-tools.sh python
	taskyard dev

# Python deps, buf (npm), grpcurl (go), PostgreSQL server binaries: each skipped when present.
tools:
	@tools/install-tools.sh python npm grpcurl postgres

bench:
	@for script in $(BENCH_SCRIPTS); do \
	  if [ ! -f "$$script" ]; then echo "bench: $$script does not exist yet" >&2; exit 1; fi; \
	  echo "=== $$script"; "$$script"; \
	done

clean:
	find . -name __pycache__ -type d -not -path './node_modules/*' -prune -exec rm -rf {} +
	rm -rf .mypy_cache .ruff_cache .pytest_cache build dist
