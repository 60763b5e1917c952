// The CUDA sort (Backend::sort on a GPU; sort.cpp): its CUDA C, one module per key dtype.
#pragma once

#include <string>

#include "lazyfuse/types.h"

namespace lf::cuda {

// The sort module's CUDA C for keys of `dtype` (the block sort, the block selection for topk and
// the radix sort's kernels); tests compile it with NVRTC where there is no GPU.
std::string sort_source(DType dtype);

}  // namespace lf::cuda
