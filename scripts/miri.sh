#!/usr/bin/env bash
# Runs the tests of the engine's unsafe code under Miri, which checks every
# memory access, alignment, aliasing (Stacked Borrows) and data race: the
# memtable's arena and skiplist, and the memtable built on them (its key
# filter, safe code, is left out: slow under Miri), and the write path's
# hand-offs between threads (db/handoff.rs), whose tests hand data over
# through nothing but the hand-off under test, so that Miri reports a data
# race if its memory orderings are too weak; and a block's reverse walk,
# which prefetches the entries it is about to decode. (The other
# unsafe code, in env/posix.rs, calls the operating system, which Miri
# cannot run; it is covered by the real-file tests and the kill tests.)
#
#   scripts/miri.sh            # part of `make test`
#
# Needs a nightly toolchain with the miri and rust-src components; installs
# them with rustup when missing. MIRI_TOOLCHAIN names another nightly.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLCHAIN="${MIRI_TOOLCHAIN:-nightly}"
if ! rustup run "$TOOLCHAIN" cargo miri --version >/dev/null 2>&1; then
  echo "miri: installing $TOOLCHAIN with miri and rust-src"
  rustup toolchain install "$TOOLCHAIN" --profile minimal --component miri,rust-src
fi
cargo +"$TOOLCHAIN" miri setup >/dev/null
exec cargo +"$TOOLCHAIN" miri test -p shale --lib -- memtable::arena memtable::skiplist memtable::tests db::handoff \
  sstable::block::tests::a_short_block util::prefetch
