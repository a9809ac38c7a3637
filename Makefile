# The two entry points (see README.md):
#   make report   - set up, build the peers and db_bench in release mode, run
#                   the benchmark report
#   make test     - set up, run every test (the Rust workspace's, the API
#                   docs' links: make doc, the Python package's: make python-test, the memtable's
#                   unsafe code under Miri: scripts/miri.sh, and the
#                   multi-threaded tests under ThreadSanitizer: make tsan)
#   make install-c PREFIX=DIR - build and install the C library (see README.md)
CARGO ?= cargo
# The virtualenv scripts/setup.sh makes for the Python package.
PY_VENV ?= target/py-venv
STUDIES ?= leveldb
# all: every engine of the build, minus those a study leaves out by default
# (the LevelDB study leaves out WiredTiger's LSM tree, too slow in 4 MB);
# a list (ENGINES=shale,leveldb) runs exactly those engines in every study
# (Shale's option variants, shale-blobs and shale-split, only in the sections
# that ask for them).
ENGINES ?= all
# Empty: every job; a list (JOBS=compression-zstd,compression-lz4) runs only
# those jobs of the chosen studies (shale-report --jobs).
JOBS ?=
# Release builds of LevelDB and RocksDB (Debian's are built with assertions
# on), made by scripts/build-peers.sh from Debian's source packages. db_bench
# links them when built with SHALE_PEERS_DIR set, as `build` and `report` do;
# `test` clears it so that the tests use Debian's binary packages.
PEERS_DIR ?= $(CURDIR)/target/peers

.PHONY: setup peers peers-db-bench test python-test tsan doc report build fmt clippy install-c

setup:
	PY_VENV=$(abspath $(PY_VENV)) bash scripts/setup.sh

peers: setup
	bash scripts/build-peers.sh --dir=$(PEERS_DIR)

# The peers' own db_bench as well, for scripts/fairness.sh.
peers-db-bench: setup
	bash scripts/build-peers.sh --dir=$(PEERS_DIR) --with-db-bench

build report: export SHALE_PEERS_DIR = $(PEERS_DIR)
build: setup peers
	$(CARGO) build --release --workspace

test: export SHALE_PEERS_DIR =
test: setup
	$(CARGO) test --workspace --all-features
	$(MAKE) --no-print-directory doc
	$(MAKE) --no-print-directory python-test
	bash scripts/miri.sh
	$(MAKE) --no-print-directory tsan

# The API documentation, with every intra-doc link resolved.
doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --all-features --no-deps

# The engine's multi-threaded tests built with ThreadSanitizer (nightly,
# std rebuilt with it, into target/tsan); TSAN_ROUNDS=N runs them N times.
tsan:
	bash scripts/tsan.sh

# Builds crates/shale-py into the virtualenv (a debug build, sharing
# target/ with the workspace) and runs its pytest suite.
python-test: setup
	cd crates/shale-py && VIRTUAL_ENV=$(abspath $(PY_VENV)) CARGO_TARGET_DIR=$(abspath target) \
		$(abspath $(PY_VENV))/bin/maturin develop --quiet
	$(PY_VENV)/bin/python -m pytest -q crates/shale-py/tests

report: build
	$(CARGO) run --release -p shale-report -- --studies=$(STUDIES) \
		$(if $(filter all,$(ENGINES)),,--engines=$(ENGINES)) \
		$(if $(JOBS),--jobs=$(JOBS))

fmt:
	$(CARGO) fmt --all
	cd crates/shale-py && $(CARGO) fmt

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	cd crates/shale-py && $(CARGO) clippy --all-targets -- -D warnings

PREFIX ?= /usr/local
install-c:
	bash scripts/install-c.sh --prefix $(PREFIX)
