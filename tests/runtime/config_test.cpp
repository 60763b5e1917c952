#include "runtime/config.h"

#include <gtest/gtest.h>

TEST(Config, DefaultsAreSane) {
  const lf::rt::Config& c = lf::rt::config();
  EXPECT_GE(c.trace_limit, 1);
  EXPECT_GE(c.num_threads, 0);
}
