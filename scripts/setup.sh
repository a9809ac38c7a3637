#!/usr/bin/env bash
# Installs everything the build, the tests and the benchmark need on a fresh
# Debian 12 machine: the peer libraries the benchmark links against (and the
# compatibility tests read and write with), and the Rust toolchain's parts.
set -euo pipefail

PACKAGES=(
  build-essential pkg-config clang libclang-dev libclang-rt-14-dev
  libleveldb-dev libsnappy-dev librocksdb-dev libsqlite3-dev
  libkyotocabinet-dev libwiredtiger-dev liblmdb-dev
  fonts-dejavu-core
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust (rustup) first" >&2
  exit 1
fi
