#include <gtest/gtest.h>

#include <lazyfuse/lazyfuse.h>

TEST(Smoke, AddAndRead) {
  lf::Tensor a = lf::from_vector(std::vector<float>{1, 2, 3}, {3});
  lf::Tensor b = a * 2 + 1;
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{3, 5, 7}));
}
