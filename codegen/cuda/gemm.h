// The GPU matmul through NVIDIA's cuBLASLt, loaded with dlopen like the Driver API and NVRTC (no
// CUDA header or library is needed to build). cuBLASLt's own epilogues (bias, ReLU) are used
// where the fused group's epilogue is exactly one of them, so the product is written once;
// other epilogues run as a generated kernel over the product (see executor.cpp).
#pragma once

#include <string>

#include "runtime/status.h"
#include "codegen/kir/gemm_problem.h"
#include "codegen/fuse/fuser.h"

namespace lf::cuda {

enum class LtEpilogue { kNone, kBias };
const char* lt_epilogue_name(LtEpilogue e);

// The part of a matmul group's epilogue cuBLASLt computes itself: the whole epilogue must be
// `+ bias` (bias broadcast along the rows: a [n] vector of the matmul's dtype, realized and
// contiguous), then or instead `+ residual` (a realized contiguous value of the output's shape and
// dtype: cuBLASLt's C with beta = 1, a transformer's x + linear(h)), with its last node the group's
// only output. Anything else: kNone with *whole = false (the product only; the epilogue runs as a
// kernel). Not relu: cuBLASLt's RELU epilogue
// turns NaN into 0 (seen on the H100: a NaN row of a float16 product came out 0), where relu,
// PyTorch's and ours, keeps NaN.
struct LtMatch {
  LtEpilogue epilogue = LtEpilogue::kNone;
  bool whole = false;             // the match covers every epilogue node
  const ir::Node* bias = nullptr;  // the bias vector's source node (realized)
  int64_t bias_offset = 0;         // elements
  const ir::Node* residual = nullptr;  // C's source node (realized), or null
  int64_t residual_offset = 0;         // elements
  ir::Node* output = nullptr;      // the node the cuBLASLt call writes (the product if no epilogue)
};
LtMatch match_lt_epilogue(const fuse::Group& group);

// D = A @ B (+ residual) (+ bias) on `device`'s stream; problem.a/b/c hold device addresses and
// D is problem.c (contiguous), as is the residual (C, read with beta = 1) when there is one. A
// Status says why cuBLASLt cannot take it (library missing, a dtype or layout it does not support,
// no algorithm): the caller then uses another path.
lf::Status lt_matmul(const kir::GemmProblem& problem, LtEpilogue epilogue, const void* bias, int device,
                     const void* residual = nullptr);

// Whether cuBLASLt reads operand `o` ([batch..., rows, cols]) as it is: a unit stride in its last
// two dims and batch dims of one stride (dtypes aside).
bool lt_reads(const kir::GemmOperand& o, const Shape& batch, int64_t rows, int64_t cols);

// Whether lt_matmul can take the problem's dtype and layout (without calling the library).
lf::Status lt_supports(const kir::GemmProblem& problem);

// "cuBLASLt 130100" when loaded, else why not (for logs and the README's claims); for a float32
// product on TF32 tensor cores (LAZYFUSE_MATMUL_TF32=1) it says so.
std::string lt_status(DType dtype = DType::Float64);

}  // namespace lf::cuda
