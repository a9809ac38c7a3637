#!/usr/bin/env bash
# Installs everything the build, the tests and the benchmark need on a fresh
# Debian 12 machine: the peer libraries the benchmark links against (and the
# compatibility tests read and write with), the Rust toolchain's parts, and a
# Python virtualenv (target/py-venv) with maturin and pytest for the Python
# package's tests.
set -euo pipefail

PACKAGES=(
  build-essential pkg-config clang libclang-dev libclang-rt-14-dev
  libleveldb-dev libsnappy-dev librocksdb-dev libsqlite3-dev
  libkyotocabinet-dev libwiredtiger-dev liblmdb-dev
  fonts-dejavu-core
  python3 python3-venv
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

# The Python package's build and test tools, in a virtualenv under the build
# tree (PY_VENV), made once.
PY_VENV="${PY_VENV:-target/py-venv}"
if [ ! -x "$PY_VENV/bin/maturin" ] || [ ! -x "$PY_VENV/bin/pytest" ]; then
  echo "setup: making the Python virtualenv $PY_VENV"
  python3 -m venv "$PY_VENV"
  "$PY_VENV/bin/pip" install -q --disable-pip-version-check "maturin>=1.5,<2" "pytest>=7"
fi
