// A fused LazyFuse computation on tensors that PyTorch hands over by DLPack, handed back the same
// way, in one process (bench/interop/dlpack_torch.py loads this library with ctypes). C entry
// points only, so that no PyTorch headers are needed to build it.
#include <cstdint>
#include <cstdio>
#include <exception>

#include <lazyfuse/dlpack.h>
#include <lazyfuse/lazyfuse.h>

namespace {
thread_local char last_error[1024];
}

extern "C" {

// The message of the last failed call ("" when none).
const char* lf_demo_error() { return last_error; }

// y = gelu(x * 2 + b) - x, the caller's tensors taken without a copy (LazyFuse owns them now: it
// calls their deleters when done) and the result given back as a new DLPack tensor. Null on error.
DLManagedTensor* lf_demo_chain(DLManagedTensor* x, DLManagedTensor* b) {
  last_error[0] = '\0';
  try {
    lf::Tensor tx = lf::from_dlpack(x);
    lf::Tensor tb = lf::from_dlpack(b);
    lf::Tensor y = lf::gelu(tx * 2 + tb) - tx;
    return lf::to_dlpack(y);
  } catch (const std::exception& e) {
    std::snprintf(last_error, sizeof last_error, "%s", e.what());
    return nullptr;
  }
}

// Runs LazyFuse's work on `device` on the caller's CUDA stream (null: its own).
int lf_demo_set_stream(int device, void* stream) {
  last_error[0] = '\0';
  try {
    lf::set_stream(lf::Device::cuda(device), stream);
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(last_error, sizeof last_error, "%s", e.what());
    return 1;
  }
}

// Bytes LazyFuse copied between or within devices so far (its own counter).
uint64_t lf_demo_bytes_copied() { return lf::cache_stats().bytes_moved; }

}  // extern "C"
