// The float32 tensor-core flash-attention kernel: FlashAttention-2's forward on TF32 mma.sync with
// each product taken as three (big * big + big * small + small * big, every operand split as
// x = big + small into two TF32 values), CUTLASS's "FastF32" and what PyTorch's memory-efficient
// SDPA runs for float32. A product keeps about 21 of float32's 24 bits (the term small * small
// that is dropped is below 2^-22 of it), so the result stays within the float32 tolerance of the
// reference, which a single TF32 product (10 bits) would not. CUDA C compiled by NVRTC;
// codegen/cuda/attention.cpp picks it for float32 at head dims 32, 64, 128 and launches it with the
// other kernels' parameter block.
//
// A block of 4 warps takes BR = 64 query rows of one batch-head, a warp 16 of them; K and V stream
// in tiles of BC = 32 keys (16 at head dim 128): each thread loads its share of the next tile into
// registers while the current one is computed, then splits it into shared memory, so the split is
// done once a tile rather than once a warp. The split of a tile is three instructions a value (an
// integer rounding to TF32, a subtraction: lf_split_fast), with the exact one (lf_split) again only
// where a check sum says the tile has inf, NaN or a value near the largest float; on the H200 the
// exact split of every value took a third of the kernel's time. Q is split once; at head dims up
// to 64 its fragments stay in registers. S = Q K^T and O += P V are m16n8k8 mma with float32
// accumulators, online softmax in registers as the 16-bit kernel (attention_tc.cpp). P goes from
// the S accumulators to A fragments without a shuffle by permuting the keys of each 8-key step:
// the thread that holds scores of keys 2t and 2t + 1 feeds them as k-indices t and t + 4, and
// reads V's rows 2t and 2t + 1 for them.
//
// WG (sm_90, compiled for sm_90a): the products are Hopper's warpgroup MMA, m64 x n x k8 on TF32.
// The 4 warps are one warpgroup of the 64 rows; Q, K and V sit in shared memory as separate big
// and small tiles, 128-byte swizzled; S = Q K^T reads both from shared memory, O += P V takes P
// from registers (the same fragments as mma.sync's). TF32 operands must be K-major, so V is stored
// transposed, its keys in the permuted order P's fragments give them: the even keys of an 8-key
// group are 4 consecutive places of a V^T row, the odd ones the next 4, and a thread that loads 4
// such keys' rows stores a 16-byte chunk a column. A tile with inf or NaN (or a Q with them) takes
// the guarded products below on mma.sync, reading the same tiles.
//
// inf and NaN: a split of inf or NaN is (x, 0), and the big * small and small * big terms would
// turn inf * 0 into NaN where the unfused product gives inf. A tile whose K (or V) holds a
// non-finite value, or a warp whose Q rows do, takes the guarded products instead, in which each
// small term multiplies the other operand's big part with non-finite values zeroed: the non-finite
// values reach the result through big * big alone, exactly as in float32. Semantics are otherwise
// the other kernels': NaN wins the max, a fully masked row is 0 / 0 = NaN, and a non-finite value
// of V past the diagonal makes its column NaN.
#include <string>

#include "codegen/cuda/attention.h"

namespace lf::cuda {
namespace {

constexpr int kRows = 64;

#include "codegen/cuda/attention_f32_kernel.inc"

}  // namespace

bool attention_f32_supports(DType dtype, int64_t d, int64_t dv, std::string* why) {
  auto dim_ok = [](int64_t x) { return x == 32 || x == 64 || x == 128; };
  if (dtype != DType::Float32) {
    *why = "not float32";
    return false;
  }
  if (!dim_ok(d) || !dim_ok(dv)) {
    *why = "head dims other than 32, 64, 128";
    return false;
  }
  return true;
}

int attention_f32_rows() { return kRows; }
int attention_f32_keys_per_tile(int64_t d, int64_t dv, bool wgmma) { return !wgmma && (d > 64 || dv > 64) ? 16 : 32; }

bool attention_f32_wgmma_supports(int64_t d, int64_t dv, int sm_major, int sm_minor, std::string* why) {
  if (!attention_f32_supports(DType::Float32, d, dv, why)) return false;
  if (sm_major != 9 || sm_minor != 0) {
    *why = "not an sm_90 GPU (wgmma is Hopper's)";
    return false;
  }
  return true;
}

// Grids of at least 3 blocks an SM at head dims up to 64 read Q from shared memory at each product
// instead of keeping its fragments (64 registers) live: 236 registers a thread become 168, 3
// blocks an SM instead of 2. On the H200 (2026-11-28, causal float32, lazyfuse-programs --quick):
// B8 H16 T512 d64 0.248 -> 0.224 ms, d32 0.157 -> 0.132; B1 H8 T2048 d64 (256 blocks) 0.351 ->
// 0.389, so grids of fewer blocks keep Q in registers. Head dim 128 reads Q from shared memory at
// any grid, and forced to 3 blocks an SM it spills (0.499 -> 0.610).
// The same grids take the wgmma kernel on an sm_90 GPU. On the H200 (2026-11-29, causal float32,
// lazyfuse-programs --quick, both kernels with the fast split; mma.sync -> wgmma): B8 H16 T512 d64
// 0.164 -> 0.143 ms, d32 0.088 -> 0.073; B1 H8 T2048 d64 (256 blocks) 0.181 -> 0.195; d128 (1
// block an SM: 129 KiB of tiles) 0.361 -> 0.476.
bool attention_f32_many_blocks(int64_t d, int64_t dv, long long blocks, int multiprocessors) {
  return d <= 64 && dv <= 64 && blocks >= 3LL * multiprocessors;
}

std::string attention_f32_source(int64_t d, int64_t dv, int mask, bool causal, bool many_blocks, bool tf32,
                                 bool wgmma) {
  const int bc = attention_f32_keys_per_tile(d, dv, wgmma);
  std::string head = "#define WG " + std::string(wgmma ? "1" : "0") + "\n";
  if (wgmma)
    head += std::string(d <= 64 && dv <= 64 ? "#define MINB 3\n" : "");
  else if (many_blocks)
    head += "#define QREG 0\n#define MINB 3\n";
  head += "#define TF32X1 " + std::string(tf32 ? "1" : "0") + "\n#define BC " + std::to_string(bc) + "\n#define D " +
          std::to_string(d) + "\n#define DV " + std::to_string(dv) + "\n#define MASK " + std::to_string(mask) +
          "\n#define CAUSAL " + (causal ? "1" : "0") + "\n" + attention_prelude();
  // S = Q K^T, and O += P V with V stored transposed: TF32 operands are K-major only.
  if (wgmma) head += attention_wgmma_helpers("tf32", bc, static_cast<int>(dv), /*rs_b_n_major=*/false);
  return head + kF32Kernel;
}

size_t attention_f32_shared_bytes(int64_t d, int64_t dv, bool wgmma) {
  const size_t keys = static_cast<size_t>(attention_f32_keys_per_tile(d, dv, wgmma));
  const size_t rows = static_cast<size_t>(kRows), ud = static_cast<size_t>(d), udv = static_cast<size_t>(dv);
  // wgmma: unpadded big and small tiles from a 1024-byte boundary (up to 1024 bytes to get there).
  if (wgmma) return 2 * 4 * (rows * ud + keys * ud + keys * udv) + 1024;
  const size_t pair = 8;  // (big, small) floats
  return pair * (rows * (ud + 4) + keys * (ud + 4) + keys * (udv + 2));
}

}  // namespace lf::cuda
