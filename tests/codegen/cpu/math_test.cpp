// The CPU backend's inline float32 math (codegen/cpu/llvm/math.cpp): accuracy over a dense sweep of all
// float32 values against libm in double precision, special values exactly, and that the kernels
// vectorize with no calls left.
//
// The sweep takes every 509th float32 (about 8.4M values per function, each sign and exponent
// visited). LAZYFUSE_MATH_SWEEP_STEP=1 checks all 2^32 inputs (minutes; how the README's figures
// were measured), printing the worst input of each function; LAZYFUSE_MATH_SWEEP_ONLY=<name> sweeps
// one function.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/cpu/backend.h"
#include "codegen/fuse/fuser.h"
#include "codegen/fuse/lower.h"

namespace {

using lf::Tensor;

// These tests measure the CPU backend's inline math (codegen/cpu/llvm/math.cpp): they run on the CPU
// even where the default device is a GPU, whose math is CUDA's own (documented by NVIDIA).
class InlineMath : public ::testing::Test {
 protected:
  void SetUp() override { lf::set_default_device(lf::Device::cpu()); }
  void TearDown() override { lf::set_default_device(saved_); }

 private:
  lf::Device saved_ = lf::default_device();
};

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Fn {
  const char* name;
  Tensor (*op)(const Tensor&);
  double (*ref)(double);  // the exact function, in double
  double max_ulp;         // a bound a little above the maximum over all 2^32 inputs (README)
  bool flushes = false;   // results below 2^-126 may be 0 instead of subnormal (README)
};

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double silu_ref(double x) { return x / (1.0 + std::exp(-x)); }

const std::vector<Fn>& functions() {
  static const std::vector<Fn> fns = {
      {"exp", lf::exp, [](double x) { return std::exp(x); }, 1.5},
      {"exp2", lf::exp2, [](double x) { return std::exp2(x); }, 1.5},
      {"log", lf::log, [](double x) { return std::log(x); }, 1.5},
      {"log2", lf::log2, [](double x) { return std::log2(x); }, 2},
      {"tanh", lf::tanh, [](double x) { return std::tanh(x); }, 3.5},
      {"sigmoid", lf::sigmoid, sigmoid_ref, 3, true},
      {"silu", lf::silu, silu_ref, 4},
      {"erf", lf::erf, [](double x) { return std::erf(x); }, 1.5},
  };
  return fns;
}

// Units in the last place of float32 at the exact value r (subnormal spacing below 2^-126).
double ulp_at(double r) {
  double a = std::fabs(r);
  if (a < 0x1p-126) return 0x1p-149;
  int e;
  std::frexp(a, &e);
  return std::ldexp(1.0, e - 24);
}

struct Sweep {
  double max_ulp = 0;
  float worst = 0;
  int64_t special_mismatches = 0;  // NaN / inf / finite class differs from the exact value's rounding
  std::string first_mismatch;
};

// Runs `fn` fused over the given inputs and folds the errors into `s`.
void check_chunk(const Fn& fn, const std::vector<float>& xs, Sweep& s) {
  std::vector<float> got = fn.op(lf::from_vector(xs, {static_cast<int64_t>(xs.size())})).to_vector<float>();
  for (size_t k = 0; k < xs.size(); ++k) {
    double r = fn.ref(static_cast<double>(xs[k]));
    float rf = static_cast<float>(r);
    float g = got[k];
    bool special = !std::isfinite(rf) || !std::isfinite(g);
    if (special) {
      bool same = (std::isnan(rf) && std::isnan(g)) || rf == g;
      if (!same && s.special_mismatches++ == 0) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s(%a) = %a, exact rounds to %a", fn.name, xs[k], g, rf);
        s.first_mismatch = buf;
      }
      continue;
    }
    if (fn.flushes && g == 0 && std::fabs(r) < 0x1p-126) continue;
    double u = std::fabs(static_cast<double>(g) - r) / ulp_at(r);
    if (u > s.max_ulp) {
      s.max_ulp = u;
      s.worst = xs[k];
    }
  }
}

Sweep sweep(const Fn& fn, uint64_t step) {
  Sweep s;
  constexpr uint64_t kChunk = uint64_t{1} << 23;
  std::vector<float> xs;
  xs.reserve(kChunk);
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += step) {
    xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
    if (xs.size() == kChunk) {
      check_chunk(fn, xs, s);
      xs.clear();
    }
  }
  if (!xs.empty()) check_chunk(fn, xs, s);
  return s;
}

TEST_F(InlineMath, AccuracyOverADenseSweep) {
  const char* env = std::getenv("LAZYFUSE_MATH_SWEEP_STEP");
  uint64_t step = env && *env ? std::strtoull(env, nullptr, 10) : 509;
  ASSERT_GE(step, 1u);
  const char* only = std::getenv("LAZYFUSE_MATH_SWEEP_ONLY");  // one function's name, to re-measure it
  for (const Fn& fn : functions()) {
    if (only && *only && std::string(only) != fn.name) continue;
    Sweep s = sweep(fn, step);
    std::printf("[ math ] %-8s max %.3f ulp at %a (%.9g); special mismatches %lld (every %llu-th float32)\n", fn.name,
                s.max_ulp, s.worst, s.worst, static_cast<long long>(s.special_mismatches),
                static_cast<unsigned long long>(step));
    EXPECT_LE(s.max_ulp, fn.max_ulp) << fn.name << " at " << s.worst;
    EXPECT_EQ(s.special_mismatches, 0) << s.first_mismatch;
  }
}

// Values at the edges: exactly what libm (or the op's definition) gives, sign of zero included.
struct Special {
  const char* op;
  float x;
  float want;
};

TEST_F(InlineMath, SpecialValuesExactly) {
  const float kDenorm = 0x1p-140f, kMinDenorm = 0x1p-149f;
  const std::vector<Special> cases = {
      {"exp", kNaN, kNaN},
      {"exp", kInf, kInf},
      {"exp", -kInf, 0},
      {"exp", 0.0f, 1},
      {"exp", -0.0f, 1},
      {"exp", kMinDenorm, 1},
      {"exp", 0x1.62e42ep+6f, std::exp(0x1.62e42ep+6f)},  // largest float whose exp is finite
      {"exp", 0x1.62e430p+6f, kInf},                       // the next float overflows
      {"exp", -87.0f, std::exp(-87.0f)},
      {"exp", -100.0f, std::exp(-100.0f)},  // subnormal result
      {"exp", -103.5f, 0x1p-149f},  // rounds to the smallest subnormal
      {"exp", -104.0f, 0},
      {"exp", 1000.0f, kInf},
      {"exp2", 128.0f, kInf},
      {"exp2", 127.0f, 0x1p127f},
      {"exp2", -149.0f, 0x1p-149f},
      {"exp2", -150.0f, 0},  // a tie, to even
      {"exp2", -kInf, 0},
      {"exp2", kNaN, kNaN},
      {"exp2", 0.5f, std::exp2(0.5f)},
      {"log", kNaN, kNaN},
      {"log", -1.0f, kNaN},
      {"log", -kInf, kNaN},
      {"log", -kMinDenorm, kNaN},
      {"log", 0.0f, -kInf},
      {"log", -0.0f, -kInf},
      {"log", kInf, kInf},
      {"log", 1.0f, 0},
      {"log", kMinDenorm, std::log(kMinDenorm)},
      {"log", kDenorm, std::log(kDenorm)},
      {"log", std::numeric_limits<float>::max(), std::log(std::numeric_limits<float>::max())},
      {"log2", 8.0f, 3},
      {"log2", kMinDenorm, -149},
      {"log2", 0.0f, -kInf},
      {"log2", -2.0f, kNaN},
      {"log2", kInf, kInf},
      {"tanh", 0.0f, 0.0f},
      {"tanh", -0.0f, -0.0f},
      {"tanh", kInf, 1},
      {"tanh", -kInf, -1},
      {"tanh", kNaN, kNaN},
      {"tanh", kDenorm, kDenorm},
      {"tanh", -1e-30f, -1e-30f},
      {"tanh", 9.5f, 1},
      {"tanh", -20.0f, -1},
      {"tanh", 3e38f, 1},
      {"sigmoid", 0.0f, 0.5f},
      {"sigmoid", -0.0f, 0.5f},
      {"sigmoid", kInf, 1},
      {"sigmoid", -kInf, 0},
      {"sigmoid", kNaN, kNaN},
      {"sigmoid", 100.0f, 1},
      {"sigmoid", -80.0f, std::exp(-80.0f)},  // e^x / (1 + e^x): the tail keeps its relative accuracy
      {"sigmoid", -87.0f, std::exp(-87.0f)},
      {"sigmoid", -100.0f, 0},               // below 2^-126: flushed to 0
      {"silu", -kInf, kNaN},                 // -inf / (1 + inf), as the reference computes it
      {"silu", -100.0f, static_cast<float>(-100.0 * std::exp(-100.0))},  // subnormal
      {"silu", kInf, kInf},
      {"silu", 0.0f, 0.0f},
      {"silu", kNaN, kNaN},
      {"erf", 0.0f, 0.0f},
      {"erf", -0.0f, -0.0f},
      {"erf", kInf, 1},
      {"erf", -kInf, -1},
      {"erf", kNaN, kNaN},
      {"erf", 4.0f, 1},
      {"erf", -5.0f, -1},
      {"erf", 1e-30f, std::erf(1e-30f)},
  };
  for (const Special& c : cases) {
    Tensor x = lf::from_vector(std::vector<float>{c.x}, {1});
    Tensor y;
    for (const Fn& fn : functions())
      if (std::string(fn.name) == c.op) y = fn.op(x);
    ASSERT_TRUE(y.defined()) << c.op;
    float got = y.item<float>();
    if (std::isnan(c.want)) {
      EXPECT_TRUE(std::isnan(got)) << c.op << "(" << c.x << ") = " << got;
    } else if (c.want == 0 || std::isinf(c.want)) {  // zeros (with their sign) and infinities exactly
      EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(c.want))
          << c.op << "(" << std::hexfloat << c.x << ") = " << got << ", want " << c.want;
    } else {  // finite values within the function's accuracy
      EXPECT_LE(std::fabs(static_cast<double>(got) - c.want), 1.5 * ulp_at(c.want))
          << c.op << "(" << std::hexfloat << c.x << ") = " << got << ", want " << c.want;
    }
  }
}

// Compositions built on the inline functions keep the reference executor's formulas: GELU's two
// forms against libm's float erf and tanh (their cancellations included).
TEST_F(InlineMath, GeluFormsMatchTheReferenceFormula) {
  std::vector<float> xs;
  for (float x = -12.0f; x <= 12.0f; x += 0.001953125f) xs.push_back(x);
  for (float x : {0.0f, -0.0f, kInf, -kInf, kNaN, 1e-30f, -1e-30f}) xs.push_back(x);
  Tensor x = lf::from_vector(xs, {static_cast<int64_t>(xs.size())});
  for (bool approximate : {false, true}) {
    std::vector<float> got = lf::gelu(x, approximate).to_vector<float>();
    for (size_t k = 0; k < xs.size(); ++k) {
      float v = xs[k];
      float want = approximate
                       ? 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)))
                       : 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752440f));
      if (std::isnan(want) || std::isinf(want)) {
        EXPECT_TRUE(std::isnan(want) ? std::isnan(got[k]) : got[k] == want) << "gelu(" << v << ") = " << got[k];
        continue;
      }
      EXPECT_NEAR(got[k], want, 1e-6 * std::max(1.0f, std::fabs(want))) << "gelu(" << v << ", " << approximate << ")";
    }
  }
}

// The kernels' inner loops vectorize to whole vector registers and no calls remain.
TEST_F(InlineMath, KernelsVectorizeWithoutCalls) {
  bool avx512 = lf::cpu::target_id().find("+avx512f") != std::string::npos;
  bool x86 = lf::cpu::target_id().find("x86_64") != std::string::npos;
  if (!x86) GTEST_SKIP() << "checks x86 vector code; target " << lf::cpu::target_id();
  const std::string vec = avx512 ? "<16 x float>" : "<8 x float>";
  const std::string reg = avx512 ? "zmm" : "ymm";
  Tensor x = lf::from_vector(std::vector<float>(4096, 0.5f), {4096});
  std::vector<std::pair<std::string, Tensor>> kernels;
  for (const Fn& fn : functions()) kernels.emplace_back(fn.name, fn.op(x));
  kernels.emplace_back("gelu", lf::gelu(x));
  kernels.emplace_back("gelu_tanh", lf::gelu(x, true));
  kernels.emplace_back("chain", lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3);
  kernels.emplace_back("sum_squares", lf::sum(x * x));
  for (auto& [what, t] : kernels) {
    std::vector<lf::ir::Node*> roots{t.node().get()};
    auto order = lf::ir::topo_order(roots);
    auto p = lf::fuse::partition(order, [&](const lf::ir::Node& n) { return &n == roots[0]; }, true);
    ASSERT_EQ(p.groups.size(), 1u) << what;
    auto low = lf::lower::lower_group(p.groups[0], p, 0, lf::Device::cpu());
    auto inspection = lf::cpu::inspect(low.kernel, "k_" + what);
    ASSERT_TRUE(inspection.ok()) << inspection.status();
    const std::string& ir = inspection->optimized_ir;
    EXPECT_NE(ir.find(vec), std::string::npos) << what << ": no " << vec << " in\n" << ir;
    size_t at = 0;
    while ((at = ir.find(" call ", at)) != std::string::npos) {
      size_t end = ir.find('\n', at);
      std::string line = ir.substr(at, end - at);
      EXPECT_NE(line.find("@llvm."), std::string::npos) << what << ": a call remains:" << line;
      at = end;
    }
    if (what == "sum_squares") {  // the split reduction's chunk function vectorizes too
      size_t part = ir.find("@k_sum_squares_part(");
      ASSERT_NE(part, std::string::npos) << ir;
      EXPECT_NE(ir.find(vec, part), std::string::npos) << ir.substr(part);
    }
    const std::string& s = inspection->assembly;
    EXPECT_NE(s.find(reg), std::string::npos) << what;
    EXPECT_EQ(s.find("\tcall"), std::string::npos) << what << ": a call in\n" << s;
  }
}

}  // namespace
