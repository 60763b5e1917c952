// Emits the LLVM IR of a kernel (internal to the CPU backend).
#pragma once

#include <memory>
#include <string>

#include "codegen/kernel_ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace lf::cpu {

// Builds module with one function `name` of type KernelFn (see cpu_backend.h).
std::unique_ptr<llvm::Module> emit_module(const kir::Kernel& kernel, const std::string& name, llvm::LLVMContext& ctx);

}  // namespace lf::cpu
