// Emits the LLVM IR of a kernel (internal to the CPU backend).
#pragma once

#include <memory>
#include <string>

#include "codegen/cpu/emit_options.h"
#include "codegen/kir/kernel_ir.h"
#include "codegen/kir/row_plan.h"
#include "codegen/kir/split.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace lf::cpu {

using kir::row_plan;
using kir::RowPlan;
using kir::split_info;
using kir::SplitInfo;

// Builds module with function `name` of type KernelFn (see cpu_backend.h), and the split functions
// when kir::split_info(kernel).splittable.
std::unique_ptr<llvm::Module> emit_module(const kir::Kernel& kernel, const EmitOptions& options, const std::string& name,
                                          llvm::LLVMContext& ctx);

// The function attribute of a kernel emitted with EmitOptions::stream_stores.
inline constexpr const char* kStreamingAttr = "lazyfuse-streaming-stores";

// After optimization: in functions with kStreamingAttr, the vector stores LLVM knows to be aligned
// to their size (up to 64 bytes) become non-temporal; returns how many. Only the middle loops of
// their output passes have such stores (see the emitter's emit_streaming_columns).
int mark_streaming_stores(llvm::Module& m);

}  // namespace lf::cpu
