# The two entry points (see README.md):
#   make report   - set up, build the peers and db_bench in release mode, run
#                   the benchmark report
#   make test     - set up, run every test
#   make install-c PREFIX=DIR - build and install the C library (see README.md)
CARGO ?= cargo
STUDIES ?= leveldb
# all: every engine of the build, minus those a study leaves out by default
# (the LevelDB study leaves out WiredTiger's LSM tree, too slow in 4 MB);
# a list (ENGINES=shale,leveldb) runs exactly those engines in every study.
ENGINES ?= all
# Release builds of LevelDB and RocksDB (Debian's are built with assertions
# on), made by scripts/build-peers.sh from Debian's source packages. db_bench
# links them when built with SHALE_PEERS_DIR set, as `build` and `report` do;
# `test` clears it so that the tests use Debian's binary packages.
PEERS_DIR ?= $(CURDIR)/target/peers

.PHONY: setup peers peers-db-bench test report build fmt clippy install-c

setup:
	bash scripts/setup.sh

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

report: build
	$(CARGO) run --release -p shale-report -- --studies=$(STUDIES) \
		$(if $(filter all,$(ENGINES)),,--engines=$(ENGINES))

fmt:
	$(CARGO) fmt --all

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

PREFIX ?= /usr/local
install-c:
	bash scripts/install-c.sh --prefix $(PREFIX)
