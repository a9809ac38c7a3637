#!/usr/bin/env bash
# Runs db_bench's benchmarks for several engines side by side: rounds are
# interleaved (A B A B ...), each run in its own process and fresh
# directory, and the table printed at the end gives each line's median
# micros/op (min-max) per engine and the first engine's ops/s over each
# other's (the ratio of medians).
#
# usage: scripts/side-by-side.sh [-r ROUNDS] [-b BENCHMARKS] [-d DIR] ENGINE... [-- DB_BENCH_FLAGS...]
#   defaults: 3 rounds; LevelDB db_bench's default benchmark list; DIR=/tmp/shale-sbs
# Needs a release build: cargo build --release -p shale-bench
#
# An ENGINE may also be LABEL=ENGINE@DB_BENCH: that engine run by another
# db_bench binary, under its own label, e.g. to compare two commits:
#   scripts/side-by-side.sh new=shale@target/release/db_bench old=shale@/tmp/old/db_bench
set -euo pipefail

rounds=3
benchmarks=fillseq,fillsync,fillrandom,overwrite,readrandom,readrandom,readseq,readreverse,compact,readrandom,readseq,readreverse,fill100K,crc32c,snappycomp,snappyuncomp
root=/tmp/shale-sbs
engines=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    -r) rounds=$2; shift 2 ;;
    -b) benchmarks=$2; shift 2 ;;
    -d) root=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) engines+=("$1"); shift ;;
  esac
done
[ ${#engines[@]} -gt 0 ] || engines=(shale leveldb)

here=$(cd "$(dirname "$0")/.." && pwd)
bench=${DB_BENCH:-$here/target/release/db_bench}
[ -x "$bench" ] || { echo "no $bench: run cargo build --release -p shale-bench" >&2; exit 2; }
mkdir -p "$root"
raw="$root/results.txt"
: > "$raw"

for r in $(seq 1 "$rounds"); do
  for e in "${engines[@]}"; do
    label=$e engine=$e binary=$bench
    if [[ "$e" == *=*@* ]]; then
      label=${e%%=*}; spec=${e#*=}; engine=${spec%%@*}; binary=${spec#*@}
      [ -x "$binary" ] || { echo "no $binary" >&2; exit 2; }
    fi
    db="$root/$label-$r"
    rm -rf "$db"
    echo "round $r/$rounds: $label" >&2
    # The n-th line of a run is benchmark position n (names repeat).
    "$binary" --engine="$engine" --benchmarks="$benchmarks" --db="$db" "${extra[@]}" 2>/dev/null \
      | awk -v e="$label" -v r="$r" '/micros\/op/ { n++; print e, r, n, $1, $3 }' >> "$raw"
    rm -rf "$db"
  done
done

echo "command: $0 -r $rounds -b $benchmarks ${engines[*]} ${extra[*]:+-- ${extra[*]}}"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(df -T "$root" | awk 'NR==2 {print $2}') at $root"
echo
# Median, min and max of micros/op per (engine, position); ratio against the first engine.
labels=()
for e in "${engines[@]}"; do labels+=("${e%%=*}"); done
awk -v first="${labels[0]}" -v list="${labels[*]}" '
  { key = $1 SUBSEP $3; v[key] = v[key] " " $5; name[$3] = $4; if ($3 > maxn) maxn = $3 }
  function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    lo = a[1]; hi = a[n]
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    ne = split(list, eng, " ")
    printf "| benchmark |"; for (i = 1; i <= ne; i++) printf " %s µs/op median (min–max) |", eng[i]
    for (i = 2; i <= ne; i++) printf " %s ÷ %s (ops/s) |", first, eng[i]
    printf "\n|---|"; for (i = 1; i < 2 * ne; i++) printf "---|"; printf "\n"
    for (n = 1; n <= maxn; n++) {
      printf "| %s |", name[n]
      for (i = 1; i <= ne; i++) {
        m[i] = median(v[eng[i] SUBSEP n]); printf " %.3f (%.3f–%.3f) |", m[i], lo, hi
      }
      for (i = 2; i <= ne; i++) printf " %.2f |", (m[1] > 0 ? m[i] / m[1] : 0)
      printf "\n"
    }
  }' "$raw"
