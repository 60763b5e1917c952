// NVRTC (dlopen'd like the driver): CUDA C to a cubin for an architecture, with no GPU needed.
#pragma once

#include <string>
#include <vector>

#include "runtime/status.h"

namespace lf::cuda {

// Source -> cubin for `arch` ("sm_90"); the compiler's log goes to *log. `quick`: optimized for
// compile time (--Ofast-compile=mid, NVRTC 12.8 and later).
lf::StatusOr<std::vector<char>> nvrtc_compile(const std::string& source, const std::string& name,
                                              const std::string& arch, bool quick, std::string* log);

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
