// The nearest-row rewrite (codegen/fuse/nearest.cpp) and the backends' nearest kernels, on the
// default device (the CUDA kernel where a GPU is present; sizes span several blocks and the
// centers' shared-memory chunks), checked against the reference executor running the program as
// written: the distances, then the argmin.
#include "codegen/fuse/nearest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"
#include "tests/codegen/test_util.h"

namespace lf {
namespace {

Tensor uniform(const Shape& s, DType d, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-2, 2);
  std::vector<float> v(static_cast<size_t>(shape_numel(s)));
  for (float& x : v) x = u(g);
  Tensor t = from_vector(v, s).to(d);
  sync();
  return t;
}

// LAZYFUSE_LOG=1 for a scope: log() is what the flushes printed.
class LogScope {
 public:
  LogScope() : saved_(rt::config().log_level) {
    rt::mutable_config().log_level = 1;
    testing::internal::CaptureStderr();
  }
  ~LogScope() {
    if (!done_) (void)log();
  }
  std::string log() {
    done_ = true;
    rt::mutable_config().log_level = saved_;
    return testing::internal::GetCapturedStderr();
  }

 private:
  int saved_;
  bool done_ = false;
};

enum class Form { kSquare, kMul, kCentersFirst, kBroadcast, kKeepdim };

// k-means' assignment as a user writes it.
Tensor assign(const Tensor& x, const Tensor& c, Form f) {
  Tensor diff = f == Form::kCentersFirst ? c.unsqueeze(0) - x.unsqueeze(1)
                : f == Form::kBroadcast  ? reshape(x, {x.size(0), 1, x.size(1)}) - c  // c broadcast as [1, K, D]
                                         : x.unsqueeze(1) - c.unsqueeze(0);
  Tensor sq = f == Form::kMul ? diff * diff : square(diff);
  return argmin(sum(sq, {-1}), {1}, f == Form::kKeepdim);
}

// got[i] must be the reference's index, or (where the fused path sums in another order than the
// reference, on a GPU) an index whose distance equals the reference's minimum to within the
// dtype's rounding; a row whose reference distance is NaN must give the reference's index.
void expect_nearest(const test::Values& ref, const std::vector<int64_t>& got, const test::Values& dist, DType d,
                    bool exact, const std::string& what) {
  ASSERT_EQ(ref.i.size(), got.size()) << what;
  const int64_t k = dist.shape.size() == 2 ? dist.shape[1] : 0;
  const double tol = 8 * test::dtype_eps(d);
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    if (got[i] == ref.i[i]) continue;
    double want = dist.f[i * static_cast<size_t>(k) + static_cast<size_t>(ref.i[i])];
    double have = got[i] >= 0 && got[i] < k ? dist.f[i * static_cast<size_t>(k) + static_cast<size_t>(got[i])] : NAN;
    bool close = !exact && !std::isnan(want) && !std::isnan(have) && std::abs(have - want) <= tol * std::max(1.0, std::abs(want));
    if (!close) {
      ++bad;
      ADD_FAILURE() << what << ": row " << i << " got " << got[i] << " (distance " << have << "), the reference "
                    << ref.i[i] << " (distance " << want << ")";
    }
  }
}

void check(const Tensor& x, const Tensor& c, Form f, const std::string& what) {
  Tensor y = assign(x, c, f);
  Tensor dist = sum(square(x.unsqueeze(1) - c.unsqueeze(0)), {-1});  // for the tolerance only
  test::Values ref = test::reference_values(y);
  test::Values dref = test::reference_values(dist);
  LogScope scope;
  std::vector<int64_t> got = y.to_vector<int64_t>();
  std::string log = scope.log();
  const Shape want = f == Form::kKeepdim ? Shape{x.size(0), 1} : Shape{x.size(0)};
  EXPECT_EQ(y.shape(), want) << what;
  // The CPU sums each distance in double, as the reference does: the same indices exactly.
  expect_nearest(ref, got, dref, x.dtype(), x.device().is_cpu(), what);
  EXPECT_NE(log.find("nearest rewritten at argmin#"), std::string::npos) << what << "\n" << log;
  EXPECT_NE(log.find(": nearest of " + std::to_string(x.size(0)) + " rows among " + std::to_string(c.size(0))),
            std::string::npos)
      << what << "\n" << log;
}

TEST(Nearest, EveryFormAndDtypeMatchesTheReference) {
  uint32_t seed = 1;
  for (DType d : {DType::Float32, DType::Float64, DType::BFloat16, DType::Float16}) {
    for (Form f : {Form::kSquare, Form::kMul, Form::kCentersFirst, Form::kBroadcast, Form::kKeepdim}) {
      Tensor x = uniform({1000, 16}, d, seed++), c = uniform({70, 16}, d, seed++);
      check(x, c, f, std::string(dtype_name(d)) + " form " + std::to_string(static_cast<int>(f)));
    }
  }
}

// Rows past the registers (40 values: read from memory), a single center, one dimension, empty
// rows (every distance 0: index 0), no points, and centers past one shared-memory chunk (48 KiB:
// 3000 centers of 8 float32 values take two).
TEST(Nearest, Shapes) {
  struct Case {
    int64_t n, k, d;
  };
  uint32_t seed = 100;
  for (Case s : {Case{700, 33, 40}, Case{300, 1, 16}, Case{513, 9, 1}, Case{20, 5, 0}, Case{0, 4, 8},
                 Case{600, 3000, 8}}) {
    Tensor x = uniform({s.n, s.d}, DType::Float32, seed++), c = uniform({s.k, s.d}, DType::Float32, seed++);
    check(x, c, Form::kSquare, "n " + std::to_string(s.n) + " k " + std::to_string(s.k) + " d " + std::to_string(s.d));
  }
}

// NaN and inf: a point with a NaN has NaN distances (index 0: the first NaN wins); a center with
// a NaN is every point's answer from there on unless an earlier distance is NaN; inf - inf is NaN.
TEST(Nearest, NanAndInf) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType d : {DType::Float32, DType::BFloat16}) {
    std::vector<double> xv(64 * 4), cv(6 * 4);
    std::mt19937 g(7);
    std::uniform_real_distribution<double> u(-1, 1);
    for (double& v : xv) v = u(g);
    for (double& v : cv) v = u(g);
    xv[5 * 4 + 1] = nan;   // point 5
    xv[9 * 4 + 2] = inf;   // point 9: infinite distances but to a center with inf there too
    xv[11 * 4 + 0] = -inf;
    cv[4 * 4 + 3] = nan;   // center 4
    cv[2 * 4 + 2] = inf;   // center 2
    Tensor x = from_vector(xv, {64, 4}).to(d), c = from_vector(cv, {6, 4}).to(d);
    check(x, c, Form::kSquare, std::string("specials ") + dtype_name(d));
  }
}

// Not rewritten when the distances are also wanted: both values right, and the log says why.
TEST(Nearest, KeptDistancesAreNotRewritten) {
  Tensor x = uniform({300, 8}, DType::Float32, 40), c = uniform({12, 8}, DType::Float32, 41);
  Tensor dist = sum(square(x.unsqueeze(1) - c.unsqueeze(0)), {-1});
  Tensor y = argmin(dist, {1});
  test::Values ref = test::reference_values(y), dref = test::reference_values(dist);
  LogScope scope;
  sync();
  std::string log = scope.log();
  EXPECT_NE(log.find("nearest not rewritten at argmin#"), std::string::npos) << log;
  EXPECT_NE(log.find("is held by a handle"), std::string::npos) << log;
  EXPECT_EQ(test::compare(dref, test::fused_values(dist), test::default_tolerance(DType::Float32)), "");
  expect_nearest(ref, y.to_vector<int64_t>(), dref, DType::Float32, false, "kept distances");
}

// A k-means step (the assignment, then index_add and bincount of the points by it) replayed from
// its flush plan on new points each iteration.
TEST(Nearest, KMeansStepsReplay) {
  Tensor c = uniform({16, 8}, DType::Float32, 50);
  uint64_t replayed = cache_stats().plans_replayed;
  for (int it = 0; it < 4; ++it) {
    Tensor x = uniform({2000, 8}, DType::Float32, 60 + static_cast<uint32_t>(it));
    Tensor a = argmin(sum(square(x.unsqueeze(1) - c.unsqueeze(0)), {-1}), {1});
    Tensor sums = index_add(zeros({16, 8}), 0, a, x);
    test::Values ra = test::reference_values(a), rs = test::reference_values(sums);
    Tensor dist = sum(square(x.unsqueeze(1) - c.unsqueeze(0)), {-1});
    test::Values dref = test::reference_values(dist);
    std::vector<int64_t> got = a.to_vector<int64_t>();
    expect_nearest(ra, got, dref, DType::Float32, a.device().is_cpu(), "iteration " + std::to_string(it));
    if (got == ra.i) {  // the sums follow the assignment (equal where the indices are)
      EXPECT_EQ(test::compare(rs, test::fused_values(sums), test::Tolerance{1e-5, 1e-4}), "") << it;
    }
  }
  if (rt::config().flush_plans) {
    EXPECT_GE(cache_stats().plans_replayed - replayed, 1u);
  }
}

}  // namespace
}  // namespace lf
