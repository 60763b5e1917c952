// Helpers shared by the frontend tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace lf::test {

// Makes the CPU the default device for a test that reads host memory through a pointer
// (data_ptr, from_blob over host buffers, DLPack and Eigen views); the suites run on the GPU
// machine with CUDA as the default device.
class OnCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = lf::default_device();
    lf::set_default_device(lf::Device::cpu());
  }
  void TearDown() override { lf::set_default_device(saved_); }

 private:
  lf::Device saved_ = lf::Device::cpu();
};

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Compares element by element; NaN matches NaN, infinities must match exactly.
inline void expect_close(const lf::Tensor& t, const std::vector<double>& want, double tol = 1e-6) {
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": got " << got[i] << ", want nan";
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << "element " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << "element " << i;
    }
  }
}

// Runs `f`, expects an lf::Error whose message contains every one of `parts`.
inline void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const lf::Error& e) {
    std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
    return;
  }
  ADD_FAILURE() << "expected lf::Error";
}

}  // namespace lf::test
