# Taskyard developer entry points. See docs/development.md.
#
#   make install     Python deps (editable, with [dev]) into .venv/ + buf from npm
#   make dev         the whole suite on this machine (installs only .[embedded] first)
#   make gen         regenerate clients/ from protos/
#   make clients     build the Go, TypeScript and Java clients (and run their unit tests)
#   make test        every check, then the whole test suite (what CI runs)
#   make test-fast   the test suite only
#
# Python runs from the project virtualenv .venv/, made and kept current (re-installed
# when pyproject.toml is newer than its install stamp) by tools/install-tools.sh:
# with .[dev] for every target but dev, which needs only .[embedded] (pyproject.toml).
# PYTHON=python3 make ... runs another interpreter instead, as it is.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV_PYTHON := $(CURDIR)/.venv/bin/python
VENV_STAMP := .venv/.taskyard-installed
# make dev's lighter install (.[embedded]); an install of .[dev] writes it too.
VENV_STAMP_EMBEDDED := .venv/.taskyard-installed-embedded
# Absolute: tools/gen.sh runs it from another directory.
PYTHON ?= $(VENV_PYTHON)
# What a target that runs $(PYTHON) needs first: the venv, when PYTHON is the venv's.
PYTHON_READY := $(if $(filter $(VENV_PYTHON),$(PYTHON)),$(VENV_STAMP))
PYTHON_READY_EMBEDDED := $(if $(filter $(VENV_PYTHON),$(PYTHON)),$(VENV_STAMP_EMBEDDED))
# grpcurl (tools/install-tools.sh grpcurl) and, as in an activated venv, the venv's
# commands (taskyard) come first on PATH for everything make runs.
TOOLS_BIN := $(CURDIR)/.tools/bin
export PATH := $(TOOLS_BIN):$(if $(PYTHON_READY),$(CURDIR)/.venv/bin:)$(PATH)
BUF ?= node_modules/.bin/buf
# Per-test limit (pytest-timeout); a hung test fails alone and the run goes on.
PYTEST_TIMEOUT ?= 120
# pytest arguments, e.g. make test-fast PYTEST_ARGS='tests/unit -k lanes -x'
# (none: everything under tests/, the testpaths of pyproject.toml)
PYTEST_ARGS ?=
# Test processes (pytest-xdist): every test has its own database, ports and temp dirs, so
# they run side by side; loadgroup keeps a module marked xdist_group on one process (the
# client conformance module shares one live suite). PYTEST_WORKERS=0: one process.
# Three on two cores: the real-cluster tests wait on their services much of the time
# (CPU 18-44 % idle with two); a clean-clone CI's tests took 17:31 with three against
# 19:31 and 21:46 with two, the same afternoon. Four were no faster (14:24 against 13:06
# and 13:53 with three, one evening) and loaded the machine past what the flow chaos
# schedule's timing check allows.
PYTEST_WORKERS ?= 3
# --durations: the slowest tests at the end of every run, to keep CI short.
PYTEST := $(PYTHON) -m pytest -p no:cacheprovider --timeout=$(PYTEST_TIMEOUT) --durations=15 \
	-n $(PYTEST_WORKERS) --dist loadgroup
# mypy's cache outside the checkout, so a fresh clone (CI) checks only what differs from
# the last check on this machine: 30 s to 2. mypy takes a cached module only when its
# file's hash is the one it checked.
export MYPY_CACHE_DIR ?= $(HOME)/.cache/taskyard/mypy
# Hand-written Python checked by mypy --strict (tests leniently, see pyproject.toml).
TYPECHECK_PATHS := services clients/python/taskyard/client tests tools/validate_manifests.py \
	$(if $(shell find bench -name '*.py' 2>/dev/null | head -n1),bench)
BENCH_SCRIPTS := bench/throughput bench/latency bench/rss

.PHONY: help install gen gen-check lint lint-py lint-proto format typecheck breaking helm-check k8s-manifests \
	test test-fast test-unit test-integration test-acceptance readme screenshots dev bench clean tools \
	codegen clients clients-go clients-typescript clients-java

help:
	@echo "make install    pip install -e '.[dev]' into .venv/ and npm ci (buf)"
	@echo "make gen        regenerate clients/ from protos/"
	@echo "make gen-check  fail when committed generated code is stale"
	@echo "make clients    build the Go, TypeScript and Java clients, run their unit tests"
	@echo "make lint       ruff (Python) + buf lint (protos)"
	@echo "make format     ruff format + ruff check --fix"
	@echo "make typecheck  mypy --strict on hand-written code"
	@echo "make breaking   buf breaking (FILE) against the previous protos"
	@echo "make helm-check lint the Helm chart, validate what it renders, check deploy/k8s/taskyard.yaml is fresh"
	@echo "make k8s-manifests  regenerate deploy/k8s/taskyard.yaml from the chart"
	@echo "make test       lint, typecheck, gen-check, breaking, then pytest (CI)"
	@echo "make test-fast  pytest only (PYTEST_ARGS=... to narrow)"
	@echo "make test-unit | test-integration | test-acceptance   one tier of tests"
	@echo "make readme     rewrite the README's grpcurl session from a live run"
	@echo "make screenshots rewrite docs/images/dashboard-*.png from the dashboard's browser tests"
	@echo "make dev        run the whole suite locally (taskyard dev; installs only .[embedded]), grpcurl in .tools/bin"
	@echo "make bench      throughput and latency benchmarks"

# Always re-installs (the stamp goes first); otherwise the venv is made only when missing.
install:
	rm -f $(VENV_STAMP)
	PYTHON=$(PYTHON) tools/install-tools.sh python
	npm ci --no-audit --no-fund

# Made, or re-installed, when missing or older than pyproject.toml.
$(VENV_STAMP): pyproject.toml
	@PYTHON=$(PYTHON) tools/install-tools.sh python

# make dev's: the services, the CLI and the embedded PostgreSQL only (a venv that has
# .[dev] keeps it: the script re-installs .[dev] there).
$(VENV_STAMP_EMBEDDED): pyproject.toml
	@PYTHON=$(PYTHON) tools/install-tools.sh python-embedded

$(BUF):
	npm ci --no-audit --no-fund

gen: $(PYTHON_READY) codegen
	PYTHON=$(PYTHON) tools/gen.sh

gen-check: $(PYTHON_READY) codegen
	PYTHON=$(PYTHON) tools/gen-check.sh

# The generators of buf.gen.yaml (pinned; quick when present).
codegen:
	@tools/install-tools.sh npm codegen

# The other languages' clients, as `make test` and tests/acceptance/test_client_conformance.py
# need them: the Go runner and example in clients/go/bin, TypeScript's dist/, Java's jar and
# classpath file. In parallel (make -j3 clients): each is one toolchain's build.
clients: clients-go clients-typescript clients-java

clients-go:
	cd clients/go && test -z "$$(gofmt -l .)" || { gofmt -l . >&2; echo "gofmt: files above not formatted" >&2; exit 1; }
	cd clients/go && go vet ./... && go test ./... && go build -o bin/conformance ./cmd/conformance && go build -o bin/conformance-worker ./cmd/conformance-worker && go build -o bin/bench-worker ./cmd/bench-worker
	cd clients/go && go build -o bin/chaos-worker ./cmd/chaos-worker
	cd clients/go/examples && go vet ./... && go build -o ../bin/add ./add

clients-typescript:
	cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error && npm run build && npm test

clients-java:
	cd clients/java && mvn -q -B package dependency:build-classpath -Dmdep.outputFile=target/classpath.txt

lint: lint-py lint-proto

# The bench scripts have no .py suffix (they are commands): name them explicitly.
BENCH_COMMANDS := $(BENCH_SCRIPTS) bench/store_writes bench/chaos bench/seal bench/compare bench/db_work bench/floor \
	bench/watch bench/dashboard bench/scaling bench/fairness bench/flow bench/load bench/breaker bench/tenants bench/workers \
	bench/eta bench/pool_start

lint-py: $(PYTHON_READY)
	$(PYTHON) -m ruff check . $(BENCH_COMMANDS)
	$(PYTHON) -m ruff format --check . $(BENCH_COMMANDS)

lint-proto: $(BUF)
	$(BUF) lint
	@echo "buf lint: ok"

format: $(PYTHON_READY)
	$(PYTHON) -m ruff format .
	$(PYTHON) -m ruff check --fix .

typecheck: $(PYTHON_READY)
	$(PYTHON) -m mypy $(TYPECHECK_PATHS)
	@# Each script as the module of its name (not all as __main__), so one run checks them all.
	MYPYPATH=bench $(PYTHON) -m mypy --scripts-are-modules $(BENCH_COMMANDS)

breaking: $(BUF)
	BUF=$(BUF) tools/breaking.sh

# The Helm chart (deploy/helm/taskyard): helm lint with the default and the example
# values, then every manifest rendered with them (and with deploy/helm/values-k8s.yaml)
# validated against Kubernetes' own schemas by kubernetes-validate --strict, offline
# (tools/validate_manifests.py: the custom resources it names, ServiceMonitor and the
# Gateway API routes, have no schema there and are checked by tests/unit/test_helm_exposure.py);
# the chart renders with helm's default Kubernetes version too (a plain `helm template`,
# no --kube-version); last, deploy/k8s/taskyard.yaml must be what `make k8s-manifests` writes.
HELM := $(TOOLS_BIN)/helm
CHART := deploy/helm/taskyard
# The Kubernetes version the chart is rendered for and validated against.
KUBE_VERSION ?= 1.31.0
CHART_VALUES := deploy/helm/examples/values-production.yaml deploy/helm/examples/values-gateway-api.yaml \
	deploy/helm/values-k8s.yaml
K8S_MANIFESTS := deploy/k8s/taskyard.yaml
# The plain manifests: the chart rendered for release "taskyard" with values-k8s.yaml.
define render_k8s_manifests
	{ printf '%s\n' '# Generated by `make k8s-manifests` from deploy/helm/taskyard with deploy/helm/values-k8s.yaml:' \
	    '# do not edit; change the chart or those values. Usage: deploy/README.md, docs/kubernetes.md.'; \
	  $(HELM) template taskyard $(CHART) --kube-version $(KUBE_VERSION) -f deploy/helm/values-k8s.yaml; }
endef

helm-check: $(PYTHON_READY)
	@tools/install-tools.sh helm
	$(HELM) lint --strict $(CHART) --kube-version $(KUBE_VERSION)
	@for values in $(CHART_VALUES); do \
	  echo "$(HELM) lint --strict $(CHART) -f $$values"; \
	  $(HELM) lint --strict $(CHART) --kube-version $(KUBE_VERSION) -f "$$values"; \
	done
	@echo "$(HELM) template taskyard $(CHART)    (helm's default Kubernetes version)"
	@$(HELM) template taskyard $(CHART) >/dev/null
	@out="$$(mktemp -d)"; trap 'rm -rf "$$out"' EXIT; \
	$(HELM) template taskyard $(CHART) --kube-version $(KUBE_VERSION) >"$$out/default.yaml"; \
	for values in $(CHART_VALUES); do \
	  $(HELM) template taskyard $(CHART) --kube-version $(KUBE_VERSION) -f "$$values" >"$$out/$$(basename "$$values")"; \
	done; \
	$(PYTHON) tools/validate_manifests.py -k $(KUBE_VERSION) "$$out"/*.yaml; \
	$(render_k8s_manifests) >"$$out/k8s-manifests"; \
	if ! diff -u $(K8S_MANIFESTS) "$$out/k8s-manifests"; then \
	  echo "$(K8S_MANIFESTS) is stale: run make k8s-manifests" >&2; exit 1; \
	fi
	@echo "helm-check: ok"

k8s-manifests:
	@tools/install-tools.sh helm
	$(render_k8s_manifests) >$(K8S_MANIFESTS).tmp
	mv $(K8S_MANIFESTS).tmp $(K8S_MANIFESTS)

# Every check runs even when an earlier one fails, so one run shows everything;
# pytest runs last so its summary is the last thing printed.
# Installs what is missing first (quick when everything is there), so it works on a fresh clone.
test: tools
	@failed=""; \
	for check in lint typecheck gen-check breaking helm-check "-j3 clients"; do \
	  echo "=== make $$check"; \
	  if ! $(MAKE) --no-print-directory $$check; then failed="$$failed $$check"; fi; \
	done; \
	if [ -n "$$failed" ]; then echo "=== checks FAILED:$$failed (running the tests anyway)"; \
	else echo "=== checks passed: lint typecheck gen-check breaking helm-check clients"; fi; \
	echo "=== make test-fast"; \
	rc=0; $(MAKE) --no-print-directory test-fast || rc=$$?; \
	if [ -n "$$failed" ] && [ $$rc -eq 0 ]; then rc=1; fi; \
	exit $$rc

# pytest exits 5 when it collected no test: that is a failure here, never a pass.
test-fast: $(PYTHON_READY)
	@rc=0; $(PYTEST) $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; \
	exit $$rc

# One tier each (pytest markers unit, integration, acceptance, given by directory in
# tests/conftest.py). The real-cluster tiers need grpcurl and PostgreSQL binaries.
test-unit:
	@$(MAKE) --no-print-directory test-fast PYTEST_ARGS='tests/unit $(PYTEST_ARGS)'

# The acceptance tier also needs Jaeger and Prometheus (the observability tests) and the
# clients built (the conformance scenarios).
test-integration: $(PYTHON_READY)
	@tools/install-tools.sh grpcurl postgres
	@$(MAKE) --no-print-directory test-fast PYTEST_ARGS='tests/integration $(PYTEST_ARGS)'

test-acceptance: $(PYTHON_READY)
	@tools/install-tools.sh grpcurl postgres jaeger prometheus clients browser
	@$(MAKE) --no-print-directory -j3 clients
	@$(MAKE) --no-print-directory test-fast PYTEST_ARGS='tests/acceptance $(PYTEST_ARGS)'

# The README's grpcurl session, rewritten from a run against a real cluster.
readme: $(PYTHON_READY)
	@tools/install-tools.sh grpcurl postgres
	TASKYARD_UPDATE_README=1 $(PYTEST) tests/acceptance/test_readme_grpcurl.py

# Debian's chromium drives them (Playwright's own browser download is never used).
screenshots: $(PYTHON_READY)
	@tools/install-tools.sh postgres browser
	TASKYARD_UPDATE_SCREENSHOTS=1 $(PYTEST) tests/acceptance/test_dashboard.py tests/acceptance/test_dashboard_limits.py \
		tests/acceptance/test_dashboard_failures.py

# grpcurl is for the README's session against it, Jaeger for the traces (built once,
# about 4 minutes; JAEGER=0 skips it): the suite runs without either.
JAEGER ?= 1
dev: $(PYTHON_READY_EMBEDDED)
	@tools/install-tools.sh grpcurl || echo "make dev: grpcurl not installed (needs Go); the suite runs without it" >&2
	@if [ "$(JAEGER)" != 0 ]; then tools/install-tools.sh jaeger \
	  || echo "make dev: Jaeger not built (needs Go); the suite runs without tracing" >&2; fi
	@echo "make dev: for grpcurl in another shell: export PATH=\"$(TOOLS_BIN):\$$PATH\""
	$(PYTHON) -m taskyard.cli dev

# Python deps, buf (npm), grpcurl (go), PostgreSQL server binaries, Jaeger (go, cached
# across checkouts), Prometheus (the observability tests), the code generators and the
# clients' dependencies (Go modules, npm, Maven): each skipped when present.
tools:
	@PYTHON=$(PYTHON) tools/install-tools.sh python npm grpcurl postgres jaeger prometheus codegen clients browser

# Run with $(PYTHON), not their python3 shebang, which the venv would not be behind.
bench: $(PYTHON_READY)
	@for script in $(BENCH_SCRIPTS); do \
	  if [ ! -f "$$script" ]; then echo "bench: $$script does not exist yet" >&2; exit 1; fi; \
	  echo "=== $$script"; $(PYTHON) "$$script"; \
	done

clean:
	find . -name __pycache__ -type d -not -path './node_modules/*' -not -path './.venv/*' -prune -exec rm -rf {} +
	rm -rf .mypy_cache .ruff_cache .pytest_cache build dist
