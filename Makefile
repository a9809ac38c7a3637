# The two entry points (see README.md):
#   make report   - set up, build in release mode, run the benchmark report
#   make test     - set up, run every test
#   make install-c PREFIX=DIR - build and install the C library (see README.md)
CARGO ?= cargo
STUDIES ?= leveldb
# all: every engine of the build, minus those a study leaves out by default
# (the LevelDB study leaves out WiredTiger's LSM tree, too slow in 4 MB);
# a list (ENGINES=shale,leveldb) runs exactly those engines in every study.
ENGINES ?= all

.PHONY: setup test report build fmt clippy install-c

setup:
	bash scripts/setup.sh

build: setup
	$(CARGO) build --release --workspace

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
