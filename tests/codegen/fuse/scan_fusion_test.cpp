// Scans fused with their elementwise producers and consumers (fuse::Group::scan,
// kir::InstrKind::Scan; issue 23): cumsum, cumprod, logcumsumexp, cummax and cummin along any dim as one kernel with the ops
// around them, on the default device (the CUDA backend's thread-a-row kernel where a GPU is
// present, over enough lines that fuse::fused_scan takes them there), checked against the
// reference executor running one op at a time, fused and unfused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/fuse/fuser.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"
#include "tests/codegen/test_util.h"

namespace lf {
namespace {

// Lines enough for the fused path on either device: a GPU fuses scans over at least
// kScanMinLinesGpu lines.
constexpr int64_t kLines = fuse::kScanMinLinesGpu;

Tensor data(const Shape& s, uint64_t seed, double lo = -1, double hi = 1) {
  test::Rng r(seed);
  std::vector<float> v(static_cast<size_t>(shape_numel(s)));
  for (float& x : v) x = static_cast<float>(r.uniform(lo, hi));
  Tensor t = from_vector(v, s).to(default_device());
  sync();
  return t;
}

// The tensors `program` returns, computed fused (one flush), against the reference; and the
// kernels that flush launched.
uint64_t expect_fused(const std::function<std::vector<Tensor>()>& program, int64_t line, const std::string& what) {
  std::vector<Tensor> out = program();
  std::vector<test::Values> refs;
  for (const Tensor& t : out) refs.push_back(test::reference_values(t));
  test::StatsDelta d;
  sync();
  uint64_t launched = d.launched();
  for (size_t k = 0; k < out.size(); ++k) {
    // A scan's error grows with the line (a sum's rounding): the tolerance of a reduction that long.
    std::string diff = test::compare(refs[k], test::fused_values(out[k]), test::default_tolerance(out[k].dtype(), line));
    EXPECT_TRUE(diff.empty()) << what << ", output " << k << " " << dtype_name(out[k].dtype()) << ":\n" << diff;
  }
  return launched;
}

TEST(ScanFusion, ProducersAndConsumersRunAsOneKernel) {
  Tensor x = data({kLines / 8, 8, 24}, 1);  // lines along dim 2: kLines of 24
  Tensor y = data({kLines / 8, 8, 24}, 2);
  uint64_t launched = expect_fused([&] { return std::vector<Tensor>{cumsum(exp(x) * 0.5f, 2) + y}; }, 24, "cumsum(exp(x) * 0.5, 2) + y");
  EXPECT_EQ(launched, 1u);
  // Lines of 21: on a GPU lane groups of 8, the last step past the line's end.
  Tensor u = data({kLines, 21}, 4);
  launched = expect_fused([&] { return std::vector<Tensor>{cumsum(u * u, 1) - u}; }, 21, "cumsum(u * u, 1) - u");
  EXPECT_EQ(launched, 1u);
  // Along a leading dim (the lines side by side in memory), a product and a cast after it: one
  // kernel on a GPU (a thread a line, coalesced); on the CPU the library's scan of 64 lines side by
  // side between two kernels (fuse::fused_scan).
  Tensor z = data({24, kLines}, 3, 0.5, 1.5);
  launched = expect_fused([&] { return std::vector<Tensor>{cumprod(z * 0.9f, 0).to(DType::Float64)}; }, 24, "cumprod(z * 0.9, 0)");
  EXPECT_EQ(launched, default_device().is_cpu() ? 3u : 1u);
}

TEST(ScanFusion, EveryDtypeFusedAndUnfused) {
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64}) {
    for (bool fused : {true, false}) {
      test::FusionScope scope(fused);
      Tensor x = (data({kLines, 16}, 10) * 8).to(d);
      Tensor w = data({16}, 11).to(d);  // broadcast along the lines
      std::string what = std::string(fused ? "fused " : "unfused ") + dtype_name(d);
      auto program = [&] {
        Tensor s = cumsum(x * 2 + w, 1);  // int32 sums are int64 (PyTorch's promotion)
        Tensor p = cumprod(is_floating(d) ? x * 0.125 + 1 : remainder(x, 3) - 1, 1);
        if (!is_floating(d)) return std::vector<Tensor>{s - 1, p};
        return std::vector<Tensor>{s - 1, p, logcumsumexp(x * 0.5 - w, 1) * 2};
      };
      expect_fused(program, 16, what);
    }
  }
}

TEST(ScanFusion, SpecialValuesViewsAndEdgeSizes) {
  // NaN and inf inside lines: everything after them in the line is NaN or inf, as the reference.
  std::vector<float> v(static_cast<size_t>(kLines * 4));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7) - 3;
  v[5] = std::numeric_limits<float>::quiet_NaN();
  v[10] = std::numeric_limits<float>::infinity();
  v[17] = -std::numeric_limits<float>::infinity();
  Tensor x = from_vector(v, {kLines, 4}).to(default_device());
  sync();
  expect_fused([&] { return std::vector<Tensor>{cumsum(x * 1.5f, 1) * 2, cumprod(x + 0.5f, 1), logcumsumexp(x * 2, 1) + 1}; },
               4, "nan/inf");
  // A transposed view as the input, the scan along what was dim 0.
  Tensor t = data({12, kLines}, 20);
  expect_fused([&] { return std::vector<Tensor>{cumsum(relu(t.transpose(0, 1)), 1) + 1}; }, 12, "transposed");
  // Lines of 1, and an empty tensor.
  Tensor one = data({kLines, 1}, 21);
  expect_fused([&] { return std::vector<Tensor>{cumsum(one * 3, 1) + one}; }, 1, "lines of 1");
  Tensor empty = data({0, 8}, 22);
  expect_fused([&] { return std::vector<Tensor>{cumsum(empty * 3, 1) + 1}; }, 8, "empty");
  // Two scans of one group, the scan's value held with a consumer's.
  Tensor a = data({kLines, 10}, 23);
  expect_fused(
      [&] {
        Tensor e = a * a;
        Tensor s = cumsum(e, 1);
        return std::vector<Tensor>{s, cumprod(e + 1, 1), s / (e + 1)};
      },
      10, "two scans");
}

// Lines side by side long enough that a GPU cuts each into chunks, a warp a chunk
// (EmitOptions::scan_chunks: lines of at least 128): chunks that end short of a full one (lines of
// 300 and 130), lines that do not fill a block's 32 (kLines + 5), NaN and inf inside a chunk,
// every scan op; float32 fused and unfused, the other dtypes fused.
TEST(ScanFusion, LinesSideBySideInChunks) {
  for (int64_t n : {int64_t{300}, int64_t{130}}) {
    for (DType d : {DType::Float32, DType::BFloat16, DType::Int64}) {
      if (d != DType::Float32 && n != 130) continue;
      for (bool fused : {true, false}) {
        if (d != DType::Float32 && !fused) continue;
        test::FusionScope scope(fused);
        const std::string what =
            std::string(fused ? "fused " : "unfused ") + dtype_name(d) + " lines of " + std::to_string(n);
        Tensor x = data({n, kLines + 5}, 50 + static_cast<uint64_t>(n));
        if (is_floating(d)) {  // one NaN and one inf in the middle of a chunk of line 3, a NaN late in line 40
          Tensor i = arange(0, static_cast<double>(n * (kLines + 5)), 1, DType::Int64).reshape({n, kLines + 5});
          x = where(i == 20 * (kLines + 5) + 3, std::numeric_limits<float>::quiet_NaN(),
                    where(i == 21 * (kLines + 5) + 3, std::numeric_limits<float>::infinity(),
                          where(i == (n - 3) * (kLines + 5) + 40, std::numeric_limits<float>::quiet_NaN(), x)));
        }
        Tensor v = (is_floating(d) ? x : x * 8).to(d);
        sync();
        expect_fused(
            [&] {
              Tensor mean = cumsum(relu(v) * 0.5, 0) / arange(1, static_cast<double>(n + 1)).reshape({n, 1});
              std::vector<Tensor> out{mean, cummax(v, 0).second + 1, cummin(v * 3, 0).second};
              if (is_floating(d)) {
                out.push_back(logcumsumexp(v * 0.25, 0) - 1);
                out.push_back(cumprod(v * 0.01 + 1, 0));
              }
              return out;
            },
            n, what);
      }
    }
  }
}

// cummax and cummin fused (kir::scan_extreme): their positions computed in their producers'
// kernel, with ties (the later position wins), NaN (it wins and stays: the latest NaN), every
// dtype, lines of 21 (on a GPU a lane group's last step runs past the line's end), along a leading
// dim, fused and unfused. The values are a gather at the positions: a kernel after the scan's.
TEST(ScanFusion, CumMaxAndCumMinFused) {
  std::vector<float> raw(static_cast<size_t>(kLines * 21));
  test::Rng r(40);
  for (float& v : raw) v = static_cast<float>(std::floor(r.uniform(-2, 2)));  // four values: many ties
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t i = 3; i < raw.size(); i += 97) raw[i] = nan;
  // Lines with two NaN (the later one's position wins): far apart, and within one step of a GPU
  // lane group (positions 1 and 3).
  for (size_t line = 5; line < static_cast<size_t>(kLines); line += 13) {
    raw[line * 21 + 1] = raw[line * 21 + 3] = nan;
    raw[line * 21 + 17] = nan;
  }
  raw[0] = -std::numeric_limits<float>::infinity();  // a line starting at -inf
  Tensor x = from_vector(raw, {kLines, 21}).to(default_device());
  Tensor lead = data({12, kLines}, 41);
  sync();
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64,
                  DType::Bool}) {
    for (bool fused : {true, false}) {
      test::FusionScope scope(fused);
      std::string what = std::string(fused ? "fused " : "unfused ") + dtype_name(d);
      auto values = [&](const Tensor& t) {
        if (d == DType::Bool) return t > 0.5f;  // NaN > 0.5 is false
        if (is_floating(d)) return (t * 2).to(d);
        return where(isnan(t), full_like(t, 7), t * 2).to(d);  // integers: NaN as the largest value
      };
      uint64_t launched = expect_fused(
          [&] {
            auto [mv, mi] = cummax(values(x), 1);
            auto [nv, ni] = cummin(values(x), 1);
            return std::vector<Tensor>{mv, mi * 2 + 1, nv, ni};
          },
          21, what);
      // Three kernels (unfused: eight): cummax with its producer and the positions' consumers;
      // the gather of cummax's values with cummin's producer and cummin; cummin's gather (a gather
      // joins no group that computes its source).
      if (fused) {
        EXPECT_EQ(launched, 3u) << what;
      }
      expect_fused([&] { return std::vector<Tensor>{cummax(values(lead), 0).second + 1}; }, 12, what + " along dim 0");
    }
  }
}

// What stays a library call: a scan alone, one over few long lines (on a GPU the look-back scan
// splits them over blocks; on the CPU the two-pass scan over threads); and what does not join a
// scan group: a reduction of it, a scan along another dim.
TEST(ScanFusion, WhatIsNotFused) {
  auto groups = [](const Tensor& t) {
    testing::internal::CaptureStderr();
    int saved = rt::config().log_level;
    rt::mutable_config().log_level = 1;
    Tensor copy = t;
    sync();
    rt::mutable_config().log_level = saved;
    return testing::internal::GetCapturedStderr();
  };
  Tensor x = data({kLines, 8}, 30);
  std::string log = groups(cumsum(x, 1));
  EXPECT_NE(log.find("cumsum [" + std::to_string(kLines) + ", 8, 1] (outer, n, inner)"), std::string::npos) << log;
  log = groups(sum(cumsum(x * 2, 1), {1}));
  EXPECT_NE(log.find("cumsum[scan]"), std::string::npos) << log;
  EXPECT_NE(log.find("-> sum[inner 1d]"), std::string::npos) << log;  // the sum is a kernel of its own
  EXPECT_EQ(log.find("mul,cumsum[scan],copy -> sum"), std::string::npos) << log;
  Tensor few = data({2, 1 << 16}, 31);
  log = groups(cumsum(few * 2, 1));
  EXPECT_EQ(log.find("[scan]"), std::string::npos) << log;
  // cummax of an input: its values' gather reads the input, so it joins the scan's kernel.
  log = groups(cummax(x, 1).second);
  EXPECT_NE(log.find("cummax[scan],gather"), std::string::npos) << log;
  log = groups(cummin(x * 2, 1).second);
  EXPECT_NE(log.find("mul,cummin[scan]"), std::string::npos) << log;
  log = groups(logcumsumexp(x * 2, 1) + 1);
  EXPECT_NE(log.find("mul,logcumsumexp[scan],add"), std::string::npos) << log;
  // The rule itself.
  Tensor many = data({kLines, 100}, 32);
  EXPECT_TRUE(fuse::fused_scan(*cumsum(many, 1).node()));
  EXPECT_FALSE(fuse::fused_scan(*cumsum(few, 1).node()));
  Tensor wide = data({24, kLines}, 33);
  EXPECT_EQ(fuse::fused_scan(*cumsum(wide, 0).node()), !default_device().is_cpu());  // lines side by side
  EXPECT_TRUE(fuse::fused_scan(*cumsum(many.unsqueeze(2), 1).node()));  // a trailing dim of 1 is no dim
}

// A fuzz of scan groups over enough lines that a GPU fuses them (the general fuzzer's tensors are
// too small for that): a random producer, a random scan op along the last or an earlier dim (lines
// contiguous or side by side, short or long enough for lane groups and chunks), a random consumer,
// random dtypes, NaN sprinkled in; fused, against the reference. LAZYFUSE_SCAN_FUZZ_ITERS sets the
// count (default 40), LAZYFUSE_SCAN_FUZZ_SEED the first seed.
TEST(ScanFusion, RandomProgramsOverManyLines) {
  auto env = [](const char* name, int fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::atoi(v) : fallback;
  };
  const int iters = env("LAZYFUSE_SCAN_FUZZ_ITERS", 40), first = env("LAZYFUSE_SCAN_FUZZ_SEED", 1);
  const std::vector<DType> dtypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                     DType::Int32, DType::Int64};
  const std::vector<int64_t> lengths = {1, 3, 21, 64, 130};
  for (int k = 0; k < iters; ++k) {
    const uint64_t seed = static_cast<uint64_t>(first + k);
    test::Rng r(seed);
    const DType d = r.pick(dtypes);
    const int64_t n = r.pick(lengths), lines = kLines + r.range(0, 40);
    const bool side = r.chance(0.5);  // lines side by side: the scan along dim 0
    const Shape shape = side ? Shape{n, lines} : Shape{lines, n};
    const int64_t dim = side ? 0 : 1;
    std::ostringstream what;
    what << "seed " << seed << ": " << dtype_name(d) << shape_str(shape) << " along dim " << dim;
    Tensor x = data(shape, 100 + seed, -2, 2);
    if (r.chance(0.5)) {  // NaN at every 97th element from a random start
      Tensor i = arange(0, static_cast<double>(shape_numel(shape)), 1, DType::Int64).reshape(shape);
      x = where(remainder(i, 97) == r.range(0, 96), std::numeric_limits<float>::quiet_NaN(), x);
      what << ", NaN";
    }
    Tensor bias = data(side ? Shape{1, lines} : Shape{1, n}, 200 + seed);  // broadcast along the scan or across it
    const int producer = static_cast<int>(r.range(0, 3));
    Tensor p = producer == 0 ? x * 0.5f + bias : producer == 1 ? exp(x * 0.1f) : producer == 2 ? relu(x) - bias : abs(x);
    what << ", producer " << producer;
    Tensor v = is_floating(d) ? p.to(d) : (p * 4).to(d);
    const int op = static_cast<int>(r.range(0, is_floating(d) ? 4 : 3));
    Tensor s;
    switch (op) {
      case 0: s = cumsum(v, dim); break;
      case 1: s = cumprod(is_floating(d) ? v * 0.01 + 1 : remainder(v, 3) - 1, dim); break;  // bounded products
      case 2: s = cummax(v, dim).second; break;
      case 3: s = cummin(v, dim).second; break;
      default: s = logcumsumexp(v, dim); break;
    }
    const int consumer = static_cast<int>(r.range(0, 2));
    Tensor out = consumer == 0 ? s : consumer == 1 ? s * 2 + 1 : s.to(DType::Float64) - bias;
    what << ", op " << op << ", consumer " << consumer;
    sync();
    expect_fused([&] { return std::vector<Tensor>{out}; }, n, what.str());
  }
}

}  // namespace
}  // namespace lf
