// What the CPU backend's code generator takes besides the kernel IR, and what it shows of a kernel
// (shared by the backend and the LLVM plugin; part of the code-generator fingerprint).
#pragma once

#include <string>

namespace lf::cpu {

// Choices of generated code beyond the kernel IR (the backend's variant: part of the cache key).
struct EmitOptions {
  // The element outputs are written with non-temporal (streaming) stores that bypass the caches,
  // for launches whose outputs are far larger than the caches (wants_streaming_stores).
  bool stream_stores = false;
};

// The optimized LLVM IR and the assembly LLVM makes of a kernel (inspect(); tests check that loops
// vectorize).
struct Inspection {
  std::string optimized_ir;
  std::string assembly;
};

}  // namespace lf::cpu
