#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ one after another for a while each.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS per target (default 60); TARGETs default to all of them. Needs the
# nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). New inputs go
# to fuzz/work/<target>/ (not committed); crashes to fuzz/artifacts/<target>/.
# The committed seeds in fuzz/corpus/<target>/ are read, never written.
# Builds with debug assertions and overflow checks, under AddressSanitizer.
# Not part of CI: the stable test tests/fuzz_corpus.rs replays the corpus.
set -euo pipefail

cd "$(dirname "$0")/../fuzz"
SECONDS_PER_TARGET="${1:-60}"
shift || true
ALL=(log_reader write_batch block compressed_block table version_edit filter coding db blob_record)
if [ $# -gt 0 ]; then TARGETS=("$@"); else TARGETS=("${ALL[@]}"); fi

# One job at a time: the targets run in sequence, each single-threaded.
cargo +nightly fuzz build -a

status=0
for t in "${TARGETS[@]}"; do
  mkdir -p "work/$t"
  echo "== $t: ${SECONDS_PER_TARGET}s"
  # A single allocation over 256 MB is reported as a crash: no input may make
  # a decoder allocate more than its file's size allows.
  if ! cargo +nightly fuzz run -a "$t" "work/$t" "corpus/$t" -- \
      -max_total_time="$SECONDS_PER_TARGET" -max_len=65536 -timeout=60 \
      -rss_limit_mb=2048 -malloc_limit_mb=256 -print_final_stats=1; then
    echo "!! $t failed; reproducer in fuzz/artifacts/$t/" >&2
    status=1
  fi
done
exit $status
