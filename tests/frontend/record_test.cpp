// Recording: scalar operands shared between ops, and the trace's pruning of dead nodes.
#include "frontend/record.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/config.h"
#include "test_util.h"

namespace {

const lf::ir::NodePtr& number_of(const lf::Tensor& t) { return t.node()->inputs[1]; }

TEST(Record, RepeatedNumbersShareOneNode) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 2, 3, 4}, {4});
  lf::Tensor a = x + 1.0f, b = x * 1.0f, c = x + 2.0f;
  EXPECT_EQ(number_of(a), number_of(b));  // same shape, dtype, device and value
  EXPECT_NE(number_of(a), number_of(c));
  EXPECT_EQ(number_of(a)->op, lf::ir::Op::Full);
  // Not shared: another dtype, another shape, or -0.0 against 0.0 (their bits differ).
  lf::Tensor d = lf::from_vector(std::vector<double>{1, 2, 3, 4}, {4}) + 1.0;
  lf::Tensor e = lf::from_vector(std::vector<float>{1, 2}, {2}) + 1.0f;
  EXPECT_NE(number_of(a), number_of(d));
  EXPECT_NE(number_of(a), number_of(e));
  lf::Tensor z = x + 0.0f, nz = x + -0.0f;
  EXPECT_NE(number_of(z), number_of(nz));
  lf::test::expect_close(a, {2, 3, 4, 5});
  lf::test::expect_close(b, {1, 2, 3, 4});
  lf::test::expect_close(c, {3, 4, 5, 6});
  EXPECT_TRUE(std::signbit((lf::from_vector(std::vector<float>{-0.0f}, {1}) + -0.0f).item<float>()));
}

TEST(Record, SharedNumbersStayGeneratorsAcrossFlushes) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 2, 3}, {3});
  lf::Tensor a = x + 5.0f;
  lf::ir::NodePtr five = number_of(a);
  lf::sync();  // a is computed; the number is a generator inside its kernel, never stored
  EXPECT_TRUE(a.is_materialized());
  EXPECT_FALSE(five->realized());
  lf::Tensor b = x - 5.0f;
  EXPECT_EQ(number_of(b), five);
  lf::test::expect_close(b, {-4, -3, -2});
}

TEST(Record, ALoopOfScalarOpsMatchesTheFormula) {
  lf::Tensor y = lf::from_vector(std::vector<double>{0.5, -1, 2}, {3});
  std::vector<double> want{0.5, -1, 2};
  for (int i = 0; i < 50; ++i) {
    y = y * 0.5 + 1;
    for (double& w : want) w = w * 0.5 + 1;
  }
  lf::test::expect_close(y, want, 1e-12);
}

TEST(Record, DroppedNodesNeverForceAFlush) {
  auto& config = lf::rt::mutable_config();
  int64_t saved = config.trace_limit;
  config.trace_limit = 1000;
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 2}, {2});
  lf::sync();
  lf::reset_stats();
  for (int b = 0; b < 100; ++b) {
    lf::Tensor y = x;
    for (int i = 0; i < 100; ++i) y = y + 1.0f;  // 100 live nodes at most, then all dead
  }
  EXPECT_EQ(lf::cache_stats().flushes, 0u) << "dead nodes were counted towards the trace limit";
  // Held values do: 600 pending handles pass half the limit, so reaching it flushes.
  std::vector<lf::Tensor> held;
  for (int i = 0; i < 1200; ++i) held.push_back(x * static_cast<float>(i));
  EXPECT_GE(lf::cache_stats().flushes, 1u);
  config.trace_limit = saved;
  lf::test::expect_close(held[1199], {1199, 2398});
}

}  // namespace
