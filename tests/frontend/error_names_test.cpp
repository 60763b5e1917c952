// Errors name the op the user called (issue 50 item 14): a composite's inner ops (conv1d's conv2d,
// conv_transpose2d's zeros, index_put and pad, a pool's pad, interpolate's expand and arange,
// max_unpool2d's scatter, index_add's scatter_add, one_hot's and bincount's class count, eye's
// comparison) raise errors that name the user's op first.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "frontend/test_util.h"

namespace {

using lf::DType;
using lf::Tensor;

constexpr int64_t kMax = INT64_MAX;

// The message of the lf::Error `f` throws; it must start with "lf::<op>:".
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const lf::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not an lf::Error: ") + e.what();
  }
  return "no error";
}

#define EXPECT_NAMES(op, stmt)                                                  \
  do {                                                                          \
    const std::string msg = error_of([&] { (void)(stmt); });                    \
    EXPECT_EQ(msg.rfind(std::string("lf::") + op + ":", 0), 0u) << #stmt << "\n  " << msg; \
  } while (0)

class ErrorNames : public lf::test::OnCpu {};

TEST_F(ErrorNames, CompositesNameTheUsersOp) {
  Tensor x3 = lf::ones({1, 1, 5});
  Tensor x4 = lf::ones({1, 1, 5, 5});
  EXPECT_NAMES("conv1d", lf::conv1d(x3, lf::ones({1, 1, 7})));
  EXPECT_NAMES("conv1d", lf::conv1d(x3, lf::ones({1, 2, 3})));
  EXPECT_NAMES("conv1d", lf::conv1d(x3, lf::ones({1, 1, 3}), {}, 1, 0, kMax));
  EXPECT_NAMES("conv_transpose2d", lf::conv_transpose2d(x4, lf::ones({1, 1, 3, 3}), {}, int64_t{1} << 40));
  EXPECT_NAMES("conv_transpose2d", lf::conv_transpose2d(x4, lf::ones({1, 1, 3, 3}), {}, 1, int64_t{1} << 40));
  EXPECT_NAMES("conv_transpose2d", lf::conv_transpose2d(x4, lf::ones({1, 1, 3, 3}), {}, 1, 0, int64_t{1} << 40));
  EXPECT_NAMES("conv_transpose2d", lf::conv_transpose2d(x4, lf::ones({1, 1, 3, 3}), {}, 1, -5));
  const int64_t k = int64_t{1} << 62, pad = int64_t{1} << 61;
  EXPECT_NAMES("max_pool2d_with_indices", lf::max_pool2d_with_indices(x4, {k, 1}, lf::Size2{1}, {pad, 0}).first);
  EXPECT_NAMES("interpolate", lf::interpolate(x4, {int64_t{1} << 40, int64_t{1} << 40}));
  EXPECT_NAMES("interpolate", lf::interpolate(x4, 1e18, "bilinear"));
  EXPECT_NAMES("interpolate", lf::interpolate(x4, 1e18));
  Tensor idx = lf::from_vector(std::vector<int64_t>{0, 1, 30, 3}, {1, 1, 2, 2});
  EXPECT_NAMES("max_unpool2d", lf::max_unpool2d(lf::ones({1, 1, 2, 2}), idx, 2).to_vector<float>());
  EXPECT_NAMES("max_unpool2d", lf::max_unpool2d(lf::ones({1, 1, 2, 2}), lf::ones({1, 1, 2, 3}, DType::Int64), 2));
  Tensor bad = lf::from_vector(std::vector<int64_t>{0, 9}, {2});
  EXPECT_NAMES("index_add", lf::index_add(lf::zeros({3}), 0, bad, lf::ones({2})).to_vector<float>());
  EXPECT_NAMES("index_add", lf::index_add(lf::zeros({3}), 0, bad, lf::ones({3})));
  Tensor big = lf::from_vector(std::vector<int64_t>{kMax}, {1});
  EXPECT_NAMES("bincount", lf::bincount(big).to_vector<int64_t>());
  EXPECT_NAMES("one_hot", lf::one_hot(big).to_vector<int64_t>());
  EXPECT_NAMES("eye", lf::eye(int64_t{1} << 31, DType::Bool));
  EXPECT_NAMES("eye", lf::eye(int64_t{1} << 40, DType::Bool));
  // The inner op is still said, after the user's.
  const std::string msg = error_of([&] { (void)lf::conv1d(x3, lf::ones({1, 1, 7})); });
  EXPECT_NE(msg.find("(in lf::conv2d)"), std::string::npos) << msg;
  // Outside a composite, an op names itself.
  EXPECT_NAMES("scatter_add", lf::scatter_add(lf::zeros({3}), 0, bad, lf::ones({2})).to_vector<float>());
  EXPECT_NAMES("conv2d", lf::conv2d(x4, lf::ones({1, 1, 7, 7})));
}

}  // namespace
