// Fixed CUDA C library kernels (scans, scatters: issue 23), compiled by NVRTC once per source and
// device and kept for the process, like cuBLASLt's plans; they take plain parameters, not the
// kernel IR's metadata, so they live outside the kernel cache.
#pragma once

#include <string>

#include "lazyfuse/types.h"
#include "runtime/status.h"

namespace lf::cuda {

// The CUfunction `entry` (an extern "C" kernel) of `source` (kPrelude is prepended) loaded on
// `device`; compiled on first use. An error names the entry and carries NVRTC's log.
lf::StatusOr<void*> library_function(const std::string& source, const std::string& entry, int device);

// The conversions between d's storage and compute types, as CUDA C macros LOAD(s) and STORE(c), with
// S and C the two types: the head of a library kernel's source for dtype d.
std::string dtype_macros(DType d);

}  // namespace lf::cuda
