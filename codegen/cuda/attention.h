// The CUDA flash-attention kernel's source and shared memory (codegen/cuda/attention.cpp), for
// tests that compile it with NVRTC on machines without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "lazyfuse/types.h"

namespace lf::cuda {

// The CUDA C of the kernel `lf_attention` for a dtype, head dims d (q, k) and dv (v), a mask kind
// (ir::AttentionParams::Mask) and causal or not.
std::string attention_source(DType dtype, int64_t d, int64_t dv, int mask, bool causal);
// The dynamic shared memory a block of that kernel uses.
size_t attention_shared_bytes(DType dtype, int64_t d, int64_t dv);

}  // namespace lf::cuda
