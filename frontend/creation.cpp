// Creation ops: copies of host data, constants, ranges and counter-based random numbers.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "codegen/ir/dtype_dispatch.h"
#include "frontend/random.h"
#include "frontend/record.h"
#include "lazyfuse/ops.h"
#include "lazyfuse/runtime.h"
#include "runtime/storage.h"

namespace lf {
namespace {

using detail::fail;

template <typename T>
Tensor from_host(const std::vector<T>& data, Shape shape, DType dtype) {
  detail::check_shape("from_vector", shape, dtype);
  int64_t n = shape_numel(shape);
  if (static_cast<int64_t>(data.size()) != n) {
    fail("from_vector", std::to_string(data.size()) + " values cannot fill shape " + shape_str(shape) + " (" +
                            std::to_string(n) + " elements)");
  }
  Device device = default_device();
  const size_t bytes = static_cast<size_t>(n) * dtype_size(dtype);
  // Filled on the host, then (on a GPU) copied up; the host block goes back to its cache.
  auto storage = rt::Storage::allocate(Device::cpu(), bytes);
  T* dst = static_cast<T*>(storage->data());
  for (int64_t i = 0; i < n; ++i) dst[i] = data[static_cast<size_t>(i)];  // std::vector<bool> has no data()
  rt::note_value_range(*storage, dtype, n);  // for gathers that index with these values
  if (!device.is_cpu()) {
    try {
      auto on_device = rt::Storage::allocate(device, bytes);
      rt::copy(*storage, 0, *on_device, 0, bytes);
      rt::Storage::ValueRange r;
      if (storage->value_range(&r)) on_device->set_value_range(r);
      storage = std::move(on_device);
    } catch (const Error& e) {
      fail("from_vector", "cannot copy " + std::string(dtype_name(dtype)) + shape_str(shape) + " (" +
                              std::to_string(bytes) + " bytes) to " + device.str() + ": " + e.what());
    }
  }
  ir::Layout layout{ir::contiguous_strides(shape), 0};
  return Tensor(ir::make_buffer(std::move(storage), dtype, std::move(shape), std::move(layout)));
}

struct RandomState {
  std::atomic<uint64_t> seed{0x2545F4914F6CDD1Dull};
  std::atomic<uint64_t> counter{0};
};
RandomState& random_state() {
  static RandomState s;
  return s;
}

}  // namespace

Tensor detail::random(ir::Op op, const char* name, Shape shape, DType dtype, Device device) {
  if (!is_floating(dtype)) fail(name, std::string("needs a floating dtype, not ") + dtype_name(dtype));
  detail::check_shape(name, shape, dtype);
  ir::Attrs a;
  a.seed = random_state().seed.load();
  a.counter = random_state().counter.fetch_add(static_cast<uint64_t>(shape_numel(shape)));
  return detail::record(op, dtype, device, std::move(shape), {}, a);
}

Tensor from_vector(const std::vector<bool>& d, Shape s) { return from_host(d, std::move(s), DType::Bool); }
Tensor from_vector(const std::vector<int32_t>& d, Shape s) { return from_host(d, std::move(s), DType::Int32); }
Tensor from_vector(const std::vector<int64_t>& d, Shape s) { return from_host(d, std::move(s), DType::Int64); }
Tensor from_vector(const std::vector<float>& d, Shape s) { return from_host(d, std::move(s), DType::Float32); }
Tensor from_vector(const std::vector<double>& d, Shape s) { return from_host(d, std::move(s), DType::Float64); }

namespace {
Tensor constant(const char* op, const Shape& shape, double value, DType dtype) {
  detail::check_shape(op, shape, dtype);
  const bool real_valued = is_floating(dtype) || is_complex(dtype);
  if (!real_valued && !(std::fabs(value) < 9.2e18))
    fail(op, "value " + std::to_string(value) + " does not fit dtype " + dtype_name(dtype));
  Scalar s = real_valued               ? Scalar(value)
             : dtype == DType::Bool ? Scalar(value != 0)  // 0.5 is true, as in PyTorch
                                    : Scalar(static_cast<int64_t>(value));
  return detail::full_like_shape(shape, s, dtype, default_device());
}
}  // namespace

Tensor full(Shape shape, double value, DType dtype) { return constant("full", shape, value, dtype); }
Tensor zeros(Shape shape, DType dtype) { return constant("zeros", shape, 0.0, dtype); }
Tensor ones(Shape shape, DType dtype) { return constant("ones", shape, 1.0, dtype); }
Tensor scalar(double value, DType dtype) { return constant("scalar", {}, value, dtype); }

namespace {
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
}  // namespace

namespace {
Tensor arange_impl(double start, double end, double step, DType dtype);
}

// torch.arange's rule: integers alone give int64, any floating bound the default float dtype.
Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype) {
  auto integral = [](const Scalar& s) { return s.kind() != Scalar::Kind::Float; };
  DType d = dtype.value_or(integral(start) && integral(end) && integral(step) ? DType::Int64 : DType::Float32);
  return arange_impl(start.to_double(), end.to_double(), step.to_double(), d);
}
Tensor arange(Scalar end, std::optional<DType> dtype) { return arange(0, end, 1, dtype); }

namespace {
Tensor arange_impl(double start, double end, double step, DType dtype) {
  if (!std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
    fail("arange", "start, end and step must be finite");
  if (step == 0) fail("arange", "step must not be 0");
  if (dtype == DType::Bool) fail("arange", "needs a numeric dtype, not bool");
  // Like PyTorch: a range that runs against its step is a mistake, not an empty tensor.
  if ((step > 0 && end < start) || (step < 0 && end > start)) {
    fail("arange", "the range [" + std::to_string(start) + ", " + std::to_string(end) +
                       ") runs against the sign of step " + std::to_string(step));
  }
  // (end - start) may overflow to inf (arange(-1e308, 1e308)); a count of 2^63 or more does not
  // fit a size (casting it would be undefined).
  double count = std::ceil((end - start) / step);
  if (!(count < 0x1p63)) {
    fail("arange", "the range [" + num(start) + ", " + num(end) + ") with step " + num(step) + " has " + num(count) +
                       " elements, more than fit int64 (2^63 - 1)");
  }
  int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  ir::Attrs a;
  a.value = start;
  a.value2 = step;
  // An integer arange with integral bounds runs in integer arithmetic (ir::arange_is_integral):
  // its count is exact too, and every value must fit the dtype (PyTorch refuses a bound that
  // does not; wrapping would be a wrong answer).
  if (is_integral(dtype) && ir::arange_is_integral(a)) {
    const __int128 s = static_cast<int64_t>(start), t = static_cast<int64_t>(step);
    if (end == std::trunc(end)) {
      const __int128 span = static_cast<__int128>(end) - s;  // |end| < 2^63 + 2^63 |step| (count < 2^63)
      const __int128 c = t > 0 ? (span + t - 1) / t : (span + t + 1) / t;
      n = c > 0 ? static_cast<int64_t>(c) : 0;
    }
    const __int128 lo = dtype == DType::Int32 ? INT32_MIN : INT64_MIN, hi = dtype == DType::Int32 ? INT32_MAX : INT64_MAX;
    const __int128 last = s + (n > 0 ? n - 1 : 0) * t;
    if (n > 0 && (s < lo || s > hi || last < lo || last > hi)) {
      fail("arange", "the range [" + num(start) + ", " + num(end) + ") with step " + num(step) + " reaches " +
                         num(static_cast<double>(last)) + ", outside " + dtype_name(dtype));
    }
  }
  detail::check_shape("arange", {n}, dtype);
  return detail::record(ir::Op::Arange, dtype, default_device(), {n}, {}, a);
}
}  // namespace

void manual_seed(uint64_t seed) {
  random_state().seed.store(seed);
  random_state().counter.store(0);
}

Tensor rand(Shape shape, DType dtype) {
  return detail::random(ir::Op::Rand, "rand", std::move(shape), dtype, default_device());
}
Tensor randn(Shape shape, DType dtype) {
  return detail::random(ir::Op::Randn, "randn", std::move(shape), dtype, default_device());
}

}  // namespace lf
