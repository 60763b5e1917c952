// The CUDA C of many kinds of kernel must compile with NVRTC for sm_90. This runs without a GPU
// (NVRTC only), so CI catches a broken emitter; the GPU tests check the values on the device.
#include "codegen/cuda/emit.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/cuda/backend.h"
#include "codegen/cuda/nvrtc_batch.h"
#include "codegen/fuse/fuser.h"
#include "codegen/fuse/lower.h"
#include "codegen/test_util.h"
#include "codegen/ir/view.h"
#include "runtime/storage.h"

namespace {

using lf::DType;
using lf::Tensor;

// Lines enough for fuse::fused_scan to fuse a scan on either device.
constexpr int64_t kScanLines = lf::fuse::kScanMinLinesGpu;

// Partitions the graph behind `t` (CPU tensors; the kernel IR does not depend on the device) and
// returns the CUDA source of every kernel group.
std::vector<std::string> cuda_sources(const Tensor& t, bool index32, int row_cache = 0, bool vec4 = false,
                                      bool row_full = false, int row_group = 0, int row_sweep = 0, int scan_chunks = 0) {
  std::vector<lf::ir::Node*> roots{t.node().get()};
  auto order = lf::ir::topo_order(roots);
  auto p = lf::fuse::partition(order, [&](const lf::ir::Node& n) { return &n == roots[0]; }, true);
  std::vector<std::string> out;
  for (size_t i = 0; i < p.groups.size(); ++i) {
    if (p.groups[i].kind == lf::fuse::Group::Kind::Host) continue;
    auto low = lf::lower::lower_group(p.groups[i], p, static_cast<int>(i), lf::Device::cpu());
    lf::cuda::EmitOptions opt;
    opt.index32 = index32;
    opt.row_cache = low.kernel.row ? row_cache : 0;
    opt.row_full = opt.row_cache > 0 && row_full;
    // The kernels the host would give vec4 (cuda::options_for) for suitable sizes and pointers.
    bool vec_ok = true;
    if (!low.kernel.row) {
      for (const auto& o : low.kernel.operands)
        vec_ok &= o.kind == lf::kir::Operand::Kind::Index || o.strides.back() != lf::kir::StrideClass::Any;
    } else {
      vec_ok = opt.row_cache == 0 && low.kernel.inner_rank == 1;
      for (const auto& in : low.kernel.instrs)
        if (in.kind == lf::kir::InstrKind::Load && !in.row &&
            low.kernel.operands[in.slot].strides.back() == lf::kir::StrideClass::Unit)
          vec_ok &= lf::dtype_size(low.kernel.operands[in.slot].dtype) == 4;
    }
    opt.vec4 = vec4 && vec_ok;
    if (low.kernel.row && row_group > 0) {  // options_for gives short rows no cache, vectors as long rows
      opt.row_group = row_group;
      opt.row_cache = 0;
      opt.row_full = false;
      opt.vec4 = vec4 && low.kernel.inner_rank == 1;
      for (const auto& in : low.kernel.instrs)
        if (in.kind == lf::kir::InstrKind::Load && !in.row &&
            low.kernel.operands[in.slot].strides.back() == lf::kir::StrideClass::Unit)
          opt.vec4 = opt.vec4 && lf::dtype_size(low.kernel.operands[in.slot].dtype) == 4;
    }
    if (low.kernel.row && row_sweep > 0 && low.kernel.outer_rank >= 2 && low.kernel.inner_rank == 1) {
      opt = lf::cuda::EmitOptions{};  // as options_for: nothing else of the row kinds
      opt.index32 = index32;
      opt.row_sweep = row_sweep;
      opt.row_full = row_full;  // callers ask for it only where rows are row_sweep long
      std::vector<bool> held = lf::cuda::sweep_invariant(low.kernel);
      opt.vec4 = vec4;
      for (const auto& in : low.kernel.instrs)
        if (in.kind == lf::kir::InstrKind::Load && !in.row && !held[static_cast<size_t>(in.slot)] &&
            low.kernel.operands[in.slot].strides.back() == lf::kir::StrideClass::Unit)
          opt.vec4 = opt.vec4 && lf::dtype_size(low.kernel.operands[in.slot].dtype) == 4;
    }
    if (low.kernel.row && low.kernel.has_scan() && scan_chunks > 0) {  // a thread a chunk of a line
      opt = lf::cuda::EmitOptions{};
      opt.index32 = index32;
      opt.row_group = 1;
      opt.scan_chunks = scan_chunks;
    }
    out.push_back(lf::cuda::emit_cuda(low.kernel, "k" + std::to_string(i), opt));
  }
  return out;
}

Tensor input(lf::Shape shape, DType d = DType::Float32) {
  Tensor x = lf::randn(shape).to(d);
  lf::sync();
  return x;
}

struct Case {
  const char* name;
  std::function<Tensor()> make;
};

std::vector<Case> cases() {
  return {
      {"chain", [] { Tensor x = input({1000}); return lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3; }},
      {"bias_gelu", [] { return lf::gelu(input({64, 32}) + input({32})); }},
      {"gelu_tanh_f16", [] { return lf::gelu(input({64, 32}, DType::Float16), true); }},
      {"softmax", [] { return lf::softmax(input({16, 100}), -1); }},
      {"log_softmax_dim0", [] { return lf::log_softmax(input({16, 100}), 0); }},
      {"layer_norm", [] { return lf::layer_norm(input({16, 100}) + input({16, 100}), 1, input({100}), input({100})); }},
      {"standardize", [] { Tensor x = input({8, 50}); return (x - x.mean({1}, true)) / (x.std({1}, true) + 1e-5); }},
      {"sum_squares", [] { Tensor x = input({5000}); return lf::sum(x * x); }},
      {"argmax_rows", [] { return lf::argmax(input({7, 33}), {1}); }},
      {"argmin_all", [] { return lf::argmin(input({7, 33})); }},
      {"max_middle", [] { return lf::max(input({4, 5, 6}), {1}); }},
      {"prod_outer_inner", [] { return lf::prod(input({4, 5, 6}), {0, 2}); }},
      {"int_ops", [] {
         Tensor a = lf::cast(input({40}) * 10, DType::Int32);
         return lf::pow(a, 2) + lf::abs(a) * 3 - lf::sign(a) + lf::maximum(a, lf::cast(a, DType::Int32) / 2 > 1);
       }},
      {"int64_sum", [] { return lf::sum(lf::cast(input({40}) * 100, DType::Int64)); }},
      {"bool_logic", [] { Tensor x = input({30}); return lf::where((x > 0) && !(lf::isnan(x)), x, lf::scalar(0.0)); }},
      {"casts_bf16", [] { return lf::cast(lf::cast(input({30}), DType::BFloat16) * 3, DType::Float64); }},
      {"generators", [] { return lf::rand({10, 10}) + lf::randn({10, 10}) + lf::arange(0.0, 10).reshape({1, 10}); }},
      {"randn_f64", [] { return lf::randn({20}, DType::Float64) * 2; }},
      {"transposed", [] { return lf::exp(input({12, 20}).transpose(0, 1)) + 1; }},
      {"sliced_strided", [] { return lf::slice(input({40, 30}), 1, 1, 29, 3) * 2; }},
      {"logsumexp", [] { return lf::logsumexp(input({9, 31}), {1}); }},
      {"var_f64", [] { return lf::var(input({9, 31}, DType::Float64), {0}); }},
      {"rms_norm", [] { return lf::rms_norm(input({6, 64}), input({64})); }},
      {"bool_max", [] { return lf::max(input({6, 10}) > 0, {1}); }},
      {"transcendentals", [] {
         Tensor x = input({100});
         return lf::sin(x) + lf::cos(x) + lf::tan(x) + lf::asin(x / 10) + lf::acos(x / 10) + lf::atan(x) + lf::sinh(x) +
                lf::cosh(x) + lf::erf(x) + lf::exp2(x) + lf::log2(lf::abs(x)) + lf::log1p(lf::abs(x)) +
                lf::expm1(x) + lf::rsqrt(lf::abs(x)) + lf::atan2(x, x + 1) + lf::pow(lf::abs(x), x) +
                lf::silu(x) + lf::floor(x) + lf::ceil(x) + lf::round(x) + lf::reciprocal(x) + lf::square(x) +
                lf::clamp(x, -1, 1) + lf::cast(lf::isinf(x) || lf::isfinite(x), DType::Float32);
       }},
      // issue 23: the division family and the bitwise ops in every dtype class they take.
      {"division_int", [] {
         Tensor a = lf::cast(input({40}) * 10, DType::Int32), b = lf::cast(input({40}) * 10, DType::Int64);
         return lf::remainder(a, b) + lf::fmod(b, a) + lf::floor_divide(a, b) + lf::floor_divide(a, 3);
       }},
      {"division_float", [] {
         Tensor x = input({40}), y = input({40}, DType::Float64), h = input({40}, DType::Float16);
         return lf::remainder(x, y) + lf::fmod(y, x) + lf::floor_divide(x, y) +
                lf::cast(lf::remainder(h, h) + lf::floor_divide(h, h) + lf::fmod(h, h), DType::Float64);
       }},
      // Gathers at a loaded index: register-cached rows hold the gathered values (emit_row_cache).
      {"embedding_layer_norm", [] {
         Tensor ids = lf::cast(lf::abs(input({4, 3})) * 5, DType::Int64);
         return lf::layer_norm(lf::embedding(input({10, 64}), ids), 1) + lf::take(input({50}), ids).unsqueeze(-1);
       }},
      // Compositions over gathers (this session): searchsorted's lifted search (one gather per step
      // at an index computed from the previous step), masked_scatter's gather at a running count.
      {"searchsorted", [] {
         Tensor seq = input({3, 40}), v = input({3, 9});
         return lf::searchsorted(seq, v * 2, false, true) + lf::searchsorted(lf::select(seq, 0, 0), v);
       }},
      {"interpolate_bilinear", [] { return lf::interpolate(input({1, 2, 5, 7}), {9, 4}, "bilinear"); }},
      {"masked_scatter_gather", [] {
         Tensor at = lf::cast(lf::abs(input({30})) * 3, DType::Int64);
         return lf::where(input({30}) > 0, lf::take(input({12}), at), input({30}));
       }},
      // Pairwise rows (EmitOptions::row_sweep): k-means' distances, and a softmax over pairs (a
      // per-element output).
      {"pairwise_distances", [] {
         Tensor X = input({10, 16}), C = input({7, 16});
         return lf::sum(lf::square(X.unsqueeze(1) - C.unsqueeze(0)), {-1});
       }},
      {"pairwise_softmax", [] { return lf::softmax(input({10, 1, 5}) * input({1, 7, 5}), -1); }},
      // Scans fused with producers and consumers (fuse::Group::scan; options_for runs them a
      // thread a row): float, 16-bit floats with a float32 running total, int64.
      // Lines enough that fuse::fused_scan fuses them on either device (input() is on the default
      // device, the GPU where there is one).
      {"scan_fused", [] { Tensor x = input({kScanLines, 24}); return lf::cumsum(lf::exp(x) * 2, 1) + x; }},
      {"scan_dtypes", [] {
         Tensor h = input({kScanLines, 8}, DType::BFloat16), i = lf::cast(input({kScanLines, 8}) * 10, DType::Int64);
         return lf::cast(lf::cumprod(h * 0.5 + 1, 1), DType::Float64) + lf::cast(lf::cumsum(i * 3, 1), DType::Float64) +
                lf::cast(lf::logcumsumexp(h * 2, 1), DType::Float64);
       }},
      // cummax / cummin positions (kir::scan_extreme): float, bfloat16, bool and int32 values.
      {"scan_extreme", [] {
         Tensor x = input({kScanLines, 24}), h = input({kScanLines, 24}, DType::BFloat16), m = input({kScanLines, 24}) > 0;
         Tensor k = lf::cast(input({kScanLines, 24}) * 10, DType::Int32);
         return lf::cast(lf::cummax(x * 2, 1).second + lf::cummin(h * 2, 1).second + lf::cummax(m & m, 1).second +
                             lf::cummin(k + 1, 1).second,
                         DType::Float64);
       }},
      {"bitwise", [] {
         Tensor a = lf::cast(input({40}) * 10, DType::Int32), b = lf::cast(input({40}) * 10, DType::Int64);
         Tensor m = input({40}) > 0;
         return ((a & b) | (a ^ 3) | (~b) | (a << b) | (b >> a)) + lf::cast((m & !m) | (m ^ m) | ~m, DType::Int64);
       }},
  };
}

TEST(CudaEmit, EveryKindOfKernelCompilesWithNvrtc) {
  if (!lf::cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok())
    GTEST_SKIP() << "NVRTC is not available here";
  std::vector<lf::test::NvrtcJob> jobs;
  for (const Case& c : cases()) {
    Tensor t = c.make();
    struct Variant {
      bool index32;
      int row_cache;
      bool vec4;
      bool row_full = false;
      int row_group = 0;
      int row_sweep = 0;
    };
    for (auto [index32, row_cache, vec4, row_full, row_group, row_sweep] :
         {Variant{true, 0, false}, Variant{false, 0, false}, Variant{true, 4, false}, Variant{true, 4, false, true},
          Variant{true, 0, true}, Variant{true, 0, false, false, 1}, Variant{true, 0, false, false, 4},
          Variant{false, 0, false, false, 32}, Variant{true, 0, true, false, 4}, Variant{true, 0, true, false, 16},
          Variant{true, 0, false, false, 0, 32}, Variant{false, 0, false, false, 0, 4}, Variant{true, 0, true, false, 0, 16}}) {
      std::vector<std::string> sources = cuda_sources(t, index32, row_cache, vec4, row_full, row_group, row_sweep);
      ASSERT_FALSE(sources.empty()) << c.name;
      for (size_t i = 0; i < sources.size(); ++i) {
        std::ostringstream what;
        what << c.name << " (index32=" << index32 << ", row_cache=" << row_cache << ", vec4=" << vec4
             << ", row_full=" << row_full << ", row_group=" << row_group << ", row_sweep=" << row_sweep << ") kernel " << i;
        jobs.push_back({sources[i], "k" + std::to_string(i), what.str()});
      }
    }
  }
  lf::test::expect_all_compile(jobs);  // a variant that changes nothing in a kernel compiles it once
}

TEST(CudaEmit, ExtremeScanCarriesItsValueBesideItsPosition) {
  // A fused cummax: the running extreme's value (sb<i>) beside its position (s<i>); a lane group
  // combines its elements' (value, position) pairs by shuffles, the later winning ties.
  Tensor x = input({kScanLines, 24});
  std::vector<std::string> group = cuda_sources(lf::cummax(x * 2, 1).second + 1, true, 0, false, false, 8);
  ASSERT_EQ(group.size(), 1u);
  EXPECT_NE(group[0].find("float sb"), std::string::npos) << group[0];
  EXPECT_NE(group[0].find("const i64 yi_ = __shfl_up_sync(0xffffffffu, xi"), std::string::npos) << group[0];
  std::vector<std::string> thread = cuda_sources(lf::cummin(x * 2, 1).second + 1, true);
  ASSERT_EQ(thread.size(), 1u);
  EXPECT_EQ(thread[0].find("__shfl_up_sync"), std::string::npos) << thread[0];
  EXPECT_NE(thread[0].find(" <= sb"), std::string::npos) << thread[0];
}

// Scans of lines side by side in chunks (EmitOptions::scan_chunks; the host takes them for lines
// of 128 or more along an earlier dim): a pass over the thread's chunk combining the scan's inputs,
// the chunks' totals through shared memory, the chunks before this one combined in order, then
// the scan of the chunk from there. Emitted here for lines along the last dim (the CPU's fuser
// keeps lines side by side for its library scan); the code does not depend on the lines' strides.
// Every scan op, with a cast and a broadcast around it, compiles with NVRTC.
TEST(CudaEmit, ScansOfLinesSideBySideRunInChunks) {
  Tensor x = input({kScanLines, 40});
  Tensor w = input({40});
  std::vector<std::string> sum = cuda_sources(lf::cumsum(lf::relu(x) * w, 1) + 1, true, 0, false, false, 0, 0, 8);
  ASSERT_EQ(sum.size(), 1u);
  EXPECT_NE(sum[0].find("const i64 clen_ = ((i64)inner + 8 - 1) / 8;"), std::string::npos) << sum[0];
  EXPECT_NE(sum[0].find("__shared__ float cs"), std::string::npos) << sum[0];
  EXPECT_NE(sum[0].find("for (int c_ = 0; c_ < (int)(threadIdx.x >> 5); ++c_)"), std::string::npos) << sum[0];
  EXPECT_NE(sum[0].find("for (i64 jb_ = clo_; jb_ < chi_; jb_ += 1)"), std::string::npos) << sum[0];
  std::vector<lf::test::NvrtcJob> jobs{{sum[0], "k0", "cumsum"}};
  for (DType d : {DType::Float32, DType::Float64, DType::BFloat16, DType::Int64, DType::Bool}) {
    Tensor v = d == DType::Bool ? x > 0 : (x * 4).to(d);
    std::vector<std::string> ext = cuda_sources(lf::cummax(v, 1).second * 2, true, 0, false, false, 0, 0, 8);
    ASSERT_EQ(ext.size(), 1u);
    EXPECT_NE(ext[0].find("__shared__ i64 csi"), std::string::npos) << ext[0];
    jobs.push_back({ext[0], "k0", std::string("cummax ") + lf::dtype_name(d)});
    if (d == DType::Bool) continue;
    std::vector<std::string> more = cuda_sources(lf::cumprod(v, 1) + lf::cummin(v, 1).second, false, 0, false, false, 0, 0, 8);
    for (const std::string& s : more) jobs.push_back({s, "k0", std::string("cumprod, cummin ") + lf::dtype_name(d)});
    if (!is_floating(d)) continue;
    std::vector<std::string> lse = cuda_sources(lf::logcumsumexp(v, 1) * 2, true, 0, false, false, 0, 0, 8);
    for (const std::string& s : lse) jobs.push_back({s, "k0", std::string("logcumsumexp ") + lf::dtype_name(d)});
  }
  if (lf::cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok())
    lf::test::expect_all_compile(jobs);
}

// Which scan kernels the host may cut into chunks (cuda::scans_can_chunk): scans and elementwise
// ops around them; not a reduction beside a scan, not a scan of a scan, and not more chunk totals
// than kScanChunkShared bytes of shared memory (9 cumsums, 5 cummaxes).
TEST(CudaEmit, WhichScanKernelsRunInChunks) {
  Tensor x = input({kScanLines, 40});
  auto kernel = [](const std::vector<Tensor>& outs) {
    std::vector<lf::ir::Node*> roots;
    for (const Tensor& t : outs) roots.push_back(t.node().get());
    auto order = lf::ir::topo_order(roots);
    auto p = lf::fuse::partition(order, [&](const lf::ir::Node& n) { return std::find(roots.begin(), roots.end(), &n) != roots.end(); }, true);
    EXPECT_EQ(p.groups.size(), 1u);
    return lf::lower::lower_group(p.groups.at(0), p, 0, lf::Device::cpu()).kernel;
  };
  // Scans join one group through a shared producer (no unrelated node joins a scan group).
  Tensor e = x * 2;
  EXPECT_TRUE(lf::cuda::scans_can_chunk(kernel({lf::cumsum(e, 1) + 1, lf::cummax(e, 1).second})));
  e = Tensor();
  EXPECT_FALSE(lf::cuda::scans_can_chunk(kernel({lf::cumsum(lf::cumsum(x * 2, 1), 1)})));
  auto many = [&](int k, bool extreme) {
    Tensor e = x * 2;
    std::vector<Tensor> outs;
    for (int i = 0; i < k; ++i) outs.push_back(extreme ? lf::cummax(e * (i + 1.0f), 1).second : lf::cumsum(e * (i + 1.0f), 1));
    return outs;
  };
  EXPECT_TRUE(lf::cuda::scans_can_chunk(kernel(many(8, false))));
  EXPECT_FALSE(lf::cuda::scans_can_chunk(kernel(many(9, false))));
  EXPECT_TRUE(lf::cuda::scans_can_chunk(kernel(many(4, true))));
  EXPECT_FALSE(lf::cuda::scans_can_chunk(kernel(many(5, true))));
}

TEST(CudaEmit, LongRowsReadSixteenBytesAtATime) {
  // A row kernel streaming its rows (no register cache) reads each contiguous float or int32
  // input as 16-byte vectors, four in flight a thread, and splits rows at multiples of 4.
  std::vector<std::string> f32 = cuda_sources(lf::sum(input({50000}) * input({50000})), true, 0, true);
  ASSERT_EQ(f32.size(), 1u);
  EXPECT_NE(f32[0].find("__ldg((const float4*)(p0 + b0 + jb_"), std::string::npos) << f32[0];
  EXPECT_NE(f32[0].find("__ldg((const float4*)(p1 + b1 + jb_"), std::string::npos) << f32[0];
  EXPECT_NE(f32[0].find("jb_ += 16 * (i64)blockDim.x"), std::string::npos) << f32[0];
  EXPECT_NE(f32[0].find("seg_lo = gridDim.y == 1 ? 0 : 4 * (int)(((i64)(inner / 4)"), std::string::npos) << f32[0];
  EXPECT_EQ(f32[0].find("__ldg(&p0["), std::string::npos) << "no scalar loads of a vector input:\n" << f32[0];
  std::vector<std::string> i32 = cuda_sources(lf::argmax(input({7, 5000}, DType::Int32), {1}), true, 0, true);
  ASSERT_EQ(i32.size(), 1u);
  EXPECT_NE(i32[0].find("__ldg((const int4*)(p0 + b0 + jb_"), std::string::npos) << i32[0];
  // Short rows shared by a few lanes (row_group) read them the same way: k-means' distances, rows
  // of 16, one 16-byte load of each operand a lane.
  Tensor X = input({64, 16}), C = input({8, 16});
  std::vector<std::string> group = cuda_sources(lf::sum(lf::square(X.unsqueeze(1) - C.unsqueeze(0)), {-1}), true, 0, true, false, 4);
  ASSERT_EQ(group.size(), 1u);
  EXPECT_NE(group[0].find("__ldg((const float4*)(p1 + b1 + jb_"), std::string::npos) << group[0];
  EXPECT_NE(group[0].find("jb_ = seg_lo + 4 * (i64)lane_"), std::string::npos) << group[0];
  EXPECT_NE(group[0].find("jb_ += 4 * 4"), std::string::npos) << group[0];
  if (const char* dir = std::getenv("LAZYFUSE_GOLDEN_CUDA_DIR")) std::ofstream(std::string(dir) + "/kmeans_distance.cu") << group[0];
  // Without vec4 (host's choice: odd lengths, misaligned views) the passes read element by element.
  std::vector<std::string> scalar = cuda_sources(lf::sum(input({50000}) * input({50000})), true, 0, false);
  EXPECT_NE(scalar[0].find("__ldg(&p0["), std::string::npos) << scalar[0];
  EXPECT_EQ(scalar[0].find("float4"), std::string::npos) << scalar[0];
}

// Values of vec4 row kernels on the default device (the GPU where there is one): whole vectors
// and the scalar tail of the step, NaN and ties inside a vector, the split across blocks, rows
// that are not a multiple of 4 or not aligned (scalar loads), int32.
TEST(CudaEmit, LongRowsMatchTheReference) {
  using lf::test::expect_matches_reference;
  const int64_t n = 16 * 256 * 37 + 4 * 9;  // whole 16-element steps, then 9 single vectors
  Tensor x = input({n});
  expect_matches_reference(lf::sum(x * x), n, "sum(x*x)");
  expect_matches_reference(lf::max(x * 2 + 1), 1, "max");
  Tensor rows = input({3, n});
  expect_matches_reference(lf::sum(rows, {1}), n, "3 long rows");
  expect_matches_reference(lf::softmax(rows, -1), n, "softmax of long rows");
  expect_matches_reference(lf::layer_norm(rows + rows, 1), n, "layer_norm of long rows");
  expect_matches_reference(lf::sum(lf::slice(rows, 1, 1, n - 3), {1}), n, "rows starting at an odd offset");
  expect_matches_reference(lf::sum(lf::slice(rows, 1, 4, n), {1}), n, "rows starting 16 bytes in");
  expect_matches_reference(lf::sum(input({3, n + 1}), {1}), n, "rows of odd length");
  std::vector<float> v(static_cast<size_t>(n), 1.0f);
  v[4 * 100 + 2] = 7.0f;  // lane 2 of a vector, tied with a later one
  v[static_cast<size_t>(n) - 3] = 7.0f;
  Tensor ties = lf::from_vector(v, {n});
  EXPECT_EQ(lf::argmax(ties).item<int64_t>(), 4 * 100 + 2);
  v[4 * 2000 + 1] = std::numeric_limits<float>::quiet_NaN();
  Tensor nan = lf::from_vector(v, {n});
  EXPECT_EQ(lf::argmax(nan).item<int64_t>(), 4 * 2000 + 1);
  EXPECT_TRUE(std::isnan(lf::sum(nan).item<float>()));
  // Register-cached rows that fill their unrolled loops exactly (no bounds checks), and not.
  for (int64_t len : {256, 1024, 4096, 1000}) {
    Tensor r = input({5, len});
    expect_matches_reference(lf::softmax(r, -1), len, "softmax, rows of " + std::to_string(len));
    expect_matches_reference(lf::layer_norm(r * 2, 1), len, "layer_norm, rows of " + std::to_string(len));
    expect_matches_reference(lf::argmax(r, {1}), 1, "argmax, rows of " + std::to_string(len));
  }
  Tensor ints = lf::cast(input({2, n}) * 100, DType::Int32);
  lf::sync();  // stored as int32, so that the rows read int4 vectors
  expect_matches_reference(lf::sum(ints, {1}), n, "int32 rows");
  expect_matches_reference(lf::argmin(ints, {1}), 1, "int32 argmin");
}

// Pairwise rows (EmitOptions::row_sweep): a thread a row, the input invariant along the sweep
// (k-means' centers) read into registers once.
TEST(CudaEmit, PairwiseRowsSweepWithTheCentersInRegisters) {
  Tensor X = input({64, 16}), C = input({8, 16});
  std::string src = cuda_sources(lf::sum(lf::square(X.unsqueeze(1) - C.unsqueeze(0)), {-1}), true, 0, false, false, 0, 16).at(0);
  EXPECT_NE(src.find("float c1[16];"), std::string::npos) << src;  // C, not X
  EXPECT_EQ(src.find("float c0["), std::string::npos) << src;
  EXPECT_NE(src.find("base_ += 4 * stride_"), std::string::npos) << src;
  std::string body = src.substr(src.find("extern \"C\""));
  EXPECT_EQ(body.find("lf_shfl"), std::string::npos) << "a thread a row: no shuffles\n" << body;
  // With vec4 (the host's choice for aligned rows of a multiple of 4): X 16 bytes at a time.
  std::string vec = cuda_sources(lf::sum(lf::square(X.unsqueeze(1) - C.unsqueeze(0)), {-1}), true, 0, true, true, 0, 16).at(0);
  EXPECT_EQ(vec.find("break;"), std::string::npos) << "rows of exactly 16: no bounds checks\n" << vec;
  if (lf::cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok()) {
    lf::Status compiles = lf::cuda::check_compiles(vec, "k0", "sm_90");
    EXPECT_TRUE(compiles.ok()) << compiles.message() << vec;
  }
  EXPECT_NE(vec.find("__ldg((const float4*)(p0 + b0 + 4 * g_))"), std::string::npos) << vec;
  EXPECT_EQ(vec.find("float4*)(p1"), std::string::npos) << vec;
  if (const char* dir = std::getenv("LAZYFUSE_GOLDEN_CUDA_DIR")) std::ofstream(std::string(dir) + "/kmeans_distance_sweep.cu") << vec;
}

// Values of pairwise rows on the default device, at sizes where a GPU host chooses the sweep (over
// 4 rows a thread of a full H100): every reduction kind, a row length not a multiple of 4, a
// per-element output, float16 centers, NaN and ties; and sizes a CPU checks in a moment.
TEST(CudaEmit, PairwiseRowsMatchTheReference) {
  using lf::test::expect_matches_reference;
  const bool gpu = !lf::default_device().is_cpu();
  const int64_t n = gpu ? (int64_t{1} << 15) + 3 : 300;
  for (int64_t d : {16, 13, 1}) {
    Tensor X = input({n, d}), C = input({64, d});
    Tensor diff = X.unsqueeze(1) - C.unsqueeze(0);
    std::string at = " D" + std::to_string(d);
    expect_matches_reference(lf::sum(lf::square(diff), {-1}), d, "distances" + at);
    expect_matches_reference(lf::argmin(lf::sum(lf::abs(diff), {-1}), {1}), d, "argmin of L1" + at);
    expect_matches_reference(lf::max(diff * 2, {-1}), 1, "max" + at);
    expect_matches_reference(lf::argmax(diff, {-1}), 1, "argmax" + at);
  }
  Tensor X = input({n, 16});
  expect_matches_reference(lf::softmax(X.unsqueeze(1) * input({1, 64, 16}), -1), 16, "softmax over pairs");
  expect_matches_reference(lf::sum(lf::cast(X, DType::Float16).unsqueeze(1) * input({1, 64, 16}, DType::Float16), {-1}), 16,
                           "float16");
  std::vector<float> c(64 * 16, 1.0f);
  c[5 * 16 + 3] = std::numeric_limits<float>::quiet_NaN();
  Tensor C = lf::from_vector(c, {64, 16});
  Tensor d = lf::sum(lf::square(X.unsqueeze(1) - C.unsqueeze(0)), {-1});
  expect_matches_reference(d, 16, "NaN in a center");
  std::vector<float> dist = d.to_vector<float>();
  EXPECT_TRUE(std::isnan(dist[5]) && std::isnan(dist[static_cast<size_t>(n - 1) * 64 + 5]));
  EXPECT_EQ(dist[4], dist[6]);  // equal centers, equal distances
}

TEST(CudaEmit, FullRegisterCachedRowsHaveNoBoundsChecks) {
  Tensor x = input({4, 1024});
  std::string full = cuda_sources(lf::softmax(x, -1), true, 4, false, true).at(0);
  std::string partial = cuda_sources(lf::softmax(x, -1), true, 4, false, false).at(0);
  EXPECT_EQ(full.find("break;"), std::string::npos) << full;
  EXPECT_NE(partial.find("if (j64 >= inner) break;"), std::string::npos) << partial;
}

// The stencil steps' index math (issue 23): slices of a grid assigned in value semantics, and a
// replicate pad, lowered as the executor lowers them (remaps of the grid at index math over
// aranges).
lf::lower::Lowered stencil_step(bool heat, int64_t n) {
  Tensor a = input({n, n});
  Tensor out;
  if (heat) {
    Tensor p = lf::pad(a, {1, 1, 1, 1}, lf::PadMode::Replicate);
    auto at = [&](int64_t r0, int64_t c0) { return p.slice(0, r0, r0 + n).slice(1, c0, c0 + n); };
    out = a + 0.1 * (at(1, 0) + at(1, 2) + at(2, 1) + at(0, 1) - 4 * a);
  } else {
    auto at = [&](int64_t r0, int64_t c0) { return a.slice(0, r0, r0 + n - 2).slice(1, c0, c0 + n - 2); };
    out = lf::index_put(a, {lf::slice(1, -1), lf::slice(1, -1)}, 0.2 * (at(1, 1) + at(1, 0) + at(1, 2) + at(2, 1) + at(0, 1)));
  }
  std::vector<lf::ir::Node*> roots{out.node().get()};
  auto order = lf::ir::topo_order(roots);
  std::vector<lf::ir::NodePtr> unlinked;
  if (lf::fuse::insert_reshape_copies(order, &unlinked) > 0) order = lf::ir::topo_order(roots);
  auto p = lf::fuse::partition(order, [&](const lf::ir::Node& x) { return &x == roots[0]; }, true);
  EXPECT_EQ(p.groups.size(), 1u);
  return lf::lower::lower_group(p.groups.at(0), p, 0, lf::Device::cpu());
}

// Integer aranges (EmitOptions::int_arange) where float64 computes the same values: start + i
// where every step is 1, start + i * step for other integral steps, float64 otherwise; and a
// remap's index times its stride in 32 bits with index32. Every variant compiles.
TEST(CudaEmit, StencilIndexMathIsIntegerWhereExact) {
  for (bool heat : {false, true}) {
    lf::lower::Lowered low = stencil_step(heat, 64);
    int remaps = 0;
    for (const auto& in : low.kernel.instrs) remaps += in.kind == lf::kir::InstrKind::Remap;
    EXPECT_GE(remaps, 4) << heat;
    EXPECT_EQ(lf::cuda::int_aranges(low.kernel, low.args.params), 2) << heat;
    lf::cuda::EmitOptions opt;
    opt.int_arange = 2;
    std::string source = lf::cuda::emit_cuda(low.kernel, "k", opt);
    EXPECT_EQ(source.find("(double)(e"), std::string::npos) << source;  // no float64 arange left
    EXPECT_NE(source.find("lf_i32("), std::string::npos) << source;
    if (!lf::cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok()) continue;
    for (int ia : {0, 1, 2})
      for (bool index32 : {true, false}) {
        opt.int_arange = ia;
        opt.index32 = index32;
        std::string src = lf::cuda::emit_cuda(low.kernel, "k", opt);
        lf::Status s = lf::cuda::check_compiles(src, "k", "sm_90");
        EXPECT_TRUE(s.ok()) << heat << " int_arange=" << ia << " index32=" << index32 << ":\n" << s.message() << "\n" << src;
      }
  }
  // Steps other than 1, fractional or huge values.
  auto kind_of = [](const Tensor& t) {
    std::vector<lf::ir::Node*> roots{t.node().get()};
    auto order = lf::ir::topo_order(roots);
    auto p = lf::fuse::partition(order, [&](const lf::ir::Node& x) { return &x == roots[0]; }, true);
    auto low = lf::lower::lower_group(p.groups.at(0), p, 0, lf::Device::cpu());
    return lf::cuda::int_aranges(low.kernel, low.args.params);
  };
  EXPECT_EQ(kind_of(lf::arange(3, 40, 1, DType::Int64) * 2), 2);
  EXPECT_EQ(kind_of(lf::arange(-7, 40, 3, DType::Int64) * 2), 1);
  EXPECT_EQ(kind_of(lf::arange(0.5, 40, 1, DType::Int64) * 2), 0);
  EXPECT_EQ(kind_of(lf::arange(0x1p52, 0x1p52 + 10, 1, DType::Int64) * 2), 0);
  EXPECT_EQ(kind_of(lf::arange(0, 1e9, 1e7, DType::Int64) * 2), 0);  // |step| >= 2^20
  EXPECT_EQ(kind_of(lf::arange(0.5, 40, 1, DType::Float32) * 2), 2);  // float aranges stay float64
}

// Int64 index math in 32 bits where the launch bounds it (EmitOptions::narrow): the stencils'
// aranges, clamps and compares narrow, and every remap index is a 32-bit value; a value that can
// leave int32 (a huge arange, a product past 2^31, anything read from memory or through a float)
// stays 64-bit, and so does what is computed from it.
TEST(CudaEmit, IndexMathNarrowsWhereTheLaunchBoundsIt) {
  bool nvrtc = lf::cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok();
  for (bool heat : {false, true}) {
    lf::lower::Lowered low = stencil_step(heat, 64);
    int ia = lf::cuda::int_aranges(low.kernel, low.args.params);
    std::vector<bool> narrow = lf::cuda::narrow_ints(low.kernel, low.args, ia);
    ASSERT_EQ(narrow.size(), low.kernel.instrs.size()) << heat;
    for (size_t i = 0; i < narrow.size(); ++i) {
      const auto& in = low.kernel.instrs[i];
      if (in.dtype == DType::Int64) {
        EXPECT_TRUE(narrow[i]) << heat << " instruction " << i;
      }
      if (in.kind == lf::kir::InstrKind::Remap) {
        for (int a : in.args) EXPECT_TRUE(narrow[static_cast<size_t>(a)]) << heat << " remap index " << a;
      }
    }
    lf::cuda::EmitOptions opt;
    opt.int_arange = ia;
    opt.narrow = narrow;
    std::string src = lf::cuda::emit_cuda(low.kernel, "k", opt);
    EXPECT_NE(src.find("lf_imin<int>"), std::string::npos) << src;
    EXPECT_EQ(src.find("lf_imin<i64>"), std::string::npos) << src;
    EXPECT_EQ(src.find("lf_i32(v"), std::string::npos) << src;  // remap indices are 32-bit already
    EXPECT_FALSE(lf::cuda::narrow_key(narrow).empty());
    if (nvrtc) {
      lf::Status st = lf::cuda::check_compiles(src, "k", "sm_90");
      EXPECT_TRUE(st.ok()) << heat << ":\n" << st.message() << "\n" << src;
    }
    // A thread a column, 4 rows at a time (EmitOptions::rows2d): no division into row and column.
    opt.rows2d = 4;
    src = lf::cuda::emit_cuda(low.kernel, "k", opt);
    EXPECT_EQ(src.find("t / n"), std::string::npos) << src;
    EXPECT_NE(src.find("blockIdx.y * 4"), std::string::npos) << src;
    if (nvrtc) {
      lf::Status st = lf::cuda::check_compiles(src, "k", "sm_90");
      EXPECT_TRUE(st.ok()) << heat << " rows2d:\n" << st.message() << "\n" << src;
    }
  }
  // Which instructions of `t`'s kernel narrow, by op name.
  auto narrowed = [](const Tensor& t) {
    std::vector<lf::ir::Node*> roots{t.node().get()};
    auto order = lf::ir::topo_order(roots);
    auto p = lf::fuse::partition(order, [&](const lf::ir::Node& x) { return &x == roots[0]; }, true);
    auto low = lf::lower::lower_group(p.groups.at(0), p, 0, lf::Device::cpu());
    std::vector<bool> narrow =
        lf::cuda::narrow_ints(low.kernel, low.args, lf::cuda::int_aranges(low.kernel, low.args.params));
    std::string out;
    for (size_t i = 0; i < narrow.size(); ++i) {
      const auto& in = low.kernel.instrs[i];
      if (!narrow[i]) continue;
      out += in.kind == lf::kir::InstrKind::Gen ? "arange" : in.kind == lf::kir::InstrKind::Param ? "param" : lf::ir::op_name(in.op);
      out += " ";
    }
    return out;
  };
  Tensor a = lf::arange(0, 50000, 1, DType::Int64);
  EXPECT_EQ(narrowed(lf::clamp(a - 3, 0, 100) * 2), "arange param sub param maximum param minimum param mul ");
  EXPECT_EQ(narrowed(a * a), "arange ");  // 49999^2 > 2^31: the product stays 64-bit
  EXPECT_EQ(narrowed(lf::arange(0x1p40, 0x1p40 + 10, 1, DType::Int64) + 1), "param ");
  EXPECT_EQ(narrowed(lf::arange(-2147483648.0, -2147483640.0, 1, DType::Int64) - 1), "arange param ");  // min - 1 leaves int32
  Tensor loaded = lf::from_vector(std::vector<int64_t>{1, 2, 3}, {3});
  EXPECT_EQ(narrowed(loaded + lf::arange(0, 3, 1, DType::Int64)), "arange ");
  Tensor through_float = lf::cast(lf::arange(0, 3, 1, DType::Float32), DType::Int64);
  EXPECT_EQ(narrowed(through_float + 1), "param ");
  EXPECT_EQ(narrowed(lf::where(a > 7, a, a + 5)), "arange param param add where ");
}

// Index math divides by sizes through a multiply-high and a shift (lf_div, fast_div_word): exact
// for every dividend below 2^31, checked on the host with the device's arithmetic over small,
// power-of-two, odd and huge divisors and dividends at and around the multiples.
TEST(CudaEmit, FastDivisionIsExactBelow2To31) {
  std::mt19937_64 rng(7);
  std::vector<int64_t> divisors;
  for (int64_t n = 1; n <= 4100; ++n) divisors.push_back(n);
  for (int k = 12; k < 31; ++k) {
    int64_t p = int64_t{1} << k;
    for (int64_t n : {p - 1, p, p + 1, 3 * (p / 2) + 1}) divisors.push_back(n);
  }
  divisors.push_back(2147483647);
  for (int i = 0; i < 2000; ++i) divisors.push_back(1 + static_cast<int64_t>(rng() % 2147483647));
  for (int64_t n : divisors) {
    int64_t w = lf::cuda::fast_div_word(n);
    std::vector<int64_t> xs = {0, 1, n - 1, n, n + 1, 2147483647, 2147483646, 2147483647 - 2147483647 % n,
                               2147483647 - 2147483647 % n - 1};
    for (int i = 0; i < 40; ++i) xs.push_back(static_cast<int64_t>(rng() % 2147483648u));
    for (int64_t m = 1; m < 50 && m * n < 2147483648; ++m) xs.push_back(m * n - 1), xs.push_back(m * n);
    for (int64_t x : xs) {
      if (x < 0 || x > 2147483647) continue;
      ASSERT_EQ(lf::cuda::fast_div(static_cast<int32_t>(x), static_cast<int32_t>(n), w), x / n) << x << " / " << n;
    }
  }
  EXPECT_EQ(lf::cuda::fast_div_word(0), 0);
  EXPECT_EQ(lf::cuda::fast_div_word(int64_t{1} << 31), 0);
}

TEST(CudaEmit, SourceDependsOnStructureNotSizes) {
  Tensor a = input({10, 20}), b = input({30, 40});
  EXPECT_EQ(cuda_sources(lf::softmax(a, -1), true), cuda_sources(lf::softmax(b, -1), true));
}

}  // namespace

// The generated matmul kernel (cuda_emit.h) with its epilogue, in every dtype matmul takes.
TEST(CudaEmit, MatmulWithEpilogueCompilesWithNvrtc) {
  if (!lf::cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok())
    GTEST_SKIP() << "NVRTC is not available here";
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64}) {
    Tensor a = input({3, 40, 24}, d), b = input({24, 30}, d), bias = input({30}, d), r = input({40, 30}, d);
    Tensor y = lf::maximum(lf::matmul(a, b) + bias, r) * 2;
    std::vector<lf::ir::Node*> roots{y.node().get()};
    auto order = lf::ir::topo_order(roots);
    auto p = lf::fuse::partition(order, [&](const lf::ir::Node& n) { return &n == roots[0]; }, true);
    int found = 0;
    for (size_t i = 0; i < p.groups.size(); ++i) {
      if (p.groups[i].kind != lf::fuse::Group::Kind::Matmul) continue;
      ++found;
      lf::fuse::Group e = p.groups[i];
      lf::ir::Node* mm = e.nodes[0];
      e.kind = lf::fuse::Group::Kind::Pointwise;
      e.nodes.erase(e.nodes.begin());
      auto stand_in = lf::rt::Storage::allocate(lf::Device::cpu(), 8);
      mm->storage = stand_in;
      mm->layout = lf::ir::Layout{lf::ir::contiguous_strides(mm->shape), 0};
      auto low = lf::lower::lower_group(e, p, static_cast<int>(i), lf::Device::cpu(), /*keep_last_dim=*/true);
      mm->storage = nullptr;
      lf::cuda::EmitOptions opt;
      const auto& ptrs = low.args.pointers;
      opt.matmul_product = static_cast<int>(std::find(ptrs.begin(), ptrs.end(), stand_in->data()) - ptrs.begin());
      ASSERT_LT(opt.matmul_product, static_cast<int>(ptrs.size()));
      std::string source = lf::cuda::emit_cuda(low.kernel, "mm", opt);
      EXPECT_NE(source.find("const Gemm g"), std::string::npos);
      lf::Status s = lf::cuda::check_compiles(source, "mm", "sm_90");
      EXPECT_TRUE(s.ok()) << lf::dtype_name(d) << ":\n" << s.message() << "\n----- source -----\n" << source;
    }
    EXPECT_EQ(found, 1) << lf::dtype_name(d);
  }
}
