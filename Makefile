# The two entry points (see README.md):
#   make report   - set up, build in release mode, run the benchmark report
#   make test     - set up, run every test
CARGO ?= cargo
STUDIES ?= leveldb

.PHONY: setup test report build fmt clippy

setup:
	bash scripts/setup.sh

build: setup
	$(CARGO) build --release --workspace

test: setup
	$(CARGO) test --workspace --all-features

report: build
	$(CARGO) run --release -p shale-report -- --studies=$(STUDIES)

fmt:
	$(CARGO) fmt --all

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
