#!/usr/bin/env bash
# Harness fairness: does the project's db_bench measure a peer library as
# fast as that peer's own db_bench does? Runs, interleaved, the project's
# `db_bench --engine=<peer>` (linked against the release build of
# scripts/build-peers.sh) and the peer's own db_bench built from the same
# source (scripts/build-peers.sh --with-db-bench), with the same options,
# and prints per result line the median µs/op of each (min–max) and the
# ratio of the project's ops/s to the peer tool's (1.00: the harness costs
# nothing; above 1: the project's db_bench measures the library faster).
#
#   scripts/fairness.sh [--num=N] [--rounds=R] [--db-root=DIR] [--out=DIR]
#                       [--db-bench=PATH] [--peers-dir=DIR] [leveldb] [rocksdb]
#
# Defaults: both peers, --num=1000000, --rounds=3, databases under
# ${TMPDIR:-/tmp}/shale-fairness, outputs (raw runs and the tables) under
# target/fairness, the project's db_bench at target/release/db_bench (build
# it with `SHALE_PEERS_DIR=$PWD/target/peers cargo build --release -p
# shale-bench`, or `make build`), the peers under $SHALE_PEERS_DIR or
# target/peers. Run it on a quiet machine: the figures are only as good as
# the machine is idle.
#
# LevelDB: LevelDB's default benchmark list, at db_bench's defaults, named
# explicitly for both tools (LEVELDB_FLAGS below).
# RocksDB: the lines of that list RocksDB's db_bench also has (all but
# snappycomp and snappyuncomp), with RocksDB's db_bench set to the options
# the project's RocksDB adapter sets (ROCKSDB_OWN_FLAGS below) and, where
# the adapter leaves an option at RocksDB's default, to that default where
# RocksDB's db_bench has a different one of its own. Keys differ: RocksDB's
# db_bench writes 16-byte binary keys, the project's db_bench LevelDB's
# 16-digit decimal ones; both draw random keys uniformly from [0, num).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PEERS_DIR=${SHALE_PEERS_DIR:-$ROOT/target/peers}
NUM=1000000
ROUNDS=3
DB_ROOT=${TMPDIR:-/tmp}/shale-fairness
OUT=$ROOT/target/fairness
DB_BENCH=$ROOT/target/release/db_bench
ENGINES=()
for arg in "$@"; do
  case "$arg" in
    --num=*) NUM=${arg#--num=} ;;
    --rounds=*) ROUNDS=${arg#--rounds=} ;;
    --db-root=*) DB_ROOT=${arg#--db-root=} ;;
    --out=*) OUT=${arg#--out=} ;;
    --db-bench=*) DB_BENCH=${arg#--db-bench=} ;;
    --peers-dir=*) PEERS_DIR=${arg#--peers-dir=} ;;
    leveldb|rocksdb) ENGINES+=("$arg") ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "fairness: unknown argument: $arg (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#ENGINES[@]} -gt 0 ] || ENGINES=(leveldb rocksdb)
[[ $NUM =~ ^[1-9][0-9]*$ ]] || { echo "fairness: --num must be a positive integer" >&2; exit 2; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "fairness: --rounds must be a positive integer" >&2; exit 2; }

log() { echo "fairness: $*" >&2; }
die() { echo "fairness: error: $*" >&2; exit 1; }

# LevelDB's default --benchmarks list (benchmarks/db_bench.cc, 1.23).
LEVELDB_BENCHMARKS=fillseq,fillsync,fillrandom,overwrite,readrandom,readrandom,readseq,readreverse,compact,readrandom,readseq,readreverse,fill100K,crc32c,snappycomp,snappyuncomp
# The lines of that list RocksDB's db_bench has too.
ROCKSDB_BENCHMARKS=fillseq,fillsync,fillrandom,overwrite,readrandom,readrandom,readseq,readreverse,compact,readrandom,readseq,readreverse,fill100K,crc32c
# RocksDB's own db_bench runs that list in two processes: its fill100K
# divides --num by 1000, as LevelDB's does, but then writes --writes
# values, which defaults to --num (1,000,000 values of 100 KB, not 1,000),
# and --writes would cut every other write benchmark too; the second
# process gives fill100K --writes=num/1000.
ROCKSDB_OWN_HEAD=${ROCKSDB_BENCHMARKS%,fill100K,crc32c}
ROCKSDB_OWN_TAIL=fill100K,crc32c

# Both tools, every run: LevelDB's db_bench defaults, named.
COMMON_FLAGS=(--num="$NUM" --value_size=100 --compression_ratio=0.5 --threads=1
  --histogram=0 --use_existing_db=0)
# LevelDB's db_bench and the project's (which takes the same flags): 4 MB
# write buffer, 2 MB files, 4 KB blocks, 8 MB block cache, no bloom filter,
# 1000 open files; snappy (LevelDB's db_bench cannot turn it off).
LEVELDB_FLAGS=(--write_buffer_size=4194304 --max_file_size=2097152 --block_size=4096
  --cache_size=8388608 --bloom_bits=-1 --open_files=1000 --reuse_logs=0)
# The project's db_bench with --engine=rocksdb: the same flags, snappy, and
# tables read through memory maps (its default for RocksDB, said here).
PROJECT_ROCKSDB_FLAGS=("${LEVELDB_FLAGS[@]}" --compression=1 --mmap_read=1)
# RocksDB's own db_bench, set as the adapter sets RocksDB
# (crates/shale-bench/src/engines/rocksdb.rs):
ROCKSDB_OWN_FLAGS=(
  --key_size=16
  --write_buffer_size=4194304          # write buffer 4 MB
  --target_file_size_base=2097152      # = --max_file_size
  --max_bytes_for_level_base=10485760  # level 1: 10 MB, as LevelDB
  --max_bytes_for_level_multiplier=10
  --compaction_style=0                 # level
  --block_size=4096
  --block_restart_interval=16
  --cache_size=8388608                 # LRU, shard count chosen by RocksDB
  --cache_numshardbits=-1
  --bloom_bits=-1                      # no filter
  --open_files=1000
  --compression_type=snappy
  --mmap_read=1                        # allow_mmap_reads
  --verify_checksum=1                  # ReadOptions' default
  --sync=0 --disable_wal=0             # WAL on, fillsync syncs
  # RocksDB's defaults where its db_bench has other ones:
  --enable_pipelined_write=0           # db_bench: 1; DBOptions: false
  --delayed_write_rate=0               # db_bench: 8 MB/s; DBOptions: 0 (16 MB/s)
  --hard_pending_compaction_bytes_limit=274877906944  # db_bench: 128 GB; 256 GB
  # RocksDB's defaults, named (the adapter prints them in its header):
  --max_background_jobs=2
  --max_write_buffer_number=2
  --level0_file_num_compaction_trigger=4
  --level0_slowdown_writes_trigger=20
  --level0_stop_writes_trigger=36
  --num_levels=7
  --level_compaction_dynamic_level_bytes=0
  --statistics=0 --stats_interval=0
  --seed=1000                          # fixed key streams (0: from the clock)
)

LEVELDB_VERSION=1.23-4
ROCKSDB_VERSION=7.8.3-2

[ -x "$DB_BENCH" ] || die "$DB_BENCH not found: build it with SHALE_PEERS_DIR=$PEERS_DIR cargo build --release -p shale-bench (or make build)"

own_db_bench() { # engine -> path of the peer's own db_bench
  case "$1" in
    leveldb) echo "$PEERS_DIR/leveldb-$LEVELDB_VERSION/bin/db_bench" ;;
    rocksdb) echo "$PEERS_DIR/rocksdb-$ROCKSDB_VERSION/bin/db_bench" ;;
  esac
}

own_lib_dir() { # engine -> the release build's lib/
  case "$1" in
    leveldb) echo "$PEERS_DIR/leveldb-$LEVELDB_VERSION/lib" ;;
    rocksdb) echo "$PEERS_DIR/rocksdb-$ROCKSDB_VERSION/lib" ;;
  esac
}

# The peer's own db_bench must run the release build too: LevelDB's links
# its static library; RocksDB's loads librocksdb.so, checked here.
check_own_library() {
  local engine=$1 own dir resolved
  own=$(own_db_bench "$engine")
  [ "$engine" = rocksdb ] || { log "$engine: own db_bench $own (static library of the same build)"; return; }
  dir=$(own_lib_dir "$engine")
  resolved=$(LD_LIBRARY_PATH="$dir" ldd "$own" | awk '/librocksdb/ { print $3 }')
  case "$resolved" in
    "$dir"/*) log "$engine: own db_bench $own loads $resolved" ;;
    *) die "$own loads librocksdb from '$resolved', not from $dir" ;;
  esac
}

# The Library: line the project's db_bench prints for an engine, checked to
# be the release build (the build the peer's own db_bench is made from).
check_project_library() {
  local engine=$1 header lib
  header=$("$DB_BENCH" --engine="$engine" --benchmarks= --num=1 \
    --db="$DB_ROOT/probe-$engine" 2>/dev/null || true)
  rm -rf "$DB_ROOT/probe-$engine"
  lib=$(sed -n 's/^Library: *//p' <<<"$header")
  [ -n "$lib" ] || die "$DB_BENCH prints no Library: line for $engine (is $engine in its build?)"
  case "$lib" in
    "$PEERS_DIR"/*"(release build"*) log "$engine: project's db_bench runs $lib" ;;
    *) die "$DB_BENCH runs $engine from $lib, not the release build under $PEERS_DIR: rebuild it with SHALE_PEERS_DIR=$PEERS_DIR cargo build --release -p shale-bench" ;;
  esac
}

# Result lines of a db_bench output as `index name micros`, in order.
results() {
  awk '/^[A-Za-z0-9_]+ +: +[0-9.]+ micros\/op/ {
         n++; name = $1; us = $3; print n, name, us }' "$1"
}

# The table of one engine, from its raw outputs.
table() { # engine
  local engine=$1 f
  {
    for f in "$OUT/$engine".project.*.txt; do results "$f" | sed 's/^/project /'; done
    for f in "$OUT/$engine".own.*.txt; do results "$f" | sed 's/^/own /'; done
  } | awk -v engine="$engine" '
    function median(s,   a, n, i, j, t) {
      n = split(s, a, " ")
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
      lo = a[1]; hi = a[n]
      return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { key = $1 SUBSEP $2; vals[key] = vals[key] " " $4; name[$2] = $3; if ($2 > last) last = $2 }
    END {
      printf "| # | benchmark | db_bench --engine=%s µs/op median (min–max) | %s'"'"'s own db_bench µs/op median (min–max) | project ÷ own (ops/s) |\n", engine, engine
      print "|---|---|---|---|---|"
      for (i = 1; i <= last; i++) {
        p = ("project" SUBSEP i) in vals ? median(vals["project" SUBSEP i]) : ""; plo = lo; phi = hi
        o = ("own" SUBSEP i) in vals ? median(vals["own" SUBSEP i]) : ""; olo = lo; ohi = hi
        ratio = (p != "" && o != "" && p > 0) ? sprintf("%.2f", o / p) : "—"
        ps = p == "" ? "—" : sprintf("%.3f (%.3f–%.3f)", p, plo, phi)
        os = o == "" ? "—" : sprintf("%.3f (%.3f–%.3f)", o, olo, ohi)
        printf "| %d | %s | %s | %s | %s |\n", i, name[i], ps, os, ratio
      }
    }'
}

mkdir -p "$OUT" "$DB_ROOT"
for engine in "${ENGINES[@]}"; do
  own=$(own_db_bench "$engine")
  [ -x "$own" ] || die "$own not found: run scripts/build-peers.sh --with-db-bench (make peers-db-bench)"
  check_project_library "$engine"
  check_own_library "$engine"
  rm -f "$OUT/$engine".project.*.txt "$OUT/$engine".own.*.txt "$OUT/$engine".*.err
done

# The command of one tool for one engine, into the array CMD.
set_cmd() { # engine tool
  case "$1/$2" in
    leveldb/project) CMD=("$DB_BENCH" --engine=leveldb --benchmarks="$LEVELDB_BENCHMARKS"
                          "${COMMON_FLAGS[@]}" "${LEVELDB_FLAGS[@]}") ;;
    rocksdb/project) CMD=("$DB_BENCH" --engine=rocksdb --benchmarks="$ROCKSDB_BENCHMARKS"
                          "${COMMON_FLAGS[@]}" "${PROJECT_ROCKSDB_FLAGS[@]}") ;;
    leveldb/own) CMD=("$(own_db_bench leveldb)" --benchmarks="$LEVELDB_BENCHMARKS"
                      "${COMMON_FLAGS[@]}" "${LEVELDB_FLAGS[@]}") ;;
    # RocksDB's CMake links its tools without an rpath; the release library
    # has the soname of Debian's, so it is named on the command line.
    rocksdb/own) CMD=(env "LD_LIBRARY_PATH=$(own_lib_dir rocksdb)" "$(own_db_bench rocksdb)"
                      --benchmarks="$ROCKSDB_OWN_HEAD"
                      "${COMMON_FLAGS[@]}" "${ROCKSDB_OWN_FLAGS[@]}") ;;
    rocksdb/own-tail) CMD=(env "LD_LIBRARY_PATH=$(own_lib_dir rocksdb)" "$(own_db_bench rocksdb)"
                      --benchmarks="$ROCKSDB_OWN_TAIL" --writes=$((NUM / 1000))
                      "${COMMON_FLAGS[@]}" "${ROCKSDB_OWN_FLAGS[@]}") ;;
  esac
}

run_one() { # engine tool round
  local engine=$1 tool=$2 round=$3 db="$DB_ROOT/$1-$2" out="$OUT/$1.$2.$3.txt"
  set_cmd "$engine" "$tool"
  rm -rf "$db"
  log "round $round/$ROUNDS: $engine, $tool db_bench"
  "${CMD[@]}" --db="$db" >"$out" 2>"$OUT/$engine.$tool.$round.err" \
    || die "$tool db_bench for $engine failed (round $round): see $out and $OUT/$engine.$tool.$round.err"
  if [ "$engine/$tool" = rocksdb/own ]; then
    set_cmd rocksdb own-tail
    rm -rf "$db"
    "${CMD[@]}" --db="$db" >>"$out" 2>>"$OUT/$engine.$tool.$round.err" \
      || die "$tool db_bench for $engine failed (round $round, fill100K): see $out"
  fi
  rm -rf "$db"
}

for round in $(seq 1 "$ROUNDS"); do
  for engine in "${ENGINES[@]}"; do
    # Alternate which tool goes first, so that drift does not favour one.
    if [ $((round % 2)) -eq 1 ]; then order=(project own); else order=(own project); fi
    for tool in "${order[@]}"; do run_one "$engine" "$tool" "$round"; done
  done
done

for engine in "${ENGINES[@]}"; do
  {
    echo "## $engine: the project's db_bench against $engine's own ($ROUNDS interleaved rounds, --num=$NUM)"
    echo
    echo '```'
    set_cmd "$engine" project; echo "${CMD[*]} --db=DIR"
    set_cmd "$engine" own; echo "${CMD[*]} --db=DIR"
    if [ "$engine" = rocksdb ]; then set_cmd rocksdb own-tail; echo "${CMD[*]} --db=DIR"; fi
    echo '```'
    echo
    table "$engine"
  } | tee "$OUT/$engine.md"
  echo
done
log "raw outputs and tables in $OUT"
