.PHONY: help test quick lint examples catalog bench

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

test: ## The whole suite, Go integration tests included
	python -m pytest

quick: ## Everything but the Go/Docker integration tests
	python -m pytest -m "not integration"

lint: ## ruff, ruff format, mypy, the import layers
	ruff check . && ruff format --check . && mypy && lint-imports

examples: ## Regenerate examples/
	python -m kplugin.maintainer.examples

catalog: ## Re-derive kplugin/data/catalog.json from the releases (Go module proxy)
	python -m kplugin.maintainer.catalog --write

bench: ## Start-up and generation benchmarks
	python benchmarks/cli_startup.py
