// Existing code in, existing code out: tensors over memory the caller owns (no copy), .npy and .npz
// files, and running LazyFuse's GPU work on the caller's CUDA stream. DLPack and Eigen have their
// own optional headers (lazyfuse/dlpack.h, lazyfuse/eigen.h), so that this one needs neither.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "lazyfuse/tensor.h"
#include "lazyfuse/types.h"

namespace lf {

// ---- Borrowing and adopting memory (README, "Using LazyFuse inside existing code").
// A materialized tensor over `data`: element i of a [n0, n1, ...] tensor is at
// data + (i0 * strides[0] + i1 * strides[1] + ...) * dtype_size(dtype) (strides in elements,
// not bytes; none given: row-major contiguous). `device`: Device::cpu() for host memory, or
// Device::cuda(i) for a device address (a CUdeviceptr cast to void*) on GPU i. Nothing is copied.
//
// Lifetime: the first form borrows. The caller keeps the memory alive and unchanged while any
// Tensor made from it, or any pending value computed from it, exists (lf::sync() and reading the
// results end the pending values; a computed result no longer needs it). Writes by the caller are
// seen by computations that run after them. The second form adopts: `deleter(data)` is called once,
// after the last tensor or pending value using the memory is gone, on the thread that drops it
// (it must not throw). The third keeps `owner` (any shared_ptr: a std::vector, an array object)
// alive just as long.
//
// Errors (lf::Error): a null `data` with elements, `data` not aligned to the dtype's size, a
// negative size, a negative stride (not supported: LazyFuse views only go forward), strides of the
// wrong rank, a size in bytes that overflows, a CUDA device that is unavailable or absent.
Tensor from_blob(void* data, Shape shape, DType dtype, Device device = Device::cpu());
Tensor from_blob(void* data, Shape shape, Shape strides, DType dtype, Device device = Device::cpu());
Tensor from_blob(void* data, Shape shape, Shape strides, DType dtype, Device device,
                 std::function<void(void*)> deleter);
Tensor from_blob(void* data, Shape shape, Shape strides, DType dtype, Device device, std::shared_ptr<const void> owner);

// ---- .npy and .npz files (numpy's formats; numpy reads what these write and the reverse).
// save: a sync point; writes the values in row-major order, little-endian, as numpy's `|b1`, `<i4`,
// `<i8`, `<f2`, `<f4`, `<f8`. bfloat16 has no numpy dtype: save throws for it (cast to float32
// first). load: a CPU tensor; C- or Fortran-order files, either byte order, those six dtypes. A file
// that cannot be opened or written, a bad magic or version, a header numpy would not write, a dtype
// LazyFuse lacks, or a file shorter than its header says throws lf::Error naming the file.
void save(const std::string& path, const Tensor& t);
Tensor load(const std::string& path);
// Several tensors in one zip archive, each as `<name>.npy` (stored, not compressed). load_npz also
// reads archives numpy.savez_compressed writes (deflate).
void savez(const std::string& path, const std::map<std::string, Tensor>& tensors);
std::map<std::string, Tensor> load_npz(const std::string& path);
// The safetensors format model weights ship in (Hugging Face's): named tensors of bool, int32,
// int64, float16, bfloat16, float32 or float64 and string metadata. save_safetensors is a sync
// point and replaces the file whole (written beside it, then renamed); load_safetensors gives CPU
// tensors, and an lf::Error naming the file and the tensor for a header that does not match the
// data (offsets outside it, a size that disagrees with the shape, an unknown dtype, bad JSON).
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});
std::map<std::string, Tensor> load_safetensors(const std::string& path,
                                               std::map<std::string, std::string>* metadata = nullptr);

// ---- CUDA streams (untested on a GPU: written and compiled on a machine without one).
// LazyFuse queues its GPU work on one stream per device. set_stream makes it use the caller's
// stream (a CUstream cast to void*) instead: kernels, copies and reads of `device` are then
// ordered with the caller's own work on that stream. The work LazyFuse queued before is ordered
// before what comes next (the new stream waits for it). nullptr goes back to LazyFuse's own
// stream. The caller keeps the stream alive until it is replaced. A process-wide setting: call it
// between computations, not while another thread computes on the device. Throws lf::Error for a
// CPU device or when CUDA is unavailable.
void set_stream(Device device, void* stream);
void* current_stream(Device device);  // the stream LazyFuse uses now on `device`
// Sets the stream for a scope and puts back the previous one (even when an exception leaves it).
class StreamGuard {
 public:
  StreamGuard(Device device, void* stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Device device_;
  void* previous_;
};
// Waiting across streams without blocking the host (a CUDA event recorded on one, waited for on
// the other): `stream` waits for the work LazyFuse has queued on `device` so far, or LazyFuse's
// later work on `device` waits for what is queued on `stream` so far.
void stream_wait_for_lazyfuse(Device device, void* stream);
void lazyfuse_wait_for_stream(Device device, void* stream);

}  // namespace lf
