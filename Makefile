# The two entry points (see README.md):
#   make report   - set up, build in release mode, run the benchmark report
#   make test     - set up, run every test (the Rust workspace's, then the
#                   Python package's: make python-test)
CARGO ?= cargo
# The virtualenv scripts/setup.sh makes for the Python package.
PY_VENV ?= target/py-venv
STUDIES ?= leveldb
# all: every engine of the build, minus those a study leaves out by default
# (the LevelDB study leaves out WiredTiger's LSM tree, too slow in 4 MB);
# a list (ENGINES=shale,leveldb) runs exactly those engines in every study.
ENGINES ?= all

.PHONY: setup test python-test report build fmt clippy

setup:
	PY_VENV=$(abspath $(PY_VENV)) bash scripts/setup.sh

build: setup
	$(CARGO) build --release --workspace

test: setup
	$(CARGO) test --workspace --all-features
	$(MAKE) --no-print-directory python-test

# Builds crates/shale-py into the virtualenv (a debug build, sharing
# target/ with the workspace) and runs its pytest suite.
python-test: setup
	cd crates/shale-py && VIRTUAL_ENV=$(abspath $(PY_VENV)) CARGO_TARGET_DIR=$(abspath target) \
		$(abspath $(PY_VENV))/bin/maturin develop --quiet
	$(PY_VENV)/bin/python -m pytest -q crates/shale-py/tests

report: build
	$(CARGO) run --release -p shale-report -- --studies=$(STUDIES) \
		$(if $(filter all,$(ENGINES)),,--engines=$(ENGINES))

fmt:
	$(CARGO) fmt --all
	cd crates/shale-py && $(CARGO) fmt

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	cd crates/shale-py && $(CARGO) clippy --all-targets -- -D warnings
