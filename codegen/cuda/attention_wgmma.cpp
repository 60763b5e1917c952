// Hopper's warpgroup MMA (wgmma, sm_90a) as the attention kernels use it: the 16-bit kernel
// (attention_tc.cpp, k16 products of float16 or bfloat16) and the float32 one (attention_f32.cpp,
// k8 products of TF32). Device helpers in CUDA C, and the products' inline PTX for the tile widths a
// kernel names, generated here because each width has its own register list.
#include <string>

#include "codegen/cuda/attention.h"

namespace lf::cuda {
namespace {

const char* kWgmmaDevice = R"CUDA(
// A shared operand's descriptor: its address, the byte offsets between 64-column blocks (LBO; N-major
// operands) and between 8-row groups (SBO), 128-byte swizzle.
__device__ __forceinline__ unsigned long long lf_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16) |
         ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}
__device__ __forceinline__ void lf_wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void lf_wg_wait() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}
// cp.async and element stores write shared memory through the generic proxy, wgmma reads it
// through the async proxy: each thread orders its writes before the barrier that publishes them.
__device__ __forceinline__ void lf_proxy_fence() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// wgmma reads its A registers and writes its accumulators asynchronously, until the wait: the
// compiler must neither reuse the A fragments' registers nor touch the accumulators in between.
// An empty asm that reads and writes them after the wait (and before the fence, for accumulators
// that carry over) keeps them in place, as CUTLASS's warpgroup_fence_operand does.
__device__ __forceinline__ void lf_keep_a(unsigned* a) {
  asm volatile("" : "+r"(a[0]), "+r"(a[1]), "+r"(a[2]), "+r"(a[3])::"memory");
}
#define LF_WGMMA_RS_(n) lf_wgmma_rs##n
#define LF_WGMMA_RS(n) LF_WGMMA_RS_(n)
#define LF_WGMMA_SS_(n) lf_wgmma_ss##n
#define LF_WGMMA_SS(n) LF_WGMMA_SS_(n)
#define LF_KEEP_(n) lf_keep##n
#define LF_KEEP(n) LF_KEEP_(n)
)CUDA";

bool is_tf32(const std::string& type) { return type == "tf32"; }

// One product m64 x n x k (k16 for the 16-bit types, k8 for TF32) with float32 accumulators. The
// immediates after the predicate: the scales of A and B, then for the 16-bit types their transposes
// (B's is 1 for an N-major B; A from registers has none). TF32 operands are K-major only.
std::string wgmma_asm(int n, const std::string& type, const std::string& operands, int first_in, bool a_in_registers,
                      bool b_n_major) {
  std::string outs;
  for (int i = 0; i < n / 2; ++i) outs += (i ? ", %" : "%") + std::to_string(i);
  const std::string trans = is_tf32(type)     ? ""
                            : a_in_registers ? (b_n_major ? ", 1" : ", 0")
                                             : (b_n_major ? ", 0, 1" : ", 0, 0");
  return "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + std::to_string(first_in + 2) + ", 0;\\n\"\n"
         "    \"wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + (is_tf32(type) ? "k8" : "k16") + ".f32." +
         type + "." + type + " {" + outs + "}, " + operands + ", p, 1, 1" + trans + ";\\n}\\n\"\n";
}

std::string accumulators(int n) {
  std::string regs;
  for (int i = 0; i < n / 2; ++i) regs += std::string(i ? ", " : "") + "\"+f\"(d[" + std::to_string(i) + "])";
  return regs;
}

std::string keep_helper(int n) {
  return "__device__ __forceinline__ void lf_keep" + std::to_string(n) + "(float* d) {\n  asm volatile(\"\" : " +
         accumulators(n) + " :: \"memory\");\n}\n";
}

std::string wgmma_ss_helper(int n, const std::string& type) {
  const int nd = n / 2;
  return "__device__ __forceinline__ void lf_wgmma_ss" + std::to_string(n) +
         "(float* d, unsigned long long da, unsigned long long db, int acc) {\n" +
         wgmma_asm(n, type, "%" + std::to_string(nd) + ", %" + std::to_string(nd + 1), nd, false, false) + "    : " +
         accumulators(n) + "\n    : \"l\"(da), \"l\"(db), \"r\"(acc));\n}\n";
}

std::string wgmma_rs_helper(int n, const std::string& type, bool b_n_major) {
  const int nd = n / 2;
  std::string a = "{";
  for (int i = 0; i < 4; ++i) a += (i ? ", %" : "%") + std::to_string(nd + i);
  a += "}, %" + std::to_string(nd + 4);
  return "__device__ __forceinline__ void lf_wgmma_rs" + std::to_string(n) +
         "(float* d, const unsigned* a, unsigned long long desc, int acc) {\n" +
         wgmma_asm(n, type, a, nd + 3, true, b_n_major) + "    : " + accumulators(n) +
         "\n    : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc), \"r\"(acc));\n}\n";
}

}  // namespace

std::string attention_wgmma_helpers(const std::string& type, int ss_n, int rs_n, bool rs_b_n_major) {
  std::string s = std::string(kWgmmaDevice) + wgmma_ss_helper(ss_n, type) + wgmma_rs_helper(rs_n, type, rs_b_n_major) +
                  keep_helper(ss_n);
  if (rs_n != ss_n) s += keep_helper(rs_n);
  return s;
}

}  // namespace lf::cuda
