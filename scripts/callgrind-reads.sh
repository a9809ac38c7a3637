#!/usr/bin/env bash
# Instructions per operation (callgrind's Ir) of db_bench's read benchmarks,
# for several engines on the same data: each run reads its own copy of one
# database, made once per file format (fillrandom, then compact where the
# engine compacts, so that no compaction runs during the reads), and the
# count is the inclusive cost of the benchmark's loop
# (ThreadCtx::read_sequential or ::read_random, the benchmark thread only:
# not the open, nor background work) over --reads. shale, shale-c and
# leveldb read one database in LevelDB's format, written by shale; any other
# engine reads one it wrote itself with the same fillrandom (same keys and
# values: db_bench's seed is fixed).
#
# usage: scripts/callgrind-reads.sh [-n NUM] [-r READS] [-b BENCHMARKS] [-d DIR] [ENGINE...]
#   defaults: NUM=200000 entries, READS=100000, BENCHMARKS=readseq,readreverse,readrandom,
#   DIR=/tmp/shale-callgrind, engines shale shale-c
# Needs valgrind and a release build:
#   cargo build --release -p shale-bench -p shale-c
set -euo pipefail

num=200000
reads=100000
benchmarks=readseq,readreverse,readrandom
root=/tmp/shale-callgrind
engines=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) num=$2; shift 2 ;;
    -r) reads=$2; shift 2 ;;
    -b) benchmarks=$2; shift 2 ;;
    -d) root=$2; shift 2 ;;
    *) engines+=("$1"); shift ;;
  esac
done
[ ${#engines[@]} -gt 0 ] || engines=(shale shale-c)

here=$(cd "$(dirname "$0")/.." && pwd)
bench=${DB_BENCH:-$here/target/release/db_bench}
[ -x "$bench" ] || { echo "no $bench: run cargo build --release -p shale-bench -p shale-c" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }

rm -rf "$root"
mkdir -p "$root"
# The engine that writes the database engine $1 reads.
writer() {
  case "$1" in
    shale | shale-c | leveldb) echo shale ;;
    *) echo "$1" ;;
  esac
}
# Flags an engine needs under valgrind: LMDB's default 64 GB map does not
# fit valgrind's address space (env_open fails), 1 GB holds the database.
extra() {
  case "$1" in
    lmdb) echo --lmdb_map_size=1073741824 ;;
  esac
}
for e in "${engines[@]}"; do
  w=$(writer "$e")
  base="$root/base-$w"
  [ -d "$base" ] && continue
  # shellcheck disable=SC2046
  "$bench" --engine="$w" $(extra "$w") --benchmarks=fillrandom --num="$num" --db="$base" >/dev/null 2>&1
  # Engines without compaction (lmdb) refuse it; their database is as written.
  # shellcheck disable=SC2046
  "$bench" --engine="$w" $(extra "$w") --use_existing_db=1 --benchmarks=compact --num="$num" --db="$base" >/dev/null 2>&1 || true
done

echo "command: $0 -n $num -r $reads -b $benchmarks ${engines[*]}"
echo "database: fillrandom then compact (where supported) of $num entries; Ir per operation of the benchmark loop"
printf '%-12s' benchmark
for e in "${engines[@]}"; do printf ' %12s' "$e"; done
echo
for b in ${benchmarks//,/ }; do
  # A scan stops at the last entry: at most NUM operations.
  case "$b" in
    readseq | readreverse) loop=read_sequential ops=$((reads < num ? reads : num)) ;;
    readrandom) loop=read_random ops=$reads ;;
    *) echo "unsupported benchmark: $b" >&2; exit 2 ;;
  esac
  printf '%-12s' "$b"
  for e in "${engines[@]}"; do
    db="$root/run-$e"
    rm -rf "$db"
    cp -r "$root/base-$(writer "$e")" "$db"
    out="$root/$e.$b.callgrind"
    # shellcheck disable=SC2046
    valgrind --tool=callgrind --callgrind-out-file="$out" \
      "$bench" --engine="$e" $(extra "$e") --use_existing_db=1 --benchmarks="$b" \
      --num="$num" --reads="$reads" --db="$db" >/dev/null 2>&1
    ir=$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null \
      | awk -v f="ThreadCtx::$loop" '!done && $0 ~ f" \\[" { gsub(",", "", $1); print $1; done = 1 }')
    [ -n "$ir" ] || { echo "no ThreadCtx::$loop in $out" >&2; exit 1; }
    printf ' %12.1f' "$(echo "$ir / $ops" | bc -l)"
    rm -rf "$db"
  done
  echo
done
