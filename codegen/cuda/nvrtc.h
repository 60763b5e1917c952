// NVRTC (dlopen'd like the driver): CUDA C to a cubin for an architecture, with no GPU needed.
#pragma once

#include <string>
#include <vector>

#include "runtime/status.h"

namespace lf::cuda {

// How a source is compiled.
struct NvrtcBuild {
  // Optimized for compile time (--Ofast-compile=mid, NVRTC 12.8 and later): a tiered kernel's
  // quick build.
  bool quick = false;
  // Whether the compiler may contract a * b + c into one fused multiply-add. Off (--fmad=false)
  // for generated kernels, whose quick and optimized builds must give the same bits: at
  // --Ofast-compile=mid NVVM leaves `a * b + c` a mul and an add, fully optimized it fuses them
  // (nvcc 13.0's PTX, 2026-12-04), so a tiered kernel's result changed in the last bit when its
  // optimized build was swapped in (Determinism.TwiceInOneProcess failed on the H200). Generated
  // kernels are memory-bound: the extra instruction costs nothing measurable. Library kernels
  // (GEMM, attention, convolutions) have one build and keep contraction.
  bool contract = true;
};

// A generated kernel's build (tiered: `quick` or optimized; no contraction). Defined in nvrtc.cpp,
// one of the sources the kernel cache's fingerprint covers, so a change of it invalidates
// persistent caches.
NvrtcBuild generated_kernel_build(bool quick);

// Source -> cubin for `arch` ("sm_90"); the compiler's log goes to *log.
lf::StatusOr<std::vector<char>> nvrtc_compile(const std::string& source, const std::string& name,
                                              const std::string& arch, NvrtcBuild build, std::string* log);

// Ok, or kUnavailable saying why NVRTC cannot be used here.
lf::Status nvrtc_status();
// "13.0".
std::string nvrtc_version();

// Compiles CUDA source with NVRTC for `arch` without loading it: works on a machine with NVRTC but
// no GPU, which is how the tests check generated code without one.
lf::Status check_compiles(const std::string& source, const std::string& name, const std::string& arch);

// Whether quick builds (tiered compiling) can be made.
bool quick_builds_available();

}  // namespace lf::cuda
