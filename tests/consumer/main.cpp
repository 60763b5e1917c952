// The consumer test: computes a few values with the installed LazyFuse and checks them.
// Exits non-zero (and says why) if any value is wrong.
#include <cmath>
#include <cstdio>
#include <vector>

#include <lazyfuse/lazyfuse.h>
#ifdef LF_CONSUMER_INTEROP
#include <lazyfuse/dlpack.h>
#include <lazyfuse/eigen.h>
#endif

namespace {

int g_failures = 0;

void expect_near(const char* what, double got, double want, double tol) {
  bool ok = std::fabs(got - want) <= tol;
  std::printf("%-36s %.6f (want %.6f) %s\n", what, got, want, ok ? "ok" : "WRONG");
  if (!ok) ++g_failures;
}

}  // namespace

int main() try {
  // sum(0..99) = 4950, computed lazily and read back.
  lf::Tensor x = lf::arange(0, 100);
  expect_near("sum(arange(0, 100))", x.sum().item<float>(), 4950, 1e-3);

  // An elementwise chain with broadcasting: [2, 3] * [3] + 1.
  lf::Tensor m = lf::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  lf::Tensor v = lf::from_vector(std::vector<float>{1, 10, 100}, {3});
  std::vector<float> r = (m * v + 1).to_vector<float>();
  expect_near("([2,3] * [3] + 1)[1][2]", r[5], 601, 0);

  // The caller's memory in (no copy) and a pointer out.
  std::vector<double> mine{1, 2, 3, 4};
  lf::Tensor wrapped = lf::from_blob(mine.data(), {2, 2}, lf::DType::Float64);
  expect_near("from_blob data_ptr is the caller's", wrapped.data_ptr<double>() == mine.data(), 1, 0);
  expect_near("from_blob(...).transpose sum of row 0", wrapped.transpose(0, 1).sum({1}).to_vector<double>()[0], 4, 0);

  // Softmax rows sum to 1.
  expect_near("softmax row sum", lf::softmax(m, -1).sum({-1}).to_vector<float>()[1], 1, 1e-6);

  // Promotion: an int32 tensor plus 2.5 is float32.
  lf::Tensor i = lf::from_vector(std::vector<int32_t>{1, 2}, {2}) + 2.5;
  expect_near("int32 + 2.5 is float32", i.dtype() == lf::DType::Float32, 1, 0);

  // Value semantics: += rebinds one handle, never the other.
  lf::Tensor a = lf::ones({2});
  lf::Tensor b = a;
  a += 1;
  expect_near("b after a += 1", b.sum().item<float>(), 2, 0);
  expect_near("a after a += 1", a.sum().item<float>(), 4, 0);

#ifdef LF_CONSUMER_INTEROP
  // The optional headers, through LazyFuse::eigen and LazyFuse::dlpack.
  Eigen::MatrixXf e(2, 2);
  e << 1, 2, 3, 4;
  expect_near("from_eigen(e).sum()", lf::from_eigen(e).sum().item<float>(), 10, 0);
  DLManagedTensor* out = lf::to_dlpack(m * 2);
  expect_near("from_dlpack(to_dlpack(m * 2)).sum()", lf::from_dlpack(out).sum().item<float>(), 42, 0);
#endif

  if (g_failures != 0) {
    std::printf("consumer: %d check(s) FAILED\n", g_failures);
    return 1;
  }
  std::printf("consumer: all checks passed\n");
  return 0;
} catch (const lf::Error& e) {
  std::fprintf(stderr, "consumer: lf::Error: %s\n", e.what());
  return 1;
}
