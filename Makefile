# The two entry points (see README.md):
#   make report   - set up, build in release mode, run the benchmark report
#   make test     - set up, run every test
CARGO ?= cargo
STUDIES ?= leveldb
# WiredTiger's LSM tree takes about 80 of the LevelDB study's 125 minutes in
# its 4 MB sections; it runs in the wiredtiger study (ENGINES=all to add it).
ENGINES ?= shale,leveldb,rocksdb,sqlite3,kyoto-treedb,wiredtiger-btree,lmdb

.PHONY: setup test report build fmt clippy

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
