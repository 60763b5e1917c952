#!/usr/bin/env bash
# The CPU backend built for aarch64 and its tests run under qemu-user, on an x86-64 Debian 12 host:
# Debian's cross toolchain, arm64 packages (LLVM 19, GoogleTest and their libraries) unpacked into
# a sysroot (apt-get download + dpkg -x: installing llvm-19-dev:arm64 beside the amd64 one would
# conflict), cmake/aarch64-linux-gnu.cmake, then lazyfuse_cpu_tests (tests/CMakeLists.txt) run with
# `qemu-aarch64 -L sysroot`. Kernels load with LLVM ORC there (the ELF loader knows x86-64 only).
#   tests/aarch64/run.sh [gtest args...]     e.g. --gtest_filter='SplitReduce*'
# AARCH64_DIR (default build-aarch64) holds the packages, the sysroot and the build;
# AARCH64_OPT (default -O1: the cross build is most of the time, the generated kernels are O3
# whatever it is) the optimization of the library and tests. Needs root once, for
# `dpkg --add-architecture arm64` and apt-get install; exits 77 when a tool is missing.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.."
root=$PWD
dir=$(readlink -f "${AARCH64_DIR:-build-aarch64}")
mkdir -p "$dir"
sysroot=$dir/sysroot
gtest_root=$dir/gtest
start=$SECONDS

for tool in aarch64-linux-gnu-g++ qemu-aarch64 cmake ninja dpkg apt-get; do
  if ! command -v $tool >/dev/null; then
    echo "[aarch64] $tool is missing: apt-get install g++-aarch64-linux-gnu qemu-user cmake ninja-build" >&2
    exit 77
  fi
done

# The arm64 packages the library, the plugin and the tests link and run with.
packages="gcc-12-base libacl1 libbsd0 libbz2-1.0 libc6 libc6-dev libcrypt1 libcrypt-dev libedit2 libffi8
  libffi-dev libicu72 libicu-dev libllvm19 liblzma5 libmd0 libncurses6 libncursesw6 libncurses-dev libtinfo6
  libpfm4 libstdc++6 libxml2 libxml2-dev libz3-4 libz3-dev libzstd1 libzstd-dev zlib1g zlib1g-dev
  linux-libc-dev llvm-19 llvm-19-dev llvm-19-linker-tools llvm-19-runtime llvm-19-tools libclang-cpp19
  libyaml-0-2 libselinux1 libpcre2-8-0"
if [ ! -e "$sysroot/.complete" ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64
    apt-get update
  fi
  mkdir -p "$dir/debs" && (cd "$dir/debs" && apt-get download $(for p in $packages libgtest-dev; do echo $p:arm64; done))
  rm -rf "$sysroot" "$gtest_root"
  for deb in "$dir"/debs/*.deb; do
    case $(basename "$deb") in
      libgtest-dev_*) dpkg -x "$deb" "$gtest_root" ;;  # apart: the sysroot's /usr/include has a C library
      *) dpkg -x "$deb" "$sysroot" ;;
    esac
  done
  # Absolute links (libz.so -> /lib/aarch64-linux-gnu/libz.so.1) point into the sysroot.
  find "$sysroot" -type l -lname '/*' | while read -r link; do
    ln -sfn "$sysroot$(readlink "$link")" "$link"
  done
  touch "$sysroot/.complete"
  echo "[aarch64] sysroot ready in $((SECONDS - start)) s"
fi

build=$dir/build
if [ ! -e "$build/build.ninja" ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
    -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
    -DLAZYFUSE_AARCH64_SYSROOT="$sysroot" -DLAZYFUSE_AARCH64_GTEST_ROOT="$gtest_root" \
    -DCMAKE_CXX_FLAGS_RELEASE="${AARCH64_OPT:--O1} -DNDEBUG" -DLAZYFUSE_BUILD_BENCH=OFF
fi
build_start=$SECONDS
[ -n "${AARCH64_CONFIGURE_ONLY:-}" ] && exit 0
nice ninja -C "$build" lazyfuse_cpu_tests
echo "[aarch64] built in $((SECONDS - build_start)) s"

test_start=$SECONDS
set +e
LAZYFUSE_CACHE_DIR=off qemu-aarch64 -L "$sysroot" "$build/tests/lazyfuse_cpu_tests" "$@"
rc=$?
set -e
echo "[aarch64] tests ran in $((SECONDS - test_start)) s under qemu-aarch64 (exit $rc); $((SECONDS - start)) s in all"
exit $rc
