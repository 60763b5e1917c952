// lf::from_dlpack / lf::to_dlpack (include/lazyfuse/dlpack.h) against a DLPack producer and
// consumer of our own: round trips without copies, the deleter called exactly once, strides, every
// dtype, and the errors. Compiled only where <dlpack/dlpack.h> is installed (libdlpack-dev).
#if __has_include(<dlpack/dlpack.h>)
#include <lazyfuse/dlpack.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "frontend/test_util.h"

namespace {

class DLPackImport : public lf::test::OnCpu {};
class DLPackExport : public lf::test::OnCpu {};
class DLPackVersioned : public lf::test::OnCpu {};

using lf::test::expect_close;
using lf::test::expect_error;

// A producer's tensor: owns its buffer, shape and strides; counts deleter calls.
struct Produced {
  DLManagedTensor managed{};
  std::vector<char> buffer;
  std::vector<int64_t> shape, strides;
  int* deletes;
};

DLManagedTensor* produce(DLDataType dtype, std::vector<int64_t> shape, std::vector<int64_t> strides, size_t bytes,
                         int* deletes, uint64_t byte_offset = 0) {
  auto* p = new Produced;
  p->buffer.resize(bytes + byte_offset + 64);
  p->shape = std::move(shape);
  p->strides = std::move(strides);
  p->deletes = deletes;
  DLTensor& t = p->managed.dl_tensor;
  // 64-byte aligned start inside the vector
  char* base = p->buffer.data();
  base += (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;
  t.data = base;
  t.byte_offset = byte_offset;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int>(p->shape.size());
  t.dtype = dtype;
  t.shape = p->shape.data();
  t.strides = p->strides.empty() ? nullptr : p->strides.data();
  p->managed.manager_ctx = p;
  p->managed.deleter = [](DLManagedTensor* self) {
    auto* q = static_cast<Produced*>(self->manager_ctx);
    ++*q->deletes;
    delete q;
  };
  return &p->managed;
}

template <typename T>
T* elements(DLManagedTensor* m) {
  return reinterpret_cast<T*>(static_cast<char*>(m->dl_tensor.data) + m->dl_tensor.byte_offset);
}

TEST_F(DLPackImport, ContiguousAndStrided) {
  int deletes = 0;
  DLManagedTensor* m = produce({kDLFloat, 32, 1}, {2, 3}, {}, 24, &deletes);
  float* f = elements<float>(m);
  for (int i = 0; i < 6; ++i) f[i] = float(i);
  lf::reset_stats();
  {
    lf::Tensor t = lf::from_dlpack(m);
    EXPECT_EQ(t.data_ptr<float>(), f);  // no copy
    EXPECT_EQ(lf::cache_stats().bytes_moved, 0u);
    expect_close(t * 2 + 1, {1, 3, 5, 7, 9, 11});
    EXPECT_EQ(deletes, 0);
  }
  EXPECT_EQ(deletes, 1);

  // A transposed [3, 2] view with a byte offset.
  m = produce({kDLFloat, 64, 1}, {3, 2}, {1, 3}, 48, &deletes, 16);
  double* d = elements<double>(m);
  for (int i = 0; i < 6; ++i) d[i] = i;
  lf::Tensor t = lf::from_dlpack(m);
  EXPECT_EQ(t.strides(), (lf::Shape{1, 3}));
  expect_close(t, {0, 3, 1, 4, 2, 5});
  expect_close(t.sum({0}), {3, 12});
  t = lf::Tensor();
  EXPECT_EQ(deletes, 2);
}

TEST_F(DLPackImport, EveryDtype) {
  int deletes = 0;
  struct Case {
    DLDataType type;
    lf::DType want;
  };
  for (Case c : {Case{{lf::dlpack_detail::kBoolCode, 8, 1}, lf::DType::Bool}, Case{{kDLInt, 32, 1}, lf::DType::Int32},
                 Case{{kDLInt, 64, 1}, lf::DType::Int64}, Case{{kDLFloat, 16, 1}, lf::DType::Float16},
                 Case{{kDLBfloat, 16, 1}, lf::DType::BFloat16}, Case{{kDLFloat, 32, 1}, lf::DType::Float32},
                 Case{{kDLFloat, 64, 1}, lf::DType::Float64}}) {
    DLManagedTensor* m = produce(c.type, {4}, {}, 4 * lf::dtype_size(c.want), &deletes);
    std::memset(elements<char>(m), 0, 4 * lf::dtype_size(c.want));
    lf::Tensor t = lf::from_dlpack(m);
    EXPECT_EQ(t.dtype(), c.want);
    EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{0, 0, 0, 0}));
    // And back out with the same type code.
    DLManagedTensor* out = lf::to_dlpack(t);
    EXPECT_EQ(out->dl_tensor.dtype.code, c.type.code);
    EXPECT_EQ(out->dl_tensor.dtype.bits, c.type.bits);
    EXPECT_EQ(out->dl_tensor.dtype.lanes, 1);
    out->deleter(out);
  }
  EXPECT_EQ(deletes, 7);
}

TEST_F(DLPackImport, Errors) {
  int deletes = 0;
  expect_error([] { lf::from_dlpack(static_cast<DLManagedTensor*>(nullptr)); }, {"from_dlpack", "null"});
  DLManagedTensor* m = produce({kDLFloat, 32, 4}, {2}, {}, 32, &deletes);
  expect_error([&] { lf::from_dlpack(m); }, {"from_dlpack", "lanes must be 1"});
  m->dl_tensor.dtype = {kDLUInt, 8, 1};
  expect_error([&] { lf::from_dlpack(m); }, {"code 1, 8 bits", "no LazyFuse dtype"});
  m->dl_tensor.dtype = {kDLComplex, 32, 1};  // complex32: complex64 and complex128 are read
  expect_error([&] { lf::from_dlpack(m); }, {"no LazyFuse dtype"});
  m->dl_tensor.dtype = {kDLFloat, 32, 1};
  m->dl_tensor.device = DLDevice{kDLOpenCL, 0};
  expect_error([&] { lf::from_dlpack(m); }, {"device type 4 is not supported"});
  m->dl_tensor.device = DLDevice{kDLCUDA, 0};
  if (!lf::cuda_available()) expect_error([&] { lf::from_dlpack(m); }, {"CUDA is unavailable"});
  m->dl_tensor.device = DLDevice{kDLCPU, 0};
  m->dl_tensor.byte_offset = 2;
  expect_error([&] { lf::from_dlpack(m); }, {"not aligned to 4 bytes"});
  m->dl_tensor.byte_offset = 0;
  int64_t negative[1] = {-1};
  m->dl_tensor.strides = negative;
  expect_error([&] { lf::from_dlpack(m); }, {"negative strides are not supported"});
  m->dl_tensor.strides = nullptr;
  // Issue 50 item 8: a device type that names no enumerator is read as a number (UBSan-clean).
  const int32_t bogus = 999;
  std::memcpy(&m->dl_tensor.device.device_type, &bogus, sizeof bogus);
  expect_error([&] { lf::from_dlpack(m); }, {"device type 999 is not supported"});
  m->dl_tensor.device = DLDevice{kDLCPU, 0};
  // No memory behind a non-empty shape: null data, with an offset or without.
  void* data = m->dl_tensor.data;
  m->dl_tensor.data = nullptr;
  m->dl_tensor.byte_offset = 16;
  expect_error([&] { lf::from_dlpack(m); }, {"from_dlpack", "null data pointer", "byte_offset 16"});
  m->dl_tensor.byte_offset = 0;
  expect_error([&] { lf::from_dlpack(m); }, {"from_dlpack", "null data pointer"});
  // Compact strides of a shape whose product passes int64 ({2^62, 8}): checked, an error.
  int64_t huge[2] = {int64_t{1} << 62, 8};
  m->dl_tensor.data = data;
  m->dl_tensor.shape = huge;
  m->dl_tensor.ndim = 2;
  expect_error([&] { lf::from_dlpack(m); }, {"from_dlpack", "[4611686018427387904, 8]", "int64"});
  int64_t huge3[3] = {2, int64_t{1} << 62, 8};
  m->dl_tensor.shape = huge3;
  m->dl_tensor.ndim = 3;
  expect_error([&] { lf::from_dlpack(m); }, {"from_dlpack", "int64"});
  int64_t two[1] = {2};
  m->dl_tensor.shape = two;
  m->dl_tensor.ndim = 1;
  EXPECT_EQ(deletes, 0) << "a failed import takes nothing";
  m->deleter(m);
  EXPECT_EQ(deletes, 1);
}

TEST_F(DLPackExport, StridesLifetimeAndRoundTrip) {
  lf::Tensor x = lf::arange(0, 6, 1, lf::DType::Float32).reshape({2, 3});
  lf::Tensor z = x * 10;
  lf::sync();
  lf::Tensor y = z.transpose(0, 1);  // pending view of computed data: to_dlpack makes it a view
  DLManagedTensor* out = lf::to_dlpack(y);
  const DLTensor& t = out->dl_tensor;
  EXPECT_EQ(t.device.device_type, kDLCPU);
  EXPECT_EQ(t.ndim, 2);
  EXPECT_EQ(std::vector<int64_t>(t.shape, t.shape + 2), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(std::vector<int64_t>(t.strides, t.strides + 2), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(t.dtype.code, kDLFloat);
  const float* p = static_cast<const float*>(t.data);
  // Element [i][j] of y at i * 1 + j * 3.
  EXPECT_EQ(p[2 * 1 + 1 * 3], 50.0f);
  // The export keeps the value alive after every handle is gone.
  y = lf::Tensor();
  z = lf::Tensor();
  x = lf::Tensor();
  EXPECT_EQ(p[1 * 1 + 0 * 3], 10.0f);
  // Round trip: importing our own export is the same memory, no copy.
  lf::reset_stats();
  lf::Tensor back = lf::from_dlpack(out);
  EXPECT_EQ(back.data_ptr(), t.data);
  EXPECT_EQ(lf::cache_stats().bytes_moved, 0u);
  expect_close(back, {0, 30, 10, 40, 20, 50});
  back = lf::Tensor();  // calls the export's deleter, which frees the context (ASan checks)
}

// A CUDA tensor out and back in: the device and the strides as they are, no copy, the values a
// fused computation on the import gives (skipped without a GPU).
TEST(DLPackCuda, ExportImportAndComputeOnTheDevice) {
  if (!lf::cuda_available()) GTEST_SKIP() << "no GPU here";
  lf::Tensor x = lf::arange(0.0, 6).to(lf::Device::cuda(0)).reshape({2, 3}) * 10;
  lf::sync();
  DLManagedTensor* out = lf::to_dlpack(x.transpose(0, 1));
  const DLTensor& t = out->dl_tensor;
  EXPECT_EQ(t.device.device_type, kDLCUDA);
  EXPECT_EQ(t.device.device_id, 0);
  EXPECT_EQ(std::vector<int64_t>(t.strides, t.strides + 2), (std::vector<int64_t>{1, 3}));
  lf::reset_stats();
  lf::Tensor back = lf::from_dlpack(out);
  EXPECT_EQ(back.device(), lf::Device::cuda(0));
  EXPECT_EQ(back.data_ptr(), t.data);
  EXPECT_EQ(lf::cache_stats().bytes_moved, 0u);
  expect_close(back * 2 + 1, {1, 61, 21, 81, 41, 101});
}

#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
TEST_F(DLPackVersioned, RoundTrip) {
  lf::Tensor x = lf::arange(0, 4, 1, lf::DType::Int64);
  DLManagedTensorVersioned* v = lf::to_dlpack_versioned(x);
  EXPECT_EQ(v->version.major, DLPACK_MAJOR_VERSION);
  EXPECT_TRUE(v->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
  lf::Tensor back = lf::from_dlpack(v);
  EXPECT_EQ(back.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3}));
  DLManagedTensorVersioned* w = lf::to_dlpack_versioned(x);
  w->version.major = 99;
  expect_error([&] { lf::from_dlpack(w); }, {"major version 99"});  // and w was deleted, per the spec
}
#endif

}  // namespace
#endif  // __has_include(<dlpack/dlpack.h>)
