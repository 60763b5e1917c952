// The CPU backend: kernel IR -> LLVM IR -> optimized (loop vectorizer, glibc's libmvec for vector
// transcendentals) -> native code through LLVM ORC's LLJIT; and launching over the thread pool.
// This header shows no LLVM types.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "codegen/compiled.h"
#include "codegen/kernel_ir.h"

namespace lf::cpu {

using KernelFn = void (*)(const int64_t* meta, void* const* ptrs, int64_t row_begin, int64_t row_end,
                          int64_t col_begin, int64_t col_end);

struct CompiledKernel : lf::CompiledKernel {
  KernelFn fn = nullptr;  // source: the LLVM IR before optimization
};

// Generates, optimizes and compiles `kernel` as function `name`.
absl::StatusOr<std::shared_ptr<CompiledKernel>> compile(const kir::Kernel& kernel, const std::string& name);

// Links an object file `compile` produced earlier (CompiledKernel::binary, from the persistent
// cache) and finds `name` in it.
absl::StatusOr<std::shared_ptr<CompiledKernel>> load(const std::string& name, const std::string& object);

// The LLVM IR `compile` would start from (for logs and golden files).
std::string emit_ir(const kir::Kernel& kernel, const std::string& name);

// What the generated code depends on besides the IR: LLVM version, CPU and its features.
const std::string& target_id();

// Runs the kernel over all rows and columns, split over the CPU thread pool.
void launch(const CompiledKernel& compiled, const kir::Kernel& kernel, const kir::LaunchArgs& args);

// The optimized LLVM IR and the assembly LLVM makes of `kernel` (tests check that loops vectorize).
struct Inspection {
  std::string optimized_ir;
  std::string assembly;
};
absl::StatusOr<Inspection> inspect(const kir::Kernel& kernel, const std::string& name);

}  // namespace lf::cpu
