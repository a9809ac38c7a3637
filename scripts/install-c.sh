#!/usr/bin/env bash
# Installs Shale's C library (LevelDB 1.23's C API over Shale).
#
# Usage: scripts/install-c.sh [--prefix DIR] [--from DIR]
#   --prefix DIR  where to install (default: /usr/local)
#   --from DIR    take libshale_c.so and libshale_c.a from DIR (a cargo
#                 target directory such as target/debug) instead of running
#                 `cargo build --release -p shale-c`
#
# Layout under PREFIX:
#   include/shale/c.h                  the header (LevelDB's API + Shale's)
#   include/shale/compat/leveldb/c.h   <leveldb/c.h> for programs that include
#                                      LevelDB's header, without LevelDB
#   lib/libshale_c.so, lib/libshale_c.a
#   lib/pkgconfig/shale.pc             cflags and libs (-lshale_c)
#   lib/shale-leveldb/libleveldb.so.1  the stand-in: same soname as upstream
#                                      LevelDB, exporting the same leveldb_*
#                                      symbols, linked from libshale_c.a;
#                                      libleveldb.so.1d (Debian's soname) and
#                                      libleveldb.so link to it. Kept in a
#                                      directory of its own so that it
#                                      replaces LevelDB only for programs run
#                                      with LD_LIBRARY_PATH=PREFIX/lib/shale-leveldb.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix=/usr/local
from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --from) from="$2"; shift 2 ;;
    --from=*) from="${1#--from=}"; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "install-c: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [ -z "$from" ]; then
  (cd "$root" && cargo build --release -p shale-c)
  from="${CARGO_TARGET_DIR:-$root/target}/release"
fi
for f in libshale_c.so libshale_c.a; do
  [ -f "$from/$f" ] || { echo "install-c: $from/$f not found" >&2; exit 1; }
done

cc="${CC:-cc}"
crate="$root/crates/shale-c"
mkdir -p "$prefix/include/shale/compat/leveldb" "$prefix/lib/pkgconfig" \
  "$prefix/lib/shale-leveldb"
prefix="$(cd "$prefix" && pwd)"

install -m 644 "$crate/include/shale/c.h" "$prefix/include/shale/c.h"
install -m 644 "$crate/include/compat/leveldb/c.h" \
  "$prefix/include/shale/compat/leveldb/c.h"
install -m 755 "$from/libshale_c.so" "$prefix/lib/libshale_c.so"
install -m 644 "$from/libshale_c.a" "$prefix/lib/libshale_c.a"

# The stand-in. The system libraries a Rust static library needs
# (`rustc --print native-static-libs`) follow it.
standin="$prefix/lib/shale-leveldb"
"$cc" -shared -o "$standin/libleveldb.so.1" \
  -Wl,-soname,libleveldb.so.1 \
  -Wl,--version-script="$crate/leveldb.map" \
  -Wl,--whole-archive "$from/libshale_c.a" -Wl,--no-whole-archive \
  -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
ln -sf libleveldb.so.1 "$standin/libleveldb.so.1d"
ln -sf libleveldb.so.1 "$standin/libleveldb.so"

version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$crate/Cargo.toml" | head -1)"
cat > "$prefix/lib/pkgconfig/shale.pc" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: shale
Description: Shale, an embedded ordered key-value store, through LevelDB 1.23's C API
Version: $version
Cflags: -I\${includedir} -I\${includedir}/shale/compat
Libs: -L\${libdir} -lshale_c
Libs.private: -lpthread -ldl -lm
EOF

echo "install-c: installed Shale's C library under $prefix"
