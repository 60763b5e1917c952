// Kernel IR -> CUDA C for NVRTC. The generated kernel has the launch interface of cuda_backend.h:
//   extern "C" __global__ void NAME(Meta meta, Ptrs ptrs, Scratch scratch)
// Pointwise kernels run a grid-stride loop over rows x columns. Row kernels (reductions) give each
// row to one block: per reduction a strided pass over the row and a warp-shuffle + shared-memory
// block reduction (a fixed tree, so results are deterministic), then a pass writing per-element
// outputs, then the per-row outputs. A row too long for one block is split over blockIdx.y when
// the kernel has a single reduction and no per-element output; the last block of a row combines
// the partials in segment order (deterministic) and finishes the row.
#pragma once

#include <string>

#include "codegen/kir/kernel_ir.h"

namespace lf::cuda {

inline constexpr int kBlockThreads = 256;
inline constexpr int kSweepRows = 4;  // rows a row sweep (EmitOptions::row_sweep) takes a step

struct EmitOptions {
  bool index32 = true;  // every extent and offset fits int32: cheaper index math
  // Row kernels: when > 0, each thread keeps its row_cache elements of every per-element input in
  // registers (rows up to row_cache * kBlockThreads long), so each pass after the first reads
  // registers instead of memory: one trip through memory per row.
  int row_cache = 0;
  // With row_cache: rows exactly row_cache * kBlockThreads long, so the unrolled loops need no
  // bounds checks (each check is an exit from the unrolled loop: NVRTC took about a third longer
  // over softmax's kernel with them).
  // With row_sweep: rows exactly row_sweep long, the same.
  bool row_full = false;
  // Pointwise kernels: each thread handles 4 consecutive elements of a row with 16-byte loads and
  // stores (every per-element operand is 4 bytes wide, contiguous along the row and 16-byte
  // aligned at each row start; rows a multiple of 4 long). Row kernels without row_cache: their
  // passes read 4 consecutive elements of each such input with one 16-byte load, 4 loads in
  // flight a thread (inner rank 1). Chosen by the host per launch.
  bool vec4 = false;
  // >= 0: a matmul kernel (see below) whose epilogue is this pointwise kernel; input operand
  // `matmul_product` is the product, which stays in registers and is never read from memory.
  int matmul_product = -1;
  // Row kernels of short rows: when > 0 (a power of two up to 32), row_group lanes of a warp share
  // a row instead of a block (a thread a row for 1), reducing with shuffles inside the warp, so a
  // block holds kBlockThreads / row_group rows: a block per row left 254 of 256 threads idle on
  // rows of 2 elements.
  int row_group = 0;
  // Scans of lines side by side (row_group 1: a thread a line, a scan along an earlier dim): when
  // > 0, each line is cut into scan_chunks consecutive chunks, a warp a chunk, the block's 32
  // lanes 32 neighbouring lines (coalesced). A thread combines its chunk (a pass computing only the
  // scans' inputs), the chunks' totals meet in shared memory, and a second pass scans the chunk
  // from the combination of the chunks before it: scan_chunks threads a line instead of one, each
  // with its chunk's loads in flight. For kernels whose only row work is their scans.
  int scan_chunks = 0;
  // Row kernels of short rows over at least two outer dims, where some per-element input does not
  // move along the outer dims but the last (k-means' centers in sum((x[:, None] - c[None]) ^ 2,
  // -1)): when > 0 (a power of two, at least the row's length), a thread a row, the threads side by
  // side along the last outer dim (the sweep's columns), each sweeping over the earlier ones. Such
  // an input's row_sweep elements are read into registers once a thread, not once a row; the rest
  // of the row is read element by element (16 bytes at a time with vec4), and rows written side
  // by side are coalesced. Four lanes sharing each row of 16 (row_group) took 1.5 ms over
  // k-means' 2^26 rows on the H100, a sweep 0.32-0.37 ms (bench/RESULTS.md, 2026-11-25).
  int row_sweep = 0;
  // int64 aranges in integer math, start + i * step (1), or start + i where every step is 1 (2),
  // instead of through float64 (two conversions and a multiply-add an element): chosen by the
  // host when every such arange's start and step are integers small enough that float64 computes
  // the same values (int_aranges).
  int int_arange = 0;
  // Per kernel instruction: an int64 value computed in 32-bit math (declared as `int v<i>_`, with
  // `i64 v<i>` its widening for every other use), because the launch's sizes and parameters bound
  // it, and every int64 value it is computed from, within int32 (narrow_ints). Index math of pads,
  // slice assignments, rolls and triangles: int64 compares, clamps and multiplies cost several
  // instructions each on the GPU.
  std::vector<bool> narrow = {};
  // Pointwise kernels that are not vec4, over rows of one inner dim: when > 0, a thread per column
  // (blockIdx.x, threadIdx.x) takes rows2d consecutive rows at a time (blockIdx.y, striding over
  // the rest), so an element costs no division into row and column and a thread has rows2d
  // elements' loads in flight. Stencils and other remapped or strided reads, which vec4 cannot
  // take: one thread an element spent about as long on index math as on memory.
  int rows2d = 0;
};

// EmitOptions::int_arange for `kernel` launched with `params`: 2 when every int64 arange has an
// integral start and a step of 1, 1 when integral steps, with start + i * step exact in float64
// for every i below 2^31, else 0.
int int_aranges(const kir::Kernel& kernel, const std::vector<int64_t>& params);

// EmitOptions::narrow for `kernel` launched with `args` (int_arange as options_for chose it): an
// interval analysis over the int64 instructions whose values follow from the launch alone (aranges
// in integer math, integer parameters, and add, sub, mul, neg, abs, square, maximum, minimum,
// where, copy and casts over them). Empty when no instruction narrows.
std::vector<bool> narrow_ints(const kir::Kernel& kernel, const kir::LaunchArgs& args, int int_arange);

// The key text of EmitOptions::narrow: "" or "|n" and the narrowed instructions' numbers.
std::string narrow_key(const std::vector<bool>& narrow);

// The generated matmul kernel: C = A @ B tiled 128 x 128 per block of 256 threads (8 x 8
// accumulators a thread, k in steps of 8 through shared memory), then the epilogue kernel's code
// for each of the thread's elements, with the product taken from the accumulators; the product
// itself is never written. Its fourth parameter, after the epilogue's own three:
inline constexpr int kGemmTile = 128;
inline constexpr int kGemmMaxBatchRank = 4;
struct GemmParams {  // the generated `struct Gemm` has this layout
  const void* a = nullptr;
  const void* b = nullptr;
  int64_t m = 0, n = 0, k = 0;
  int64_t a_offset = 0, a_sm = 0, a_sk = 0;  // elements
  int64_t b_offset = 0, b_sk = 0, b_sn = 0;
  int64_t batch_rank = 0;
  int64_t batch[kGemmMaxBatchRank] = {}, a_batch_stride[kGemmMaxBatchRank] = {}, b_batch_stride[kGemmMaxBatchRank] = {};
};

std::string emit_cuda(const kir::Kernel& kernel, const std::string& name, const EmitOptions& options);

// The launch's metadata (kir::pack_meta) followed by one fast_div_word per size: what the generated
// code reads from its Meta.
void pack_kernel_meta(const kir::Kernel& kernel, const kir::LaunchArgs& args, std::vector<int64_t>* meta);

// x / n for 0 <= x < 2^31 as the generated code computes it with 32-bit index math (lf_div):
// (x * multiplier) >> (32 + shift), the multiplier in the word's low half, the shift in its high
// half. 0 for n outside [2, 2^31) (n = 1 divides by itself; no larger size has 32-bit indices).
int64_t fast_div_word(int64_t n);
int32_t fast_div(int32_t x, int32_t n, int64_t word);  // the device's computation, for tests

// Per operand: whether it is a per-element input of a row kernel that does not move along the
// outer dims but the last (every stride there Zero), so that EmitOptions::row_sweep reads it once a
// thread.
std::vector<bool> sweep_invariant(const kir::Kernel& kernel);

// Whether a row kernel may split one row over several blocks (see above).
bool can_split_rows(const kir::Kernel& kernel);

}  // namespace lf::cuda
