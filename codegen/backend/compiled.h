// What a backend's compiler returns: a loaded kernel plus what a user inspecting it wants.
#pragma once

#include <string>

namespace lf {

struct CompiledKernel {
  virtual ~CompiledKernel() = default;
  std::string name;
  std::string source;  // LLVM IR or CUDA C, as generated
  std::string log;     // compiler messages, if any
  double compile_ms = 0;   // generating, compiling and loading it
  double compiler_ms = 0;  // of which the compiler alone (NVRTC, LLVM)
  std::string binary;  // object file or cubin, for the persistent cache (emptied once stored)
  // Built for compile speed, not run speed (tiered compiling, kernel_cache.h): an optimized build
  // is on its way and replaces this one, in memory and in the persistent cache.
  bool quick = false;
  // Why it was compiled: what was new in its key against the nearest kernel of the same ops
  // compiled before (backend/explain.h); empty for the first of its ops. Kept in its persistent
  // cache entry.
  std::string why;
};

}  // namespace lf
