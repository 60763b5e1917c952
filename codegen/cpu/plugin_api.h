// The plugin's interface: the table of functions liblazyfuse-llvm.so exports to the core
// (plugin.h loads it). Part of the code-generator fingerprint, as the plugin includes it.
#pragma once

#include <string>

#include "codegen/cpu/emit_options.h"
#include "codegen/kir/kernel_ir.h"
#include "runtime/status.h"

namespace lf::cpu::plugin {

// Bumped whenever Api changes; a plugin of another version is refused.
inline constexpr int kAbiVersion = 3;  // 2: lf::Status in place of absl::Status; 3: EmitOptions

struct Api {
  int abi = 0;                      // kAbiVersion
  const char* build = nullptr;      // the codegen fingerprint of the build the plugin belongs to
  const char* llvm_version = nullptr;
  // The kernel's LLVM IR before optimization (*ir) and its optimized object file (*object).
  lf::Status (*compile)(const kir::Kernel& kernel, const EmitOptions& options, const std::string& name, std::string* ir,
                        std::string* object) = nullptr;
  lf::StatusOr<Inspection> (*inspect)(const kir::Kernel& kernel, const EmitOptions& options,
                                      const std::string& name) = nullptr;
  std::string (*emit_ir)(const kir::Kernel& kernel, const EmitOptions& options, const std::string& name) = nullptr;
  // Textual LLVM IR to an object file for this host, unoptimized; `pic`: position-independent
  // (as kernels are), else the static relocation model. For the loader's tests.
  lf::StatusOr<std::string> (*compile_ir)(const std::string& ir, bool pic) = nullptr;
};

}  // namespace lf::cpu::plugin

// The plugin's one exported symbol.
extern "C" const lf::cpu::plugin::Api* lazyfuse_llvm_plugin();
