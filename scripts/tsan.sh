#!/usr/bin/env bash
# Runs the engine's multi-threaded tests under ThreadSanitizer, which reports
# every pair of accesses to the same memory from two threads, one a write,
# that no happens-before edge (a lock, an atomic with release/acquire, a
# thread's spawn or join) orders. Miri (scripts/miri.sh) covers the
# memtable's unsafe code and the write path's hand-offs; this covers the rest
# of the concurrent engine as it really runs, with real threads: the write
# queue and group commit, the background thread and its doorbell, snapshots,
# the super-version swap, the block and table caches, and every atomic.
#
#   scripts/tsan.sh                  # part of `make test`; also `make tsan`
#   TSAN_ROUNDS=20 scripts/tsan.sh   # the long version: the run 20 times over
#
# Needs a nightly toolchain with rust-src (std is rebuilt with the
# sanitizer: an uninstrumented std hides its own synchronisation, of Arc,
# channels and thread joins, and TSan then reports races that are not).
# Installs it with rustup when missing; TSAN_TOOLCHAIN names another
# nightly. Builds into target/tsan, apart from the ordinary builds.
# parking_lot sees the sanitizer itself (its build script) and then replaces
# the one fence TSan does not model by an acquire load.
#
# What is run, and why:
# - every lib test of the modules whose tests start threads: the memtable
#   (arena, skiplist, key filter, memtable), the write path (db::write:
#   group commit, concurrent memtable writes, the hand-offs, panics in a
#   member's insert), the doorbell (db::wakeup), db::handoff, the block
#   cache (sstable::cache), tables read from many threads (sstable::tests),
#   the seek budget shared between threads (version::edit), and every
#   other db:: test, since each open database runs the background thread
#   beside the test's own;
# - tests/concurrency.rs (writers, readers, scans and snapshots while
#   compactions run, with and without concurrent memtable writes, and
#   through a block cache of 16 KB shared with a second database, so that
#   blocks are inserted and evicted while readers hold them),
#   tests/sticky_errors.rs (panics in writes and in background work),
#   tests/manifest_stall.rs (writes and reads during a MANIFEST sync),
#   tests/flush_during_compaction.rs (a flush in a parked compaction),
#   tests/ingest.rs (a bulk load beside writers and their snapshots),
#   tests/ingest_threads.rs (a bulk load's tables written by several threads),
#   tests/seek_compaction.rs (compactions started by reads) and
#   tests/locking.rs (the process-wide table of held locks, forks).
# Left out to keep the run short: the tests whose second thread is only the
# background one, which the tests above drive harder (the rest of the lib
# tests, faults.rs, metamorphic.rs, model.rs, ingest_crash.rs, ...), and
# kills.rs and process_crash.rs, about process death, not threads; those
# named passed under TSan once, with no report (docs/reliability.md).
# crash_points.rs and corruption.rs (one thread and the background one,
# long) and hostile_sizes.rs and oversized_writes.rs (GiBs allocated from
# one thread) have not run under it. The zstd C library is not
# instrumented: it works on one block at a time in the calling thread and
# shares nothing between threads.
#
# A report fails the run (halt_on_error). Nothing is suppressed: no report
# so far has been a false one (docs/reliability.md, ThreadSanitizer).
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLCHAIN="${TSAN_TOOLCHAIN:-nightly}"
ROUNDS="${TSAN_ROUNDS:-1}"
if ! rustup run "$TOOLCHAIN" rustc --version >/dev/null 2>&1; then
  echo "tsan: installing $TOOLCHAIN with rust-src"
  rustup toolchain install "$TOOLCHAIN" --profile minimal --component rust-src
elif [ ! -d "$(rustup run "$TOOLCHAIN" rustc --print sysroot)/lib/rustlib/src/rust/library" ]; then
  echo "tsan: adding rust-src to $TOOLCHAIN"
  rustup component add rust-src --toolchain "$TOOLCHAIN"
fi

export RUSTFLAGS="-Zsanitizer=thread"
export RUSTDOCFLAGS="-Zsanitizer=thread"
export CARGO_TARGET_DIR="${TSAN_TARGET_DIR:-$PWD/target/tsan}"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
# The tests that make code panic on purpose (sticky_errors.rs) give the
# database 20 s to fail cleanly; resolving a panic's backtrace in a
# sanitized binary took longer than that on a loaded machine. TSan's
# reports carry their own stacks.
export RUST_BACKTRACE=0
TARGET=x86_64-unknown-linux-gnu
tsan_test() {
  cargo +"$TOOLCHAIN" test -Zbuild-std --target "$TARGET" -p shale --features internals "$@"
}

LIB_TESTS=(memtable:: db:: sstable::cache sstable::tests::tables_are_read_from_many_threads
  version::edit::tests::seek_budget_is_shared_between_threads)
INTEGRATION=(concurrency sticky_errors manifest_stall flush_during_compaction ingest ingest_threads seek_compaction locking)
INTEGRATION_ARGS=()
for t in "${INTEGRATION[@]}"; do INTEGRATION_ARGS+=(--test "$t"); done

tsan_test --lib "${INTEGRATION_ARGS[@]}" --no-run
for ((round = 1; round <= ROUNDS; round++)); do
  [ "$ROUNDS" -gt 1 ] && echo "tsan: round $round of $ROUNDS"
  tsan_test --lib -- -q "${LIB_TESTS[@]}"
  tsan_test "${INTEGRATION_ARGS[@]}" -- -q
done
echo "tsan: no data race reported"
