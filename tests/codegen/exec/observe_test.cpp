// Observability from the outside (README, "Observability"): LAZYFUSE_LOG's per-cut lines, the
// recompile explanations, the profile's totals against cache_stats() (replayed plans included),
// and the cache entry format that keeps the explanation (version 3; version 2 still read).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "codegen/backend/explain.h"
#include "codegen/cache/disk_entry.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"

namespace {

using lf::Tensor;

Tensor ramp(int64_t rows, int64_t cols, lf::DType dtype = lf::DType::Float32) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 13) * 0.5f - 3.0f;
  Tensor t = lf::from_vector(v, {rows, cols}).to(dtype);
  lf::sync();  // a buffer of its dtype: the cast is not part of the kernels under test
  return t;
}

// Runs `body` with LAZYFUSE_LOG=1 and returns what it printed on stderr.
template <typename F>
std::string logged(F body) {
  auto& config = lf::rt::mutable_config();
  int saved = config.log_level;
  config.log_level = 1;
  testing::internal::CaptureStderr();
  body();
  config.log_level = saved;
  return testing::internal::GetCapturedStderr();
}

TEST(ObserveLog, EachCutNamesItsNodeAndTheGroupItWouldHaveJoined) {
  Tensor x = ramp(6, 10);
  std::string err = logged([&] {
    Tensor t = x * 3.0;                    // held: the transposed read below cannot fuse into its group
    Tensor u = t.transpose(0, 1) + 1.0;    // view of a computed value
    lf::sync();
  });
  EXPECT_NE(err.find("cuts: "), std::string::npos) << err;
  EXPECT_TRUE(std::regex_search(err, std::regex(R"(group 0 \(pointwise, 1 ops\): mul#\d+\n)"))) << err;
  EXPECT_TRUE(std::regex_search(err, std::regex(R"(cut: add#\d+ not joined to group 0 \(view-of-computed\); starts group 1)")))
      << err;
}

// Logging leaves flush plans on: a logged loop replays as an unlogged one does, and its log says
// so at the 1st and 10th replay, not once a step.
TEST(ObserveLog, ALoggedLoopReplaysAndLogsItsReplaysSparsely) {
  if (!lf::rt::config().flush_plans) GTEST_SKIP() << "LAZYFUSE_FLUSH_PLANS=0";
  Tensor x = ramp(8, 32);
  const uint64_t before = lf::cache_stats().plans_replayed;
  std::string log = logged([&] {
    for (int i = 0; i < 14; ++i) {
      Tensor y = lf::sum(lf::exp(x * 0.25) - 1.0, {1});
      lf::sync();
      (void)y.to_vector<float>();
    }
  });
  const uint64_t replayed = lf::cache_stats().plans_replayed - before;
  EXPECT_GE(replayed, 10u) << log;
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("recorded as a plan"), 1u) << log;
  EXPECT_EQ(count("replayed from a plan"), 2u) << log;  // the 1st and the 10th
  EXPECT_LE(count("] flush: "), 2u + 2u) << "groups logged once a step:\n" << log;
}

// A loop whose flushes never replay (a pinned number, here attention's scale, changes every step)
// logs its groups twice (its first sighting and its recording), then one line at its 3rd, 10th,
// 100th, ... sighting; its results stay right.
TEST(ObserveLog, AFlushThatKeepsMissingItsPlanIsLoggedSparsely) {
  if (!lf::rt::config().flush_plans) GTEST_SKIP() << "LAZYFUSE_FLUSH_PLANS=0";
  if (!lf::rt::config().fusion) GTEST_SKIP() << "LAZYFUSE_FUSION=0: no attention rewrite reads the scale";
  Tensor q = ramp(19, 8).reshape({1, 19, 8}), k = ramp(19, 8).reshape({1, 19, 8}) * 0.5;
  lf::sync();
  std::vector<float> got;
  std::string log = logged([&] {
    for (int i = 0; i < 14; ++i) {
      const float scale = 0.1f + 0.01f * static_cast<float>(i);
      Tensor y = lf::sum(lf::matmul(lf::softmax(lf::matmul(q, lf::transpose(k, 1, 2)) * scale, -1), k));
      got.push_back(y.to_vector<float>()[0]);
    }
  });
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("fused again as logged before"), 2u) << log;  // the 3rd and the 10th sighting
  EXPECT_NE(log.find("sighting 10 of its structure"), std::string::npos) << log;
  EXPECT_LE(count("] flush: "), 2u + 2u) << "groups logged once a step:\n" << log;
  for (int i = 0; i < 14; ++i) {
    const float scale = 0.1f + 0.01f * static_cast<float>(i);
    lf::rt::mutable_config().fusion = false;  // each op on its own: no attention kernel, no plan
    float want = lf::sum(lf::matmul(lf::softmax(lf::matmul(q, lf::transpose(k, 1, 2)) * scale, -1), k)).to_vector<float>()[0];
    lf::rt::mutable_config().fusion = true;  // as the skip above found it
    EXPECT_NEAR(got[static_cast<size_t>(i)], want, 1e-4 * (1 + std::abs(want))) << "step " << i;
  }
}

// A group made of a composite's inner ops names the ops the user called (pad is aranges, clamps and
// a remap; softmax a max, an exp, a sum and a division), not only the inner ones.
TEST(ObserveLog, GroupsNameTheOpsTheUserCalled) {
  Tensor x = ramp(6, 10);
  std::string err = logged([&] {
    Tensor y = lf::softmax(lf::pad(x, {1, 1}) * 2.0, 1);
    lf::sync();
  });
  EXPECT_TRUE(std::regex_search(err, std::regex(R"(group \d+ \(row, \d+ ops, from pad, mul, softmax\): )"))) << err;
  EXPECT_NE(err.find("remap#"), std::string::npos) << "the inner ops are still listed:\n" << err;
  // A group of ops the user called one by one says nothing more.
  err = logged([&] {
    Tensor y = lf::exp(x) + 1.0;
    lf::sync();
  });
  EXPECT_TRUE(std::regex_search(err, std::regex(R"(group 0 \(pointwise, 2 ops\): )"))) << err;
}

TEST(ObserveLog, RecompileSaysWhatIsNew) {
  // An op list no other test compiles (the explanation compares kernels of the same ops).
  auto f = [](const Tensor& a, const Tensor& b) { return lf::atan2(lf::expm1(a) - b, a * b + 7.0); };
  Tensor a = ramp(5, 8), b = ramp(5, 8), a64 = ramp(5, 8, lf::DType::Float64), b64 = ramp(5, 8, lf::DType::Float64);
  Tensor bt = ramp(8, 5).transpose(0, 1);
  std::string first = logged([&] { f(a, b).to_vector<float>(); });
  EXPECT_NE(first.find("the first kernel of these ops"), std::string::npos) << first;
  std::string dtype = logged([&] { f(a64, b64).to_vector<double>(); });
  EXPECT_NE(dtype.find("new: dtype float64 (was float32)"), std::string::npos) << dtype;
  std::string layout = logged([&] { f(a, bt).to_vector<float>(); });
  EXPECT_NE(layout.find("input 1: transposed layout (was contiguous)"), std::string::npos) << layout;
  EXPECT_NE(layout.find("rank 2 (was 1)"), std::string::npos) << layout;
  // Compiled once, explained once: a hit says nothing.
  std::string again = logged([&] { f(a, bt).to_vector<float>(); });
  EXPECT_EQ(again.find("new:"), std::string::npos) << again;
  EXPECT_NE(again.find(" hit"), std::string::npos) << again;
}

TEST(ObserveExplain, LayoutNames) {
  using lf::kir::StrideClass;
  EXPECT_EQ(lf::backend::layout_name({StrideClass::Unit}), "contiguous");
  EXPECT_EQ(lf::backend::layout_name({StrideClass::Any, StrideClass::Unit}), "contiguous");
  EXPECT_EQ(lf::backend::layout_name({StrideClass::Unit, StrideClass::Any}), "transposed");
  EXPECT_EQ(lf::backend::layout_name({StrideClass::Zero, StrideClass::Unit}), "broadcast");
  EXPECT_EQ(lf::backend::layout_name({StrideClass::Zero}), "scalar");
  EXPECT_EQ(lf::backend::layout_name({StrideClass::Any}), "strided");
}

// Total launches in a profile report's first line.
uint64_t reported_launches(const std::string& report) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(report, m, std::regex(R"(profile: \d+ kernels, (\d+) launches)"))) << report;
  return m.empty() ? 0 : std::stoull(m[1]);
}

TEST(ObserveProfile, LaunchesAgreeWithCacheStatsReplaysIncluded) {
  Tensor x = ramp(32, 16), y = ramp(32, 16);
  lf::CacheStats before = lf::cache_stats();
  std::string report;
  {
    lf::Profile p;
    for (int i = 0; i < 6; ++i) {
      Tensor s = lf::sum(lf::exp(x) * y, {1});
      Tensor r = lf::relu(x - y * 0.5);
      s.to_vector<float>();
      r.to_vector<float>();
    }
    report = p.report();
  }
  lf::CacheStats after = lf::cache_stats();
  EXPECT_GT(after.plans_replayed, before.plans_replayed) << "the loop replays flush plans";
  EXPECT_EQ(reported_launches(report), after.kernels_launched - before.kernels_launched) << report;
  EXPECT_TRUE(std::regex_search(report, std::regex(R"(\n  lf_[0-9a-f]{16} +\d+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.-]+ +exp,mul -> sum)")))
      << report;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(report, m, std::regex(R"((\d+) flushes \((\d+) replayed plans\))"))) << report;
  EXPECT_EQ(std::stoull(m[1]), after.flushes - before.flushes);
  EXPECT_EQ(std::stoull(m[2]), after.plans_replayed - before.plans_replayed);
  // Ended: a later scope starts from zero.
  lf::profile_begin();
  lf::relu(x + 1.0).to_vector<float>();
  EXPECT_EQ(reported_launches(lf::profile_report()), 1u);
  EXPECT_EQ(reported_launches(lf::profile_report()), 0u + 1u) << "a report does not clear it";
}

// Library calls (issue 52 item 5) are rows of their own, named by op and output shape, with their
// calls, time and bytes, replayed plans included; their time is no longer host time, and their
// epilogue kernels keep their rows.
TEST(ObserveProfile, LibraryCallsAreRows) {
  Tensor a = ramp(64, 32), b = ramp(32, 48), keys = ramp(16, 40), rows = ramp(8, 100);
  lf::CacheStats before = lf::cache_stats();
  std::string report;
  {
    lf::Profile p;
    for (int i = 0; i < 5; ++i) {
      lf::relu(lf::matmul(a, b) * 2.0).to_vector<float>();
      lf::argsort(keys, 1).to_vector<int64_t>();
      lf::cumsum(rows * 3.0, 1).to_vector<float>();
    }
    report = p.report();
  }
  lf::CacheStats after = lf::cache_stats();
  EXPECT_GT(after.plans_replayed, before.plans_replayed) << "the loop replays flush plans";
  std::smatch m;
  ASSERT_TRUE(std::regex_search(report, m, std::regex(R"(; (\d+) library calls, (\d+) calls, ([0-9.]+) ms in library calls)")))
      << report;
  EXPECT_GE(std::stoull(m[1]), 2u) << report;  // matmul and argsort (a scan may be a kernel of its own)
  EXPECT_GE(std::stoull(m[2]), 10u) << report;
  // matmul: 5 calls, 64 * 48 + 64 * 32 + 32 * 48 floats read and written.
  EXPECT_TRUE(std::regex_search(
      report, m, std::regex(R"(\n  matmul\[64, 48\] +5 +([0-9.]+) +[0-9.]+ +([0-9.]+) +[0-9.-]+ +library: float32\[64, 32\], float32\[32, 48\] \+ an epilogue of 2 ops)")))
      << report;
  if (!m.empty()) EXPECT_NEAR(std::stod(m[2]), 5 * (64 * 48 + 64 * 32 + 32 * 48) * 4 / 1e6, 0.01) << report;
  EXPECT_TRUE(std::regex_search(report, std::regex(R"(\n  argsort\[16, 40\] +5 .* library: float32\[16, 40\] -> int64)")))
      << report;
  // The cumsum: a scan kernel of its own (the CPU) or a library call.
  EXPECT_TRUE(std::regex_search(report, std::regex(R"(\n  (lf_[0-9a-f]{16} +5 .*cumsum|cumsum\[8, 100\] +5 ))"))) << report;
  ASSERT_TRUE(std::regex_search(report, m, std::regex(R"(host time (-?[0-9.]+) ms per flush)"))) << report;
  EXPECT_GE(std::stod(m[1]), 0.0) << report;
}

TEST(ObserveEntry, ExplanationRoundTripsAndVersion2IsStillRead) {
  namespace disk = lf::cache::disk;
  disk::Record r;
  r.key = "cpu|fp|target|v|k";
  r.name = "lf_" + disk::key_hash(r.key);
  r.why = "input 1: transposed layout (was contiguous)";
  r.binary = "obj";
  std::string why;
  auto back = disk::decode(disk::encode(r), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->why, r.why);
  EXPECT_EQ(back->version, 3u);
  // The same entry as version 2 wrote it: no `why` field.
  std::string v3 = disk::encode(r);
  std::string body = v3.substr(0, v3.size() - 8 - 8 - r.why.size());
  body[8] = 2;
  uint64_t sum = disk::fnv1a64(body.data(), body.size());
  for (int i = 0; i < 8; ++i) body += static_cast<char>((sum >> (8 * i)) & 0xff);
  auto old = disk::decode(body, &why);
  ASSERT_TRUE(old) << why;
  EXPECT_EQ(old->version, 2u);
  EXPECT_EQ(old->why, "");
  EXPECT_EQ(old->key, r.key);
  body[8] = 1;
  EXPECT_FALSE(disk::decode(body, &why));
  EXPECT_NE(why.find("format version 1"), std::string::npos) << why;
}

}  // namespace
