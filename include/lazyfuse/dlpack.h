// DLPack import and export, without copies (an optional header: it includes <dlpack/dlpack.h>,
// which lazyfuse.h never does; Debian: libdlpack-dev). Header-only, on the public API
// (lf::from_blob with a deleter, Tensor::data_ptr and strides), so the library itself needs no
// DLPack. DLManagedTensorVersioned (DLPack 1.0) is handled when the dlpack.h in use has it.
//
// Import: lf::from_dlpack takes over the DLManagedTensor: its deleter is called exactly once, after
// the last tensor or pending value using the memory is gone (README, "Using LazyFuse inside
// existing code"). When from_dlpack throws (an unsupported dtype, device or lanes, a negative
// stride, a misaligned pointer), nothing is taken and the caller still owns it, except for a
// versioned tensor of another major version, whose deleter the DLPack spec says to call.
// CPU (kDLCPU, and kDLCUDAHost: pinned host memory) and CUDA (kDLCUDA) memory; GPU import and
// export are written and compiled but untested on a GPU.
//
// Export: lf::to_dlpack computes the tensor (a sync point; on a GPU it also waits for the
// device's queued work) and hands out its memory with its strides; the DLManagedTensor holds a
// handle to the value, released when the consumer calls its deleter. The values are immutable:
// consumers must not write to them (the versioned form sets DLPACK_FLAG_BITMASK_READ_ONLY).
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lazyfuse/interop.h"
#include "lazyfuse/tensor.h"
#include "lazyfuse/types.h"

namespace lf {
namespace dlpack_detail {

// kDLBool (DLPack 0.8 and later); the 0.6 header Debian 12 ships has no name for it.
inline constexpr uint8_t kBoolCode = 6;

inline std::string describe(const DLDataType& t) {
  return "code " + std::to_string(t.code) + ", " + std::to_string(t.bits) + " bits, " + std::to_string(t.lanes) +
         " lanes";
}

inline DType to_dtype(const DLDataType& t) {
  if (t.lanes != 1) throw Error("lf::from_dlpack: vector types (" + describe(t) + ") are not supported; lanes must be 1");
  switch (t.code) {
    case kDLInt:
      if (t.bits == 32) return DType::Int32;
      if (t.bits == 64) return DType::Int64;
      break;
    case kDLFloat:
      if (t.bits == 16) return DType::Float16;
      if (t.bits == 32) return DType::Float32;
      if (t.bits == 64) return DType::Float64;
      break;
    case kDLBfloat:
      if (t.bits == 16) return DType::BFloat16;
      break;
    case kDLComplex:
      if (t.bits == 64) return DType::Complex64;
      if (t.bits == 128) return DType::Complex128;
      break;
    case kBoolCode:
      if (t.bits == 8) return DType::Bool;
      break;
    default: break;
  }
  throw Error("lf::from_dlpack: DLPack dtype (" + describe(t) +
              ") has no LazyFuse dtype (int32, int64, float16, bfloat16, float32, float64, complex64, complex128 and 8-bit bool are)");
}

inline DLDataType from_dtype(DType d) {
  switch (d) {
    case DType::Bool: return DLDataType{kBoolCode, 8, 1};
    case DType::Int32: return DLDataType{kDLInt, 32, 1};
    case DType::Int64: return DLDataType{kDLInt, 64, 1};
    case DType::Float16: return DLDataType{kDLFloat, 16, 1};
    case DType::BFloat16: return DLDataType{kDLBfloat, 16, 1};
    case DType::Float32: return DLDataType{kDLFloat, 32, 1};
    case DType::Float64: return DLDataType{kDLFloat, 64, 1};
    case DType::Complex64: return DLDataType{kDLComplex, 64, 1};
    case DType::Complex128: return DLDataType{kDLComplex, 128, 1};
  }
  throw Error("lf::to_dlpack: unknown dtype");
}

inline Device to_device(const DLDevice& d) {
  // Read as an integer: a producer may store any number there, and loading a value that names no
  // enumerator of DLDeviceType (999) is undefined behaviour.
  std::underlying_type_t<DLDeviceType> type;
  static_assert(sizeof type == sizeof d.device_type);
  std::memcpy(&type, &d.device_type, sizeof type);
  if (type == kDLCPU || type == kDLCUDAHost) return Device::cpu();
  if (type == kDLCUDA) return Device::cuda(d.device_id);
  throw Error("lf::from_dlpack: DLPack device type " + std::to_string(static_cast<int64_t>(type)) +
              " is not supported (kDLCPU, kDLCUDAHost and kDLCUDA are)");
}

inline DLDevice from_device(Device d) {
  return d.is_cuda() ? DLDevice{kDLCUDA, d.index()} : DLDevice{kDLCPU, 0};
}

// A tensor over `t`'s memory; `release` is called once when LazyFuse no longer needs it (and not
// when this throws).
template <typename Release>
Tensor wrap(const DLTensor& t, Release release) {
  if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr))
    throw Error("lf::from_dlpack: bad DLTensor (ndim " + std::to_string(t.ndim) + (t.shape ? "" : ", no shape") + ")");
  const DType dtype = to_dtype(t.dtype);
  const Device device = to_device(t.device);
  Shape shape(t.shape, t.shape + t.ndim);
  Shape strides;
  if (t.strides != nullptr) {
    strides.assign(t.strides, t.strides + t.ndim);
  } else {  // compact row-major
    strides.resize(shape.size());
    int64_t s = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      strides[d] = s;
      // Checked: a shape whose product passes int64 ({2^62, 8}) is refused, not wrapped; the last
      // dim's product is never used as a stride, so from_blob names that overflow itself.
      if (d > 0 && __builtin_mul_overflow(s, shape[d] > 1 ? shape[d] : 1, &s))
        throw Error("lf::from_dlpack: shape " + shape_str(shape) + " has more elements than int64 holds");
    }
  }
  bool empty = false;
  for (int64_t n : shape) empty = empty || n == 0;
  int64_t numel = 1;
  for (int64_t n : shape)
    if (!empty && n > 0 && __builtin_mul_overflow(numel, n, &numel))
      throw Error("lf::from_dlpack: shape " + shape_str(shape) + " has more elements than int64 holds");
  // No memory is there to view: a null pointer (with or without an offset) holds no element.
  if (t.data == nullptr && !empty)
    throw Error("lf::from_dlpack: null data pointer (byte_offset " + std::to_string(t.byte_offset) + ") for shape " +
                shape_str(shape));
  const uintptr_t base = reinterpret_cast<uintptr_t>(t.data);
  if (t.byte_offset > UINTPTR_MAX - base)
    throw Error("lf::from_dlpack: byte_offset " + std::to_string(t.byte_offset) + " runs past the address space");
  void* data = reinterpret_cast<void*>(base + t.byte_offset);
  return from_blob(data, std::move(shape), std::move(strides), dtype, device, std::function<void(void*)>(std::move(release)));
}

// What an exported DLManagedTensor points into: the value's handle, and its shape and strides.
template <typename Managed>
struct Export {
  Managed managed{};
  Tensor value;
  std::vector<int64_t> shape, strides;
};

template <typename Managed>
Managed* make_export(const Tensor& t) {
  auto ctx = std::make_unique<Export<Managed>>();
  ctx->value = t;
  const void* data = t.data_ptr();  // the sync point
  ctx->shape = t.shape();
  ctx->strides = t.strides();
  DLTensor& dl = ctx->managed.dl_tensor;
  dl.data = const_cast<void*>(data);
  dl.device = from_device(t.device());
  dl.ndim = static_cast<int>(t.dim());
  dl.dtype = from_dtype(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
  ctx->managed.manager_ctx = ctx.get();
  ctx->managed.deleter = [](Managed* self) { delete static_cast<Export<Managed>*>(self->manager_ctx); };
  return &ctx.release()->managed;
}

}  // namespace dlpack_detail

// Takes over `managed` (see above); a null pointer throws.
inline Tensor from_dlpack(DLManagedTensor* managed) {
  if (managed == nullptr) throw Error("lf::from_dlpack: null DLManagedTensor");
  return dlpack_detail::wrap(managed->dl_tensor, [managed](void*) {
    if (managed->deleter) managed->deleter(managed);
  });
}

// The tensor's memory as a DLManagedTensor; the consumer calls its deleter once when done.
inline DLManagedTensor* to_dlpack(const Tensor& t) { return dlpack_detail::make_export<DLManagedTensor>(t); }

#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
inline Tensor from_dlpack(DLManagedTensorVersioned* managed) {
  if (managed == nullptr) throw Error("lf::from_dlpack: null DLManagedTensorVersioned");
  if (managed->version.major != DLPACK_MAJOR_VERSION) {
    const uint32_t major = managed->version.major;
    if (managed->deleter) managed->deleter(managed);  // the spec: call it, touch nothing else
    throw Error("lf::from_dlpack: DLPack major version " + std::to_string(major) + ", this build reads " +
                std::to_string(DLPACK_MAJOR_VERSION));
  }
  return dlpack_detail::wrap(managed->dl_tensor, [managed](void*) {
    if (managed->deleter) managed->deleter(managed);
  });
}

inline DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& t) {
  DLManagedTensorVersioned* m = dlpack_detail::make_export<DLManagedTensorVersioned>(t);
  m->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  m->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  return m;
}
#endif

}  // namespace lf
