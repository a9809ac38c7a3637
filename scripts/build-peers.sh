#!/usr/bin/env bash
# Builds release copies of the two peers Debian ships with assertions on
# (libleveldb and librocksdb are compiled without -DNDEBUG), from Debian's own
# source packages of the same versions, the way upstream builds them for
# production: CMake Release (-O2 -DNDEBUG), shared library, the same
# compression libraries as Debian's build, Debian's patches applied.
#
#   scripts/build-peers.sh [--with-db-bench] [--only=leveldb|rocksdb] [--dir=DIR]
#
# Results (DIR defaults to $SHALE_PEERS_DIR, else target/peers):
#   DIR/leveldb-1.23-4/{include,lib}     libleveldb.so (+ libleveldb.a)
#   DIR/rocksdb-7.8.3-2/{include,lib}    librocksdb.so
#   DIR/<name>-<version>/bin/db_bench    the peer's own db_bench (--with-db-bench)
#   DIR/<name>-<version>/STAMP           version + flags; a build whose stamp
#                                        matches is not redone
#   DIR/<name>-<version>/build-time      seconds the library build took
# Sources are fetched with `apt-get source` into DIR/src (deb-src is enabled
# for that call only, with its own package lists, when the system has none).
# Builds run under `nice -n 10` with -j$JOBS (default 2).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${SHALE_PEERS_DIR:-$ROOT/target/peers}
JOBS=${JOBS:-2}
WITH_DB_BENCH=0
ONLY=""
for arg in "$@"; do
  case "$arg" in
    --with-db-bench) WITH_DB_BENCH=1 ;;
    --only=*) ONLY=${arg#--only=} ;;
    --dir=*) DIR=${arg#--dir=} ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "build-peers: unknown argument: $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)

# The versions of Debian 12's binary packages the benchmark otherwise links.
LEVELDB_VERSION=1.23-4
ROCKSDB_VERSION=7.8.3-2

NICE=(nice -n 10)
log() { echo "build-peers: $*"; }
die() { echo "build-peers: error: $*" >&2; exit 1; }

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

need_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
  fi
}

# apt-get source, with deb-src enabled for this call only when the system
# has no deb-src entry. The temporary sources get their own lists and cache
# directories so the system's package lists are left as they are.
fetch_source() { # package version -> sets SRC to the unpacked source directory
  local pkg=$1 ver=$2 upstream=${2%-*} dest="$DIR/src"
  local tree="$dest/$pkg-$upstream"
  SRC=$tree
  [ -f "$tree/.fetched-$ver" ] && return
  mkdir -p "$dest"
  rm -rf "$tree"
  local apt_opts=()
  if ! grep -rqsE '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)' \
      /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
    local W="$DIR/apt"
    mkdir -p "$W/lists/partial" "$W/cache/archives/partial"
    local list="$W/deb-src.sources"
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      sed -E 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$list"
    elif [ -f /etc/apt/sources.list ]; then
      list="$W/deb-src.list"
      sed -nE 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list >"$list"
    else
      die "no apt sources found to derive a deb-src entry from"
    fi
    apt_opts=(-o "Dir::Etc::SourceList=$list" -o Dir::Etc::SourceParts=/dev/null
              -o "Dir::State::Lists=$W/lists" -o "Dir::Cache=$W/cache")
    if [ -z "${DEB_SRC_LISTS_FETCHED:-}" ]; then
      log "fetching the deb-src package lists into $W (system lists untouched)"
      apt-get "${apt_opts[@]}" update -qq
      DEB_SRC_LISTS_FETCHED=1
    fi
  fi
  log "apt-get source $pkg=$ver (Debian's patches applied)"
  (cd "$dest" && apt-get "${apt_opts[@]}" source -qq "$pkg=$ver") \
    || die "apt-get source $pkg=$ver failed"
  [ -d "$tree" ] || die "apt-get source did not unpack $tree"
  # The system's lists must still have the binary packages.
  local policy
  policy=$(apt-cache policy libsnappy-dev 2>&1 || true)
  grep -q 'Candidate: [0-9]' <<<"$policy" \
    || die "apt-cache has no candidate for libsnappy-dev after fetching sources"
  touch "$tree/.fetched-$ver"
}


# The flags every build shares: upstream's release mode at -O2 (CMake's own
# Release default is -O3), assertions off.
RELEASE_FLAGS="-O2 -DNDEBUG"
COMMON_CMAKE=(-G Ninja -DCMAKE_BUILD_TYPE=Release
  "-DCMAKE_C_FLAGS_RELEASE=$RELEASE_FLAGS" "-DCMAKE_CXX_FLAGS_RELEASE=$RELEASE_FLAGS")

compiler_id() { "${CXX:-c++}" --version | head -1; }

# The stamp a finished build leaves: what was built and how.
stamp_text() { # name version cmake-args...
  local name=$1 ver=$2; shift 2
  printf 'name=%s\nversion=%s\ncompiler=%s\nflags=%s\ncmake=%s\n' \
    "$name" "$ver" "$(compiler_id)" "$RELEASE_FLAGS" "$*"
}

up_to_date() { # prefix expected-stamp
  [ -f "$1/STAMP" ] && [ "$(cat "$1/STAMP")" = "$2" ]
}

# Fails unless the library at $1 was linked against every library named after it.
check_links() {
  local so=$1; shift
  local deps n
  deps=$(ldd "$so")
  for n in "$@"; do
    grep -q "lib$n" <<<"$deps" || die "$so does not link lib$n"
  done
}

# Fails unless the library at $1 has no call to __assert_fail (the check
# db_bench's build script makes).
check_no_asserts() {
  local n
  n=$(objdump -d --no-show-raw-insn "$1" | grep -c 'call.*<__assert_fail@plt>' || true)
  [ "$n" -eq 0 ] || die "$1 still has $n assert call sites"
  log "$1: 0 assert call sites"
}

# Configures build directory $2 of source $1 with the remaining arguments;
# a directory configured with other arguments is emptied first, so that an
# option dropped from the list does not linger in CMake's cache.
configure() {
  local src=$1 build=$2; shift 2
  local want="$*"
  if [ -f "$build/.build-peers-config" ] && [ "$(cat "$build/.build-peers-config")" != "$want" ]; then
    log "configuration changed: emptying $build"
    rm -rf "$build"
  fi
  cmake -S "$src" -B "$build" "$@" >/dev/null
  printf '%s\n' "$want" >"$build/.build-peers-config"
}

build_leveldb() {
  local ver=$LEVELDB_VERSION prefix="$DIR/leveldb-$LEVELDB_VERSION"
  # Debian's build links libsnappy and neither Google's crc32c library nor
  # tcmalloc: the probes are pinned so that installing those changes nothing.
  local cmake_args=("${COMMON_CMAKE[@]}" -DLEVELDB_BUILD_TESTS=OFF -DLEVELDB_INSTALL=OFF
    -DHAVE_SNAPPY=1 -DHAVE_CRC32C=0 -DHAVE_TCMALLOC=0)
  local stamp
  stamp=$(stamp_text leveldb "$ver" "${cmake_args[*]}")
  local src
  if up_to_date "$prefix" "$stamp"; then
    log "leveldb $ver: up to date in $prefix"
  else
    need_packages cmake ninja-build g++ libsnappy-dev
    fetch_source leveldb "$ver"; src=$SRC
    rm -rf "$prefix"
    local t0=$SECONDS
    # The shared library the benchmark links, and the static one whose
    # crc32c.cc.o it times (position-independent, as Debian builds it).
    log "leveldb $ver: building libleveldb.so (nice -n 10, -j$JOBS)"
    configure "$src" "$src/build-shared" "${cmake_args[@]}" \
      -DBUILD_SHARED_LIBS=ON -DLEVELDB_BUILD_BENCHMARKS=OFF
    "${NICE[@]}" cmake --build "$src/build-shared" -j "$JOBS" --target leveldb
    log "leveldb $ver: building libleveldb.a"
    configure "$src" "$src/build-static" "${cmake_args[@]}" \
      -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
      -DLEVELDB_BUILD_BENCHMARKS=ON
    "${NICE[@]}" cmake --build "$src/build-static" -j "$JOBS" --target leveldb
    mkdir -p "$prefix/lib" "$prefix/include"
    cp -a "$src/build-shared"/libleveldb.so* "$src/build-static/libleveldb.a" "$prefix/lib/"
    cp -a "$src/include/leveldb" "$prefix/include/"
    check_links "$prefix/lib/libleveldb.so" snappy
    check_no_asserts "$prefix/lib/libleveldb.so"
    echo $((SECONDS - t0)) >"$prefix/build-time"
    printf '%s\n' "$stamp" >"$prefix/STAMP"
    log "leveldb $ver: built in $((SECONDS - t0)) s into $prefix"
  fi
  if [ "$WITH_DB_BENCH" = 1 ] && [ ! -x "$prefix/bin/db_bench" ]; then
    # LevelDB's db_bench links the static library (it calls internal code)
    # and includes GoogleTest's headers through util/testutil.h.
    need_packages libgtest-dev libgmock-dev
    fetch_source leveldb "$ver"; src=$SRC
    [ -d "$src/build-static" ] || die "rebuild leveldb: $src/build-static is gone"
    log "leveldb $ver: building LevelDB's own db_bench"
    "${NICE[@]}" cmake --build "$src/build-static" -j "$JOBS" --target db_bench
    mkdir -p "$prefix/bin"
    cp "$src/build-static/db_bench" "$prefix/bin/db_bench"
    log "leveldb $ver: $prefix/bin/db_bench"
  fi
}

build_rocksdb() {
  local ver=$ROCKSDB_VERSION prefix="$DIR/rocksdb-$ROCKSDB_VERSION"
  # Debian's configuration (debian/rules) for the compression libraries and
  # PORTABLE, in release mode, the shared library only. gflags and the
  # benchmark tools are configured (Debian's library links libgflags too) so
  # that RocksDB's own db_bench can be built later from this same build
  # directory without recompiling the library; gflags changes no library
  # source, and only the shared-library target is built here.
  local cmake_args=("${COMMON_CMAKE[@]}"
    -DWITH_SNAPPY=ON -DWITH_LZ4=ON -DWITH_ZLIB=ON -DWITH_ZSTD=ON -DWITH_BZ2=ON
    -DROCKSDB_BUILD_SHARED=ON -DPORTABLE=ON -DFAIL_ON_WARNINGS=OFF
    -DWITH_TESTS=OFF -DWITH_TOOLS=OFF -DWITH_CORE_TOOLS=OFF
    -DWITH_BENCHMARK_TOOLS=ON -DWITH_GFLAGS=ON
    -DWITH_LIBURING=OFF -DWITH_JEMALLOC=OFF -DWITH_NUMA=OFF -DWITH_TBB=OFF)
  local stamp
  stamp=$(stamp_text rocksdb "$ver" "${cmake_args[*]}")
  local src
  if up_to_date "$prefix" "$stamp"; then
    log "rocksdb $ver: up to date in $prefix"
  else
    need_packages cmake ninja-build g++ libsnappy-dev liblz4-dev zlib1g-dev \
      libzstd-dev libbz2-dev libgflags-dev
    fetch_source rocksdb "$ver"; src=$SRC
    rm -rf "$prefix"
    local t0=$SECONDS
    log "rocksdb $ver: building librocksdb.so (nice -n 10, -j$JOBS; this takes long)"
    configure "$src" "$src/build" "${cmake_args[@]}"
    "${NICE[@]}" cmake --build "$src/build" -j "$JOBS" --target rocksdb-shared
    mkdir -p "$prefix/lib" "$prefix/include"
    cp -a "$src/build"/librocksdb.so* "$prefix/lib/"
    cp -a "$src/include/rocksdb" "$prefix/include/"
    check_links "$prefix/lib/librocksdb.so" snappy lz4 z bz2 zstd
    check_no_asserts "$prefix/lib/librocksdb.so"
    echo $((SECONDS - t0)) >"$prefix/build-time"
    printf '%s\n' "$stamp" >"$prefix/STAMP"
    log "rocksdb $ver: built in $((SECONDS - t0)) s into $prefix"
  fi
  if [ "$WITH_DB_BENCH" = 1 ] && [ ! -x "$prefix/bin/db_bench" ]; then
    fetch_source rocksdb "$ver"; src=$SRC
    [ -d "$src/build" ] || die "rebuild rocksdb: $src/build is gone"
    log "rocksdb $ver: building RocksDB's own db_bench"
    "${NICE[@]}" cmake --build "$src/build" -j "$JOBS" --target db_bench
    mkdir -p "$prefix/bin"
    cp "$src/build/db_bench" "$prefix/bin/db_bench"
    # RocksDB's CMake links its tools without an rpath, and the release
    # library has the soname of Debian's: it must be named at run time.
    local deps
    deps=$(LD_LIBRARY_PATH="$prefix/lib" ldd "$prefix/bin/db_bench")
    grep -q "=> $prefix/lib/librocksdb" <<<"$deps" \
      || die "$prefix/bin/db_bench does not load $prefix/lib/librocksdb.so"
    log "rocksdb $ver: $prefix/bin/db_bench (run it with LD_LIBRARY_PATH=$prefix/lib, or it loads Debian's librocksdb)"
  fi
}

case "$ONLY" in
  "") build_leveldb; build_rocksdb ;;
  leveldb) build_leveldb ;;
  rocksdb) build_rocksdb ;;
  *) die "--only takes leveldb or rocksdb, not $ONLY" ;;
esac
log "done: $DIR"
