// lazyfuse/eigen.h: Eigen matrices, arrays, maps, blocks and tensors in, Eigen maps out, no copies.
// Compiled only where Eigen is found (tests/CMakeLists.txt).
#if __has_include(<Eigen/Core>)
#include <lazyfuse/eigen.h>

#include "frontend/test_util.h"

namespace {

class EigenInterop : public lf::test::OnCpu {};

using lf::test::expect_close;
using lf::test::expect_error;

TEST_F(EigenInterop, MatricesBothOrdersWithoutCopying) {
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> r(2, 3);
  r << 1, 2, 3, 4, 5, 6;
  Eigen::MatrixXf c = r;  // column-major, same values
  lf::reset_stats();
  lf::Tensor tr = lf::from_eigen(r), tc = lf::from_eigen(c);
  EXPECT_EQ(lf::cache_stats().bytes_moved, 0u);
  EXPECT_EQ(tr.data_ptr<float>(), r.data());
  EXPECT_EQ(tc.data_ptr<float>(), c.data());
  EXPECT_EQ(tr.shape(), (lf::Shape{2, 3}));
  EXPECT_EQ(tc.strides(), (lf::Shape{1, 2}));
  expect_close(tr, {1, 2, 3, 4, 5, 6});
  expect_close(tc, {1, 2, 3, 4, 5, 6});
  expect_close(lf::matmul(tr, tc.transpose(0, 1)), {14, 32, 32, 77});
  // Arrays, vectors, blocks and maps with strides.
  Eigen::ArrayXd a = Eigen::ArrayXd::LinSpaced(5, 0, 4);
  expect_close(lf::exp(lf::from_eigen(a)) - 1, {0, std::exp(1.0) - 1, std::exp(2.0) - 1, std::exp(3.0) - 1, std::exp(4.0) - 1}, 1e-6);
  Eigen::MatrixXd big = Eigen::MatrixXd::NullaryExpr(4, 5, [](Eigen::Index i, Eigen::Index j) { return 10.0 * i + j; });
  lf::Tensor blk = lf::from_eigen(big.block(1, 2, 2, 3));  // rows 1-2, cols 2-4
  EXPECT_EQ(blk.strides(), (lf::Shape{1, 4}));
  expect_close(blk, {12, 13, 14, 22, 23, 24});
  Eigen::Map<Eigen::VectorXd, 0, Eigen::InnerStride<2>> every_other(big.data(), 10);
  expect_close(lf::from_eigen(every_other).slice(0, 0, 3), {0, 20, 1});
  Eigen::VectorXi iv(3);
  iv << 1, 2, 3;
  EXPECT_EQ((lf::from_eigen(iv) * 3).to_vector<int32_t>(), (std::vector<int32_t>{3, 6, 9}));
}

TEST_F(EigenInterop, Tensors) {
  Eigen::Tensor<float, 3> col(2, 3, 4);  // column-major
  Eigen::Tensor<float, 3, Eigen::RowMajor> row(2, 3, 4);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) col(i, j, k) = row(i, j, k) = float(100 * i + 10 * j + k);
  lf::Tensor tc = lf::from_eigen(col), tr = lf::from_eigen(row);
  EXPECT_EQ(tc.shape(), (lf::Shape{2, 3, 4}));
  EXPECT_EQ(tc.strides(), (lf::Shape{1, 2, 6}));
  EXPECT_EQ(tr.strides(), (lf::Shape{12, 4, 1}));
  EXPECT_EQ(lf::abs(tc - tr).max().item<float>(), 0.0f);
  EXPECT_EQ(tc.sum().item<float>(), tr.sum().item<float>());
  Eigen::TensorMap<Eigen::Tensor<float, 2, Eigen::RowMajor>> m(row.data(), 6, 4);
  expect_close(lf::from_eigen(m).sum({1}), {6, 46, 86, 406, 446, 486});
  // Out as a TensorMap.
  lf::Tensor sq = tr * tr;
  auto view = lf::as_eigen_tensor<float, 3>(sq);
  EXPECT_EQ(view(1, 2, 3), 123.0f * 123.0f);
  expect_error([&] { lf::as_eigen_tensor<float, 3>(tr.permute({2, 1, 0})); }, {"strided view"});
  expect_error([&] { lf::as_eigen_tensor<float, 2>(tr); }, {"rank 3, not 2"});
}

TEST_F(EigenInterop, MapOutKeepsStrides) {
  lf::Tensor x = lf::arange(0, 6, 1, lf::DType::Float32).reshape({2, 3}) * 2;
  lf::EigenView<float> m = lf::as_eigen<float>(x);  // a sync point
  EXPECT_EQ(m.rows(), 2);
  EXPECT_EQ(m.cols(), 3);
  EXPECT_EQ(m(1, 2), 10.0f);
  EXPECT_EQ(m.data(), x.data_ptr<float>());
  lf::EigenView<float> t = lf::as_eigen<float>(x.transpose(0, 1));  // a view: same memory
  EXPECT_EQ(t.data(), m.data());
  EXPECT_EQ(t(2, 1), 10.0f);
  Eigen::MatrixXf copy = t;  // Eigen code takes it from here
  EXPECT_EQ(copy(0, 1), 6.0f);
  EXPECT_EQ(lf::as_eigen<float>(x.sum()).size(), 1);
  expect_error([&] { lf::as_eigen<double>(x); }, {"float32, not float64"});
  expect_error([&] { lf::as_eigen<float>(x.reshape({1, 2, 3})); }, {"rank 0, 1 or 2"});
}

TEST_F(EigenInterop, AdoptedMatrixLivesWithTheTensor) {
  Eigen::MatrixXd m = Eigen::MatrixXd::Constant(3, 2, 1.5);
  const double* where = m.data();
  lf::Tensor t = lf::adopt_eigen(std::move(m));
  EXPECT_EQ(t.data_ptr<double>(), where);  // moved, not copied
  lf::Tensor y = t.transpose(0, 1) * 2;
  t = lf::Tensor();
  expect_close(y, {3, 3, 3, 3, 3, 3});  // ASan checks the memory was still alive
}

}  // namespace
#endif  // __has_include(<Eigen/Core>)
