.PHONY: help setup test quick lint examples catalog bench tools

PYTHON ?= python3

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

setup: ## Install and start what the suite needs where missing, saying what (scripts/setup-test-env)
	PYTHON=$(PYTHON) scripts/setup-test-env

# Four workers (pytest-xdist, --dist loadfile) on two cores: a test file stays on one
# worker, so an integration module's projects and schedulers are made once;
# tests/integration/conftest.py compiles each Kubernetes version once for all workers. The
# compiles keep both cores busy whatever the count; the replays after them wait on real
# schedulers and control planes (about a third of the CPU idle with two workers), which
# more workers fill: a third, 855 s -> 713 s warm; a fourth, 1044 s -> 937 s warm (the
# cores 8% idle -> 3%; at least 10 GB of the 24 still free). `make quick` (no replays)
# takes the same count: 185 s and 230 s in two runs, against 191 s and 203 s with three.
WORKERS ?= 4

test: setup ## The whole suite (Go, Docker, control plane and tools included), after setup
	$(PYTHON) -m pytest -n $(WORKERS) --dist loadfile --no-loadscope-reorder --durations=25 $(PYTEST_ARGS)

quick: ## Everything but the Go/Docker integration tests (tests/integration/)
	$(PYTHON) -m pytest -n $(WORKERS) --dist loadfile -m "not integration"

lint: ## ruff, ruff format, mypy, the import layers, the house rules (sizes; no block added twice)
	ruff check . && ruff format --check . && mypy && lint-imports && $(PYTHON) scripts/house_rules.py

examples: ## Regenerate examples/
	$(PYTHON) -m kplugin.maintainer.examples

catalog: ## Re-derive kplugin/data/catalog.json from the releases (Go module proxy)
	$(PYTHON) -m kplugin.maintainer.catalog --write

tools: ## Install the pinned golangci-lint, helm and actionlint (go install), where missing
	$(PYTHON) -m kplugin.maintainer.tools

bench: ## Start-up and generation benchmarks
	$(PYTHON) benchmarks/cli_startup.py
