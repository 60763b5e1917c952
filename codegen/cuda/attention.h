// The CUDA flash-attention kernel's source and shared memory (codegen/cuda/attention.cpp), for
// tests that compile it with NVRTC on machines without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "lazyfuse/types.h"

namespace lf::cuda {

// The CUDA C every attention kernel starts with: the parameter block `Params` (the host's struct of
// codegen/cuda/attention.cpp) and `lf_batch_offsets`.
const char* attention_prelude();

// The CUDA C of the kernel `lf_attention` for a dtype, head dims d (q, k) and dv (v), a mask kind
// (ir::AttentionParams::Mask) and causal or not.
std::string attention_source(DType dtype, int64_t d, int64_t dv, int mask, bool causal);
// The dynamic shared memory a block of that kernel uses.
size_t attention_shared_bytes(DType dtype, int64_t d, int64_t dv);

// Hopper's warpgroup MMA for the tensor-core kernels (codegen/cuda/attention_wgmma.cpp): the device
// helpers (descriptors, fences, lf_keep_a) and the products lf_wgmma_ss<ss_n>(d, desc_a, desc_b, acc),
// both operands K-major in shared memory, and lf_wgmma_rs<rs_n>(d, a, desc_b, acc), A from
// registers (B N-major where rs_b_n_major; TF32 takes K-major only), m64 x n x k16 for "f16" and
// "bf16", k8 for "tf32", d = A B + (acc ? d : 0); lf_keep<n>(d) holds d's registers in place. The
// caller fences before and waits after (lf_wg_fence, lf_wg_wait).
std::string attention_wgmma_helpers(const std::string& type, int ss_n, int rs_n, bool rs_b_n_major);

// The tensor-core kernel for float16 and bfloat16 (codegen/cuda/attention_tc.cpp): the same
// `lf_attention` entry and parameter block, attention_tc_rows() query rows a block of 128 threads.
// Whether it runs a call of that dtype and head dims; if not, `why` says why (for the log).
bool attention_tc_supports(DType dtype, int64_t d, int64_t dv, std::string* why);
// Whether the same kernel runs its products as Hopper's warpgroup MMA (wgmma: sm_90, head dims 64
// and 128), compiled for sm_90a; if not, `why` says why.
bool attention_wgmma_supports(DType dtype, int64_t d, int64_t dv, int sm_major, int sm_minor, std::string* why);
// Keys a K/V tile; with wgmma, 64 or (few_blocks: attention_wgmma_few_blocks) 128 at head dims up to 64.
int attention_tc_keys_per_tile(int64_t d, int64_t dv, bool wgmma = false, bool few_blocks = false);
// Whether a wgmma grid of `blocks` has fewer than 4 blocks an SM (it then takes 128-key tiles).
bool attention_wgmma_few_blocks(long long blocks, int multiprocessors);
// Query rows a block (64 or 128) for head dims, a mask kind and LAZYFUSE_ATTENTION_ROWS (0: auto);
// 64 with wgmma.
int attention_tc_rows(int64_t d, int64_t dv, int mask, int requested, bool wgmma = false);
// Whether a causal grid of `batch` heads by `qblocks` query blocks runs in pairs (a block takes
// query blocks qblocks - 1 - u and u of a head): `requested` 1 or 0 (LAZYFUSE_ATTENTION_PAIRS),
// else (-1) for the wgmma kernel where the paired grid has at least 3 blocks an SM. The grid then
// has batch * ceil(qblocks / 2) blocks.
bool attention_tc_pairs(bool causal, bool wgmma, long long batch, long long qblocks, int multiprocessors,
                        int requested);
std::string attention_tc_source(DType dtype, int64_t d, int64_t dv, int mask, bool causal, int rows, bool wgmma = false,
                                bool few_blocks = false, bool pairs = false);
size_t attention_tc_shared_bytes(int64_t d, int64_t dv, int rows, bool wgmma = false, bool few_blocks = false);

// The float32 tensor-core kernel (codegen/cuda/attention_f32.cpp: three TF32 products a product,
// float32 accuracy): the same entry and parameter block, attention_f32_rows() query rows a block.
bool attention_f32_supports(DType dtype, int64_t d, int64_t dv, std::string* why);
int attention_f32_rows();
int attention_f32_keys_per_tile(int64_t d, int64_t dv, bool wgmma = false);
// Whether it runs its products as Hopper's warpgroup MMA (sm_90, compiled for sm_90a; V stored
// transposed); if not, `why` says why.
bool attention_f32_wgmma_supports(int64_t d, int64_t dv, int sm_major, int sm_minor, std::string* why);
// Whether a grid of `blocks` takes the kernel's many-blocks variant (Q from shared memory, 3 blocks
// an SM): head dims up to 64, at least 3 blocks an SM.
bool attention_f32_many_blocks(int64_t d, int64_t dv, long long blocks, int multiprocessors);
// tf32: one TF32 product a product instead of three (the user allowed TF32: LAZYFUSE_MATMUL_TF32).
std::string attention_f32_source(int64_t d, int64_t dv, int mask, bool causal, bool many_blocks = false,
                                 bool tf32 = false, bool wgmma = false);
size_t attention_f32_shared_bytes(int64_t d, int64_t dv, bool wgmma = false);

}  // namespace lf::cuda
