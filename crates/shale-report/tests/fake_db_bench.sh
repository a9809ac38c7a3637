#!/bin/sh
# A stand-in for db_bench used by the end-to-end test: it prints canned
# results in db_bench's format (see the README's "db_bench contract").
# Speeds are fixed per engine and slow down by 0.1 us per repeated run of
# the same job, so medians and ranges are known: shale 1.0 us/op, leveldb
# 2.0, every other engine 4.0 (plus 0.1 per run). kyoto-treedb reports
# itself as not built; lmdb prints a malformed line. Like the real db_bench
# it refuses unknown benchmark names with exit status 2.
# STATE_DIR is replaced by the test before the script is written.
state="STATE_DIR"
known=",fillseq,fillrandom,overwrite,fillsync,fillbatch,fill100K,readseq,readreverse,readrandom,fillrandbatch,putseq,putrandom,getseq,getrandom,lsmiter,"
engine= db= benches= ts= iters=3 threads=1 existing=0
for a in "$@"; do
  case "$a" in
    --engine=*) engine=${a#--engine=} ;;
    --db=*) db=${a#--db=} ;;
    --benchmarks=*) benches=${a#--benchmarks=} ;;
    --timeseries=*) ts=${a#--timeseries=} ;;
    --iterations=*) iters=${a#--iterations=} ;;
    --threads=*) threads=${a#--threads=} ;;
    --use_existing_db=1) existing=1 ;;
  esac
done
echo "$*" >> "$state/args.log"
old_ifs=$IFS
IFS=,
for b in $benches; do
  case "$known" in
    *",$b,"*) ;;
    *) echo "db_bench: invalid flag '--benchmarks=$benches': unknown benchmark '$b'" >&2
       exit 2 ;;
  esac
done
IFS=$old_ifs
if [ "$engine" = kyoto-treedb ]; then
  echo "skipped: kyoto-treedb is not in this build: header <kclangc.h> not found"
  exit 0
fi
if [ "$existing" = 1 ]; then
  # A reused database is a copy of one an earlier run left behind.
  if [ ! -e "$db/used" ]; then
    echo "database directory $db has no database to reuse" >&2
    exit 1
  fi
  rm "$db/used"
fi
if [ -e "$db/used" ]; then
  echo "database directory $db was not fresh" >&2
  exit 1
fi
touch "$db/used"
key=$(basename "$db")
n=0
[ -f "$state/$key" ] && n=$(cat "$state/$key")
n=$((n + 1))
echo "$n" > "$state/$key"
case "$engine" in
  shale) base=1000 ;;
  leveldb) base=2000 ;;
  *) base=4000 ;;
esac
milli=$((base + (n - 1) * 100))
us=$(printf "%d.%03d" $((milli / 1000)) $((milli % 1000)))
echo "Engine:     $engine version 9.9-fake"
case "$engine" in
  leveldb) echo "Library:    /usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0 (Debian package libleveldb1d 1.23-4)" ;;
  rocksdb) echo "Library:    /x/target/peers/rocksdb-7.8.3-2/lib/librocksdb.so.7.8.3 (release build (-O2 -DNDEBUG) of Debian's source package rocksdb 7.8.3-2, by scripts/build-peers.sh)" ;;
esac
echo "Keys:       16 bytes each"
echo "Entries:    1000"
case "$engine" in
  leveldb) echo "Assertions: on (the installed library has 251 assert call sites: built without -DNDEBUG)" ;;
  *) echo "Assertions: off (release build)" ;;
esac
echo "------------------------------------------------"
[ -n "$ts" ] && echo "engine,index,benchmark,elapsed_s,ops,interval_ops_per_sec" > "$ts"
io() {
  echo "# io $1 engine=$engine write_bytes=$2 cancelled_write_bytes=0 read_bytes=0 wchar=1 rchar=1 user_bytes=$3 db_size=$4 db_alloc=$4 max_rss_kb=20480 elapsed_s=0.5"
}
index=0
IFS=,
for b in $benches; do
  IFS=$old_ifs
  if [ "$engine" = lmdb ]; then
    echo "$b : quick micros/op;"
    continue
  fi
  case "$b" in
    read*|get*)
      printf "%-12s : %11s micros/op; (632 of 1000 found)\n" "$b" "$us"
      io "$b" 0 0 5000000 ;;
    lsmiter)
      i=0
      while [ "$i" -lt "$iters" ]; do
        echo "lsmiter-insert $i : $((100000 - i * 1000 + n)) ops/sec"
        echo "lsmiter-lookup $i : $((200000 - i * 500)) ops/sec"
        i=$((i + 1))
      done
      printf "%-12s : %11s micros/op; (10 of 10 found)\n" "$b" "$us"
      io lsmiter 3000000 1000000 4000000 ;;
    *)
      printf "%-12s : %11s micros/op;   12.3 MB/s\n" "$b" "$us"
      io "$b" 2000000 1000000 6000000 ;;
  esac
  if [ -n "$ts" ]; then
    echo "$engine,$index,$b,1.000,1000,1000.0" >> "$ts"
    echo "$engine,$index,$b,2.000,1800,800.0" >> "$ts"
    echo "$engine,$index,$b,3.000,3000,1200.0" >> "$ts"
  fi
  index=$((index + 1))
  IFS=,
done
IFS=$old_ifs
