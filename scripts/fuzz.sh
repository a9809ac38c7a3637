#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ for a while each.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS per target (default 60); TARGETs default to all of them. Needs the
# nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). New inputs go
# to fuzz/work/<target>/ (not committed); crashes to fuzz/artifacts/<target>/.
# The committed seeds in fuzz/corpus/<target>/ are read, never written.
# Builds with debug assertions and overflow checks, under AddressSanitizer.
# Not part of CI: the stable test tests/fuzz_corpus.rs replays the corpus.
#
# Environment:
#   FUZZ_LANES=N   run the targets in N lanes at once (default 1), each lane
#                  taking the next target not yet run
#   FUZZ_NICE=N    the fuzzers' scheduling niceness (default 19, the lowest
#                  priority: other work on the machine goes first)
#   FUZZ_TIMEOUT=S libFuzzer's -timeout for one input (default 60); raise it
#                  when the fuzzers may be paused (SIGSTOP) during the run
#
# Each target's CPU time (user + system, from /usr/bin/time), inputs run,
# coverage and corpus size are appended as a table row to
# fuzz/work/runs.tsv; the totals of the run are printed at the end.
set -euo pipefail

cd "$(dirname "$0")/../fuzz"
SECONDS_PER_TARGET="${1:-60}"
shift || true
ALL=(log_reader write_batch block compressed_block table version_edit filter coding db blob_record)
if [ $# -gt 0 ]; then TARGETS=("$@"); else TARGETS=("${ALL[@]}"); fi
LANES="${FUZZ_LANES:-1}"
TIMEOUT="${FUZZ_TIMEOUT:-60}"
NICE="${FUZZ_NICE:-19}"

cargo +nightly fuzz build -a
mkdir -p work
RUN_ID="$(date -u +%Y%m%dT%H%M%SZ)"
COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
[ -f work/runs.tsv ] || printf 'run\tcommit\ttarget\tcpu_s\tinputs\tedges\tcorpus\tstatus\n' > work/runs.tsv

# One target: libFuzzer under /usr/bin/time; its row goes to runs.tsv.
run_target() {
  local t="$1" log="work/$1.$RUN_ID.log" times="work/$1.$RUN_ID.time"
  mkdir -p "work/$t"
  echo "== $t: ${SECONDS_PER_TARGET}s"
  local status=ok
  # A single allocation over 256 MB is reported as a crash: no input may make
  # a decoder allocate more than its file's size allows.
  if ! /usr/bin/time -f '%U %S' -o "$times" nice -n "$NICE" \
      cargo +nightly fuzz run -a "$t" "work/$t" "corpus/$t" -- \
      -max_total_time="$SECONDS_PER_TARGET" -max_len=65536 -timeout="$TIMEOUT" \
      -rss_limit_mb=2048 -malloc_limit_mb=256 -print_final_stats=1 >"$log" 2>&1; then
    echo "!! $t failed; reproducer in fuzz/artifacts/$t/, log in fuzz/$log" >&2
    status=failed
  fi
  local cpu inputs edges corpus
  cpu="$(awk 'END { printf "%.0f", $1 + $2 }' "$times" 2>/dev/null || echo 0)"
  inputs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)"
  edges="$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)"
  corpus="$(find "work/$t" -type f | wc -l)"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$RUN_ID" "$COMMIT" "$t" "$cpu" "${inputs:-?}" \
    "${edges:-?}" "$corpus" "$status" >> work/runs.tsv
  [ "$status" = ok ]
}

# Lanes take targets from a shared queue: a lane claims target i by creating
# work/.claim.RUN_ID.i (mkdir is atomic).
lane() {
  local status=0 i
  for i in "${!TARGETS[@]}"; do
    mkdir "work/.claim.$RUN_ID.$i" 2>/dev/null || continue
    run_target "${TARGETS[$i]}" || status=1
  done
  return $status
}

pids=()
for _ in $(seq "$LANES"); do
  lane & pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
rm -rf work/.claim."$RUN_ID".*

echo "== run $RUN_ID at $COMMIT (fuzz/work/runs.tsv):"
awk -F'\t' -v run="$RUN_ID" '$1 == run {
    printf "%-18s cpu %6d s  inputs %12s  edges %6s  corpus %6s  %s\n", $3, $4, $5, $6, $7, $8
    cpu += $4; n += $5
  } END { printf "all: %d CPU-seconds (%.2f CPU-hours), %d inputs\n", cpu, cpu / 3600, n }' work/runs.tsv
exit $status
