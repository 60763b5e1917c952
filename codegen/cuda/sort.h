// The CUDA sort (Backend::sort on a GPU; sort.cpp): its CUDA C, one module per key dtype.
#pragma once

#include <string>

#include "lazyfuse/types.h"

namespace lf::cuda {

// The sort module's CUDA C for keys of `dtype` (the block sort, the block selection for topk and
// the radix sort's kernels); tests compile it with NVRTC where there is no GPU.
std::string sort_source(DType dtype);

// The radix sort's passes for keys of `dtype`: 8-bit digits from bit *first_shift of the
// order-preserving key up, only where keys can differ (bool's key is 0 or 1; a bfloat16's is its
// high 16 bits; a float16's, a float widened exactly, has 13 low bits that never differ).
int radix_passes(DType dtype, int* first_shift);

}  // namespace lf::cuda
