// Memory in and out without copies: tensors over the caller's memory (from_blob) and the pointer,
// strides and layout of a computed tensor (data_ptr, strides, is_contiguous).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <utility>

#include "codegen/ir/node.h"
#include "frontend/complex.h"
#include "frontend/record.h"
#include "frontend/trace.h"
#include "lazyfuse/interop.h"
#include "runtime/cuda_driver.h"
#include "runtime/storage.h"

namespace lf {
namespace {

using detail::fail;

int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

std::string describe_blob(const void* data, const Shape& shape, const Shape& strides, DType dtype, Device device) {
  char address[32];
  std::snprintf(address, sizeof address, "%p", data);
  return std::string(dtype_name(dtype)) + shape_str(shape) + " with strides " + shape_str(strides) + " at " + address +
         " on " + device.str();
}

void check_device(Device device, const std::function<std::string()>& what) {
  if (device.is_cpu()) return;
  if (!device.is_cuda()) fail("from_blob", "no backend for device " + device.str() + " (" + what() + ")");
  const rt::CudaStatus& st = rt::cuda_status();
  if (!st.available) fail("from_blob", "cannot wrap " + what() + ": CUDA is unavailable (" + st.reason + ")");
  if (device.index() < 0 || device.index() >= static_cast<int>(st.devices.size()))
    fail("from_blob", "cannot wrap " + what() + ": " + device.str() + " does not exist (" +
                          std::to_string(st.devices.size()) + " CUDA device(s))");
}

// Checks the arguments and normalizes `strides`; returns the bytes the view reaches.
size_t check_blob(const void* data, const Shape& shape, Shape& strides, DType dtype, Device device) {
  const Shape given = strides;
  auto what = [&] { return describe_blob(data, shape, given, dtype, device); };  // for messages only
  detail::check_shape("from_blob", shape, dtype);
  if (strides.size() != shape.size())
    fail("from_blob", "strides " + shape_str(strides) + " do not match the rank of shape " + shape_str(shape) +
                          " (" + what() + ")");
  check_device(device, what);
  int64_t n = 1;
  for (int64_t s : shape) n = saturating_mul(n, s);
  const size_t esize = dtype_size(dtype);
  if (data == nullptr && n > 0) fail("from_blob", "data is null but the shape has " + std::to_string(n) + " elements (" + what() + ")");
  if (n == 0) {  // nothing is read: any pointer and strides do
    strides = ir::contiguous_strides(shape);
    return 0;
  }
  if (reinterpret_cast<uintptr_t>(data) % esize != 0)
    fail("from_blob", "data is not aligned to " + std::to_string(esize) + " bytes, the size of " + dtype_name(dtype) +
                          " (" + what() + ")");
  // The last element's index, and overflow of it in elements and in bytes.
  int64_t last = 0;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 1) {
      strides[d] = 0;  // irrelevant; rewritten below so a row-major array reads as contiguous
      continue;
    }
    if (strides[d] < 0)
      fail("from_blob", "stride " + std::to_string(strides[d]) + " of dim " + std::to_string(d) +
                            " is negative; negative strides are not supported (wrap a copy in forward order) (" +
                            what() + ")");
    if (strides[d] > 0 && shape[d] - 1 > (kMax - last) / strides[d])
      fail("from_blob", "the memory the strides reach overflows 64 bits (" + what() + ")");
    last += (shape[d] - 1) * strides[d];
  }
  if (static_cast<uint64_t>(last) + 1 > std::numeric_limits<size_t>::max() / esize)
    fail("from_blob", "the memory the strides reach overflows 64 bits (" + what() + ")");
  // No machine maps memory past 2^57 (x86-64's five-level paging, AArch64's 52-bit addresses, a
  // GPU's unified addresses): strides reaching there cannot describe memory the caller holds.
  const uint64_t start = reinterpret_cast<uintptr_t>(data), reach = (static_cast<uint64_t>(last) + 1) * esize;
  constexpr uint64_t kAddressSpace = uint64_t{1} << 57;
  if (start >= kAddressSpace || reach > kAddressSpace - start)
    fail("from_blob", "the memory the strides reach, " + std::to_string(reach) +
                          " bytes, runs past the end of the address space (" + what() + ")");
  // Size-1 dims take the stride a row-major layout would give them.
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] <= 1) strides[d] = expected;
    expected = saturating_mul(expected, std::max<int64_t>(shape[d], 1));
  }
  return (static_cast<size_t>(last) + 1) * esize;
}

// keep_alive is made only once the arguments are good: when from_blob throws, the memory (and any
// deleter or owner) stays the caller's.
template <typename MakeKeepAlive>
Tensor wrap(void* data, Shape shape, Shape strides, DType dtype, Device device, MakeKeepAlive make_keep_alive) {
  const size_t nbytes = check_blob(data, shape, strides, dtype, device);
  std::shared_ptr<void> keep_alive = make_keep_alive();
  std::shared_ptr<rt::Storage> storage;
  if (nbytes == 0 && device.is_cpu()) {
    // Nothing is read; a storage of our own keeps a null pointer out of the executor.
    storage = rt::Storage::allocate(device, 0);
  } else {
    storage = rt::Storage::borrow(device, data, nbytes, std::move(keep_alive));
  }
  if (is_complex(dtype)) {  // the (re, im) pairs: a real buffer with a last dim of 2
    shape.push_back(2);
    for (int64_t& st : strides) st *= 2;  // within int64: check_blob bounded the bytes reached
    strides.push_back(1);
    Tensor r(ir::make_buffer(std::move(storage), complex_part(dtype), std::move(shape), ir::Layout{std::move(strides), 0}));
    return detail::wrap_complex(r, dtype);
  }
  return Tensor(ir::make_buffer(std::move(storage), dtype, std::move(shape), ir::Layout{std::move(strides), 0}));
}

std::shared_ptr<void> nothing() { return nullptr; }

}  // namespace

Tensor from_blob(void* data, Shape shape, DType dtype, Device device) {
  Shape strides = shape;
  int64_t expected = 1;  // row-major; sizes are checked in check_blob
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = expected;
    expected = saturating_mul(expected, std::max<int64_t>(shape[d], 1));
  }
  return wrap(data, std::move(shape), std::move(strides), dtype, device, nothing);
}

Tensor from_blob(void* data, Shape shape, Shape strides, DType dtype, Device device) {
  return wrap(data, std::move(shape), std::move(strides), dtype, device, nothing);
}

Tensor from_blob(void* data, Shape shape, Shape strides, DType dtype, Device device,
                 std::function<void(void*)> deleter) {
  // shared_ptr calls the deleter once, when the storage dies (or, if its own bookkeeping cannot be
  // allocated, at once before throwing).
  return wrap(data, std::move(shape), std::move(strides), dtype, device, [&]() -> std::shared_ptr<void> {
    if (!deleter) return nullptr;
    return std::shared_ptr<void>(data, std::move(deleter));
  });
}

Tensor from_blob(void* data, Shape shape, Shape strides, DType dtype, Device device, std::shared_ptr<const void> owner) {
  return wrap(data, std::move(shape), std::move(strides), dtype, device,
              [&] { return std::const_pointer_cast<void>(std::move(owner)); });
}

namespace {

// The node of `t`, computed (and on a GPU, its device's queued work finished): what every pointer
// read hands out.
const ir::Node& computed(const Tensor& t, const char* op) {
  if (is_complex(t.dtype())) {
    // Its pairs' node, whose layout must be one of whole complex elements: the pairs adjacent,
    // every other stride and the offset even (a slice of view_as_real(z) along the pair dim is not).
    const ir::NodePtr& r = t.node()->inputs[0];
    if (!r->realized()) detail::realize({r.get()});
    if (!r->realized()) fail(op, "internal error: the value was not materialized", {&t});
    const ir::Layout& l = r->layout;
    bool whole = l.strides.back() == 1 && l.offset % 2 == 0;
    for (size_t d = 0; d + 1 < l.strides.size(); ++d) whole &= r->shape[d] == 1 || l.strides[d] % 2 == 0;
    if (!whole) fail(op, "the values' layout does not hold whole complex elements; call .contiguous() first", {&t});
    if (r->device.is_cuda()) rt::synchronize(r->device);
    return *r;
  }
  const ir::NodePtr& node = t.node();
  if (!node->realized()) detail::realize({node.get()});
  if (!node->realized()) fail(op, "internal error: the value was not materialized", {&t});
  if (node->device.is_cuda()) rt::synchronize(node->device);
  return *node;
}

}  // namespace

const void* Tensor::data_ptr() const {
  const ir::Node& n = computed(*this, "data_ptr");
  n.storage->forget_value_range();  // the memory is handed out: a consumer could write there
  return static_cast<const char*>(n.storage->data()) + n.layout.offset * static_cast<int64_t>(dtype_size(n.dtype));
}

template <typename T>
const T* Tensor::data_ptr() const {
  constexpr DType want = std::is_same_v<T, bool>      ? DType::Bool
                         : std::is_same_v<T, int32_t> ? DType::Int32
                         : std::is_same_v<T, int64_t> ? DType::Int64
                         : std::is_same_v<T, float>   ? DType::Float32
                                                      : DType::Float64;
  if (dtype() != want)
    fail("data_ptr", std::string("asked for ") + dtype_name(want) + " elements of a " + dtype_name(dtype()) +
                         " tensor (cast with .to(dtype), or use the untyped data_ptr())",
         {this});
  return static_cast<const T*>(data_ptr());
}
template const bool* Tensor::data_ptr<bool>() const;
template const int32_t* Tensor::data_ptr<int32_t>() const;
template const int64_t* Tensor::data_ptr<int64_t>() const;
template const float* Tensor::data_ptr<float>() const;
template const double* Tensor::data_ptr<double>() const;

Shape Tensor::strides() const {
  Shape s = computed(*this, "strides").layout.strides;
  if (is_complex(dtype())) {  // in complex elements
    s.pop_back();
    for (int64_t& v : s) v /= 2;
  }
  return s;
}

bool Tensor::is_contiguous() const {
  const ir::Node& n = computed(*this, "is_contiguous");
  return ir::is_contiguous(n.shape, n.layout);  // a complex tensor's pairs: contiguous exactly when it is
}

// ---- CUDA streams (runtime/cuda_driver.h). Untested on a GPU.
namespace {

rt::cu::CUstream as_stream(void* s) { return static_cast<rt::cu::CUstream>(s); }

// The device index of `device`, checked: a CUDA device that exists on a machine with CUDA.
int cuda_index(const char* op, Device device) {
  if (!device.is_cuda()) fail(op, "needs a CUDA device, not " + device.str());
  const rt::CudaStatus& st = rt::cuda_status();
  if (!st.available) fail(op, "CUDA is unavailable (" + st.reason + ")");
  if (device.index() < 0 || device.index() >= static_cast<int>(st.devices.size()))
    fail(op, device.str() + " does not exist (" + std::to_string(st.devices.size()) + " CUDA device(s))");
  return device.index();
}

}  // namespace

void set_stream(Device device, void* stream) { rt::cu::set_stream(cuda_index("set_stream", device), as_stream(stream)); }

void* current_stream(Device device) { return rt::cu::context_of(cuda_index("current_stream", device)).stream; }

StreamGuard::StreamGuard(Device device, void* stream) : device_(device), previous_(current_stream(device)) {
  set_stream(device, stream);
}
StreamGuard::~StreamGuard() {
  try {
    set_stream(device_, previous_);
  } catch (const Error& e) {
    std::fprintf(stderr, "[lazyfuse] warning: StreamGuard could not put back the previous stream: %s\n", e.what());
  }
}

void stream_wait_for_lazyfuse(Device device, void* stream) {
  int d = cuda_index("stream_wait_for_lazyfuse", device);
  rt::cu::stream_wait(d, as_stream(stream), rt::cu::device_context(d).stream);
}

void lazyfuse_wait_for_stream(Device device, void* stream) {
  int d = cuda_index("lazyfuse_wait_for_stream", device);
  rt::cu::stream_wait(d, rt::cu::device_context(d).stream, as_stream(stream));
}

}  // namespace lf
