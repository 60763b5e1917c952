#!/usr/bin/env bash
# The two set-up commands of LazyFuse (README, "Getting started"):
#   ./dev.sh demo   install what is missing, build (Release, Ninja) into build/, run the demo
#   ./dev.sh test   install what is missing, build, run the whole test suite with ctest
# BUILD_DIR=dir picks another build folder (CI and parallel checkouts use this); extra arguments
# after `demo` go to the demo, after `test` to ctest (e.g. ./dev.sh test -R frontend).
set -euo pipefail

cd "$(dirname "$(readlink -f "$0")")"
BUILD_DIR=${BUILD_DIR:-build}
JOBS=$(nproc)

# Debian 12 packages the build needs (the same list as the README).
PACKAGES=(cmake ninja-build g++ libgtest-dev libbenchmark-dev llvm-19-dev libeigen3-dev
  zlib1g-dev libzstd-dev python3 libdlpack-dev python3-numpy libdnnl-dev python3-torch doxygen)

log() { echo "[dev.sh] $*"; }
die() {
  echo "[dev.sh] error: $*" >&2
  exit 1
}

usage() {
  echo "usage: ./dev.sh demo [demo args...]   build and run the demo"
  echo "       ./dev.sh test [ctest args...]  build and run the test suite"
}

install_missing() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    log "no dpkg here: not checking packages (need: ${PACKAGES[*]})"
    return
  fi
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    # `dpkg -s` also succeeds for a removed package whose config files remain; ask for the state.
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  log "installing missing packages: ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "not root and no sudo: install ${missing[*]} yourself"
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

configure_and_build() {
  local args=(-S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release)
  # An existing build folder keeps its generator; CMake refuses to switch it.
  [ -f "$BUILD_DIR/CMakeCache.txt" ] || args+=(-G Ninja)
  log "configuring $BUILD_DIR (Release)"
  cmake "${args[@]}"
  log "building with $JOBS jobs"
  cmake --build "$BUILD_DIR" --parallel "$JOBS"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  demo)
    install_missing
    configure_and_build
    log "running $BUILD_DIR/lazyfuse-demo"
    "$BUILD_DIR/lazyfuse-demo" "$@"
    ;;
  test)
    install_missing
    configure_and_build
    log "running the test suite"
    ctest --test-dir "$BUILD_DIR" --output-on-failure --parallel "$JOBS" "$@"
    ;;
  -h | --help | help)
    usage
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac
