# Cross-compiling LazyFuse's CPU backend for aarch64 Linux with Debian's cross toolchain
# (g++-aarch64-linux-gnu) against arm64 packages unpacked into a sysroot (LLVM 19, GoogleTest); the
# programs run under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR). tests/aarch64/run.sh makes the
# sysroot and runs the CPU tests; LAZYFUSE_AARCH64_SYSROOT names the sysroot, and
# LAZYFUSE_AARCH64_GTEST_ROOT where libgtest-dev:arm64 is unpacked (apart from the sysroot, whose
# /usr/include would shadow the cross compiler's C library headers).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT LAZYFUSE_AARCH64_SYSROOT)
  set(LAZYFUSE_AARCH64_SYSROOT $ENV{LAZYFUSE_AARCH64_SYSROOT})
endif()
if(NOT LAZYFUSE_AARCH64_GTEST_ROOT)
  set(LAZYFUSE_AARCH64_GTEST_ROOT $ENV{LAZYFUSE_AARCH64_GTEST_ROOT})
endif()
if(NOT LAZYFUSE_AARCH64_SYSROOT OR NOT IS_DIRECTORY ${LAZYFUSE_AARCH64_SYSROOT})
  message(FATAL_ERROR "LAZYFUSE_AARCH64_SYSROOT must name the arm64 sysroot (tests/aarch64/run.sh makes one)")
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES LAZYFUSE_AARCH64_SYSROOT LAZYFUSE_AARCH64_GTEST_ROOT)
set(LAZYFUSE_AARCH64_SYSROOT ${LAZYFUSE_AARCH64_SYSROOT} CACHE PATH "the arm64 sysroot")
set(LAZYFUSE_AARCH64_GTEST_ROOT ${LAZYFUSE_AARCH64_GTEST_ROOT} CACHE PATH "libgtest-dev:arm64 unpacked")

# Libraries, headers and packages (LLVM's CMake package, GoogleTest) come from the sysroot only;
# programs (python3 for the fingerprint) from the host.
set(CMAKE_FIND_ROOT_PATH ${LAZYFUSE_AARCH64_SYSROOT} ${LAZYFUSE_AARCH64_GTEST_ROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# libLLVM's own dependencies (libffi, libedit, libxml2, libz3, ...) for the linker to check.
string(JOIN ":" _lf_rpath_link ${LAZYFUSE_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu
       ${LAZYFUSE_AARCH64_SYSROOT}/lib/aarch64-linux-gnu)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_lf_rpath_link}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_lf_rpath_link}")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_lf_rpath_link}")

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${LAZYFUSE_AARCH64_SYSROOT})
