// from_blob (borrowed and adopted memory), data_ptr / strides / is_contiguous, and the stream API's
// error paths on a machine without a GPU.
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

#include "frontend/test_util.h"

namespace {

class DataPtr : public lf::test::OnCpu {};
class FromBlob : public lf::test::OnCpu {};

using lf::test::expect_close;
using lf::test::expect_error;

std::vector<double> iota(size_t n, double start = 0) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// Resident memory of this process, from /proc/self/statm.
size_t resident_bytes() {
  std::ifstream f("/proc/self/statm");
  size_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * 4096;
}

TEST_F(FromBlob, ContiguousFusedComputation) {
  std::vector<float> x(12);
  std::iota(x.begin(), x.end(), 0.0f);
  lf::Tensor t = lf::from_blob(x.data(), {3, 4}, lf::DType::Float32);
  EXPECT_TRUE(t.is_materialized());
  EXPECT_EQ(t.device(), lf::Device::cpu());
  EXPECT_EQ(t.data_ptr<float>(), x.data());  // the caller's memory itself
  lf::Tensor y = lf::relu(t * 2 - 5) + lf::sigmoid(t);
  std::vector<double> want;
  for (float v : x) want.push_back(std::max(0.0, 2.0 * v - 5) + 1 / (1 + std::exp(-double(v))));
  expect_close(y, want, 1e-5);
  expect_close(t.sum(), {66});
  expect_close(lf::softmax(t, -1).sum({1}), {1, 1, 1}, 1e-5);
}

TEST_F(FromBlob, StridesAndOffsets) {
  std::vector<double> buf = iota(40);
  // A [4, 3] view of every other column of a [4, 10] row-major array, starting at column 1.
  lf::Tensor t = lf::from_blob(buf.data() + 1, {4, 3}, {10, 2}, lf::DType::Float64);
  EXPECT_EQ(t.strides(), (lf::Shape{10, 2}));
  EXPECT_FALSE(t.is_contiguous());
  expect_close(t, {1, 3, 5, 11, 13, 15, 21, 23, 25, 31, 33, 35});
  expect_close(t * 10 + 1, {11, 31, 51, 111, 131, 151, 211, 231, 251, 311, 331, 351});
  // Column-major (Fortran) order: [3, 4] with strides [1, 3].
  lf::Tensor f = lf::from_blob(buf.data(), {3, 4}, {1, 3}, lf::DType::Float64);
  expect_close(f, {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11});
  expect_close(f.transpose(0, 1).contiguous(), iota(12));
  expect_close(f.sum({1}), {18, 22, 26});
  // Broadcast (stride 0) and views of a borrowed tensor.
  lf::Tensor row = lf::from_blob(buf.data(), {3, 4}, {0, 1}, lf::DType::Float64);
  expect_close(row, {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3});
  expect_close(t.slice(0, 1, 4, 2).transpose(0, 1), {11, 31, 13, 33, 15, 35});
  // Size-1 dims may carry any stride, a negative one too: they read as contiguous.
  lf::Tensor one = lf::from_blob(buf.data(), {1, 5}, {-7, 1}, lf::DType::Float64);
  EXPECT_TRUE(one.is_contiguous());
  expect_close(one, {0, 1, 2, 3, 4});
  // Matmul straight from borrowed strided operands.
  expect_close(lf::matmul(f, lf::from_blob(buf.data(), {4, 1}, {1, 1}, lf::DType::Float64)),
               {0 * 0 + 3 * 1 + 6 * 2 + 9 * 3, 1 * 0 + 4 * 1 + 7 * 2 + 10 * 3, 2 * 0 + 5 * 1 + 8 * 2 + 11 * 3});
}

TEST_F(FromBlob, EveryDtype) {
  {
    bool b[4] = {true, false, true, true};
    lf::Tensor t = lf::from_blob(b, {4}, lf::DType::Bool);
    EXPECT_EQ(t.to_vector<bool>(), (std::vector<bool>{true, false, true, true}));
    EXPECT_EQ((!t).to_vector<bool>(), (std::vector<bool>{false, true, false, false}));
  }
  {
    int32_t v[3] = {1, -2, 3};
    EXPECT_EQ((lf::from_blob(v, {3}, lf::DType::Int32) * 2).to_vector<int32_t>(), (std::vector<int32_t>{2, -4, 6}));
  }
  {
    int64_t v[3] = {int64_t{1} << 40, -2, 3};
    EXPECT_EQ(lf::from_blob(v, {3}, lf::DType::Int64).sum().item<int64_t>(), (int64_t{1} << 40) + 1);
  }
  {
    uint16_t h[2] = {0x3C00, 0xC000};  // float16 1.0, -2.0
    expect_close(lf::from_blob(h, {2}, lf::DType::Float16).to(lf::DType::Float32) + 1, {2, -1});
    uint16_t bf[2] = {0x3F80, 0x4040};  // bfloat16 1.0, 3.0
    expect_close(lf::from_blob(bf, {2}, lf::DType::BFloat16) * 2, {2, 6});
  }
}

TEST_F(FromBlob, Errors) {
  alignas(8) float x[8] = {};
  char* raw = reinterpret_cast<char*>(x);
  expect_error([&] { lf::from_blob(raw + 2, {2}, lf::DType::Float32); }, {"from_blob", "not aligned to 4 bytes"});
  expect_error([&] { lf::from_blob(raw + 4, {1}, lf::DType::Float64); }, {"not aligned to 8 bytes", "float64"});
  expect_error([&] { lf::from_blob(nullptr, {2, 3}, lf::DType::Float32); }, {"null", "6 elements"});
  expect_error([&] { lf::from_blob(x, {2, -3}, lf::DType::Float32); }, {"negative size"});
  expect_error([&] { lf::from_blob(x, {2, 2}, {-2, 1}, lf::DType::Float32); }, {"negative strides are not supported"});
  expect_error([&] { lf::from_blob(x, {2, 2}, {1}, lf::DType::Float32); }, {"do not match the rank"});
  expect_error([&] { lf::from_blob(x, {int64_t{1} << 40, int64_t{1} << 40}, lf::DType::Float32); }, {"from_blob", "more elements than fit int64"});
  // Strides that reach past any address a machine maps (issue 50: both read far out of bounds).
  expect_error([&] { lf::from_blob(x, {2}, {INT64_MAX}, lf::DType::Bool); }, {"from_blob", "past the end of the address space"});
  expect_error([&] { lf::from_blob(x, {2}, {int64_t{1} << 61}, lf::DType::Float32); }, {"from_blob", "past the end of the address space"});
  expect_error([&] { lf::from_blob(x, {2}, {int64_t{1} << 56}, lf::DType::Float32); }, {"past the end of the address space"});
  if (!lf::cuda_available()) {
    expect_error([&] { lf::from_blob(x, {2}, {1}, lf::DType::Float32, lf::Device::cuda(0)); },
                 {"from_blob", "CUDA is unavailable"});
  }
  // A failed call takes nothing: the deleter is not called.
  int calls = 0;
  expect_error([&] { lf::from_blob(raw + 1, {2}, {1}, lf::DType::Float32, lf::Device::cpu(), [&](void*) { ++calls; }); },
               {"not aligned"});
  EXPECT_EQ(calls, 0);
  // Empty tensors need no memory.
  lf::Tensor e = lf::from_blob(nullptr, {0, 3}, lf::DType::Float32);
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.to_vector<float>().empty());
  expect_close(e.sum(), {0});
}

TEST_F(FromBlob, DeleterRunsOnceAfterTheLastUse) {
  std::atomic<int> calls{0};
  void* freed = nullptr;
  auto* data = new float[6]{1, 2, 3, 4, 5, 6};
  lf::Tensor y;
  {
    lf::Tensor t = lf::from_blob(data, {2, 3}, {3, 1}, lf::DType::Float32, lf::Device::cpu(), [&](void* p) {
      ++calls;
      freed = p;
      delete[] static_cast<float*>(p);
    });
    lf::Tensor view = t.transpose(0, 1);  // a pending view keeps the storage too
    y = view * 2;                         // pending: still needs the memory
    EXPECT_EQ(calls, 0);
  }
  EXPECT_EQ(calls, 0) << "a pending value still reads the memory";
  expect_close(y, {2, 8, 4, 10, 6, 12});  // computed now; the result is LazyFuse's own memory
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(freed, data);
  expect_close(y, {2, 8, 4, 10, 6, 12});  // the result does not need it
  EXPECT_EQ(calls, 1);
}

TEST_F(FromBlob, OwnerKeptAliveByViews) {
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4});
  std::weak_ptr<std::vector<float>> watch = owner;
  lf::Tensor v = lf::from_blob(owner->data(), {2, 2}, {2, 1}, lf::DType::Float32, lf::Device::cpu(), owner)
                     .transpose(0, 1);
  owner.reset();
  EXPECT_FALSE(watch.expired());
  lf::sync();
  EXPECT_TRUE(v.is_materialized());
  EXPECT_FALSE(watch.expired()) << "the materialized view still uses the memory";
  expect_close(v, {1, 3, 2, 4});
  v = lf::Tensor();
  EXPECT_TRUE(watch.expired());
}

TEST_F(FromBlob, BorrowedMemoryFreedAfterLastUseIsSafe) {
  // The caller frees its buffer once the results are computed and no handle to the wrap is left.
  auto buf = std::make_unique<float[]>(1 << 16);
  for (int i = 0; i < (1 << 16); ++i) buf[i] = float(i % 7);
  lf::Tensor s;
  {
    lf::Tensor t = lf::from_blob(buf.get(), {1 << 16}, lf::DType::Float32);
    s = lf::sum(t * t);
    lf::sync();
  }
  buf.reset();  // ASan would catch a later read
  double want = 0;
  for (int i = 0; i < (1 << 16); ++i) want += double(i % 7) * (i % 7);
  expect_close(s, {want});
}

TEST_F(FromBlob, CallerWritesAreSeenByLaterComputations) {
  std::vector<int32_t> v{1, 2, 3};
  lf::Tensor t = lf::from_blob(v.data(), {3}, lf::DType::Int32);
  lf::Tensor a = t + 1;
  EXPECT_EQ(a.to_vector<int32_t>(), (std::vector<int32_t>{2, 3, 4}));
  v[0] = 100;
  EXPECT_EQ(a.to_vector<int32_t>(), (std::vector<int32_t>{2, 3, 4})) << "a computed result keeps its value";
  EXPECT_EQ((t + 1).to_vector<int32_t>(), (std::vector<int32_t>{101, 3, 4}));
}

// Two wraps of one address share one storage, so that a replayed flush plan (which binds buffers by
// storage) cannot mistake one input for another from iteration to iteration.
TEST_F(FromBlob, SameAddressTwiceThenDifferentBuffers) {
  // a and b agree modulo 64 bytes, so that the flush signatures (which include an address's
  // alignment) are equal.
  alignas(64) float buf[32] = {1, 2, 3, 4};
  float* a = buf;
  float* b = buf + 16;
  for (int i = 0; i < 4; ++i) b[i] = 10 * a[i];
  for (int iter = 0; iter < 4; ++iter) {
    lf::Tensor x = lf::from_blob(a, {4}, lf::DType::Float32);
    lf::Tensor y = lf::from_blob((iter < 2 ? a : b), {4}, lf::DType::Float32);
    lf::Tensor z = x * 2 + y;
    if (iter < 2) expect_close(z, {3, 6, 9, 12});
    else expect_close(z, {12, 24, 36, 48});
  }
  // A longer second wrap of the same address grows the shared storage.
  lf::Tensor shortw = lf::from_blob(b, {2}, lf::DType::Float32);
  lf::Tensor longw = lf::from_blob(b, {4}, lf::DType::Float32);
  expect_close(longw.to(lf::Device::cpu()) + shortw.sum(), {40, 50, 60, 70});
}

TEST_F(FromBlob, OneGiBWithoutCopying) {
  const size_t bytes = size_t{1} << 30;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  lf::reset_stats();
  const size_t before = resident_bytes();
  {
    lf::Tensor t = lf::from_blob(p, {int64_t(bytes / 4)}, lf::DType::Float32);
    EXPECT_EQ(t.numel(), int64_t(bytes / 4));
    EXPECT_EQ(t.data_ptr(), p);
    EXPECT_TRUE(t.is_contiguous());
    lf::Tensor c = t.contiguous();  // already row-major: the same value, no copy
    EXPECT_EQ(c.data_ptr(), p);
    lf::Tensor r = t.reshape({1 << 14, -1});
    EXPECT_EQ(r.data_ptr(), p);  // a view
  }
  EXPECT_EQ(lf::cache_stats().bytes_moved, 0u);
  EXPECT_EQ(lf::cache_stats().kernels_launched, 0u);
  EXPECT_LT(resident_bytes(), before + (size_t{4} << 20)) << "the 1 GiB was touched";
  munmap(p, bytes);
}

TEST_F(DataPtr, ComputedValuesAndViews) {
  lf::Tensor x = lf::arange(0, 6, 1, lf::DType::Float32).reshape({2, 3});
  lf::Tensor y = x * 2;
  EXPECT_FALSE(y.is_materialized());
  const float* p = y.data_ptr<float>();  // a sync point
  EXPECT_TRUE(y.is_materialized());
  EXPECT_EQ(std::vector<float>(p, p + 6), (std::vector<float>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(y.strides(), (lf::Shape{3, 1}));
  lf::Tensor yt = y.transpose(0, 1);
  EXPECT_EQ(yt.strides(), (lf::Shape{1, 3}));  // a view over y's memory
  EXPECT_EQ(yt.data_ptr<float>(), p);
  EXPECT_FALSE(yt.is_contiguous());
  lf::Tensor c = yt.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.data_ptr<float>(), p);
  const float* q = c.data_ptr<float>();
  EXPECT_EQ(std::vector<float>(q, q + 6), (std::vector<float>{0, 6, 2, 8, 4, 10}));
  // A slice's pointer is its first element.
  lf::Tensor s = y.slice(1, 1, 3);
  EXPECT_EQ(s.data_ptr<float>(), p + 1);
  expect_error([&] { (void)y.data_ptr<double>(); }, {"data_ptr", "float64", "float32"});
  expect_error([&] { (void)lf::Tensor().data_ptr(); }, {"empty Tensor"});
  // float16 through the untyped pointer.
  lf::Tensor h = lf::ones({2}, lf::DType::Float16);
  const uint16_t* hp = static_cast<const uint16_t*>(h.data_ptr());
  EXPECT_EQ(hp[0], 0x3C00);
}

TEST(Streams, ErrorsWithoutAGpu) {
  if (lf::cuda_available()) GTEST_SKIP() << "a GPU is present: the stream API is for the GPU tests";
  expect_error([] { lf::set_stream(lf::Device::cpu(), nullptr); }, {"set_stream", "CUDA device"});
  expect_error([] { lf::set_stream(lf::Device::cuda(0), nullptr); }, {"set_stream", "CUDA is unavailable"});
  expect_error([] { (void)lf::current_stream(lf::Device::cuda(0)); }, {"CUDA is unavailable"});
  expect_error([] { lf::StreamGuard g(lf::Device::cuda(0), nullptr); }, {"CUDA is unavailable"});
  expect_error([] { lf::stream_wait_for_lazyfuse(lf::Device::cuda(0), nullptr); }, {"CUDA is unavailable"});
  expect_error([] { lf::lazyfuse_wait_for_stream(lf::Device::cpu(), nullptr); }, {"CUDA device"});
}

}  // namespace
