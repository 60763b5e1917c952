// The plugin's interface: the table of functions liblazyfuse-llvm.so exports to the core
// (plugin.h loads it). Part of the code-generator fingerprint, as the plugin includes it.
#pragma once

#include <string>
#include <string_view>

#include "codegen/cpu/emit_options.h"
#include "codegen/kir/kernel_ir.h"
#include "runtime/status.h"

namespace lf::cpu::plugin {

// Bumped whenever Api changes; a plugin of another version is refused.
// 2: lf::Status in place of absl::Status; 3: EmitOptions; 4: OrcApi.
inline constexpr int kAbiVersion = 4;

// LLVM ORC's loader (JITLink; codegen/cpu/llvm/orc.cpp): an object file compiled for this host,
// linked into a JITDylib of its own, its external symbols resolved as the ELF loader resolves them
// (resolve_process_symbol: the process, then libmvec). On every target JITLink supports.
struct OrcApi {
  int abi = 0;  // kAbiVersion
  const char* build = nullptr;
  // A handle to the linked object; an error names what JITLink refused.
  lf::StatusOr<void*> (*load)(std::string_view object) = nullptr;
  // A defined symbol's address in the object behind `handle`, or nullptr.
  void* (*symbol)(void* handle, const std::string& name) = nullptr;
  // Unmaps the object: its functions must not run any more.
  void (*unload)(void* handle) = nullptr;
};

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
  const OrcApi* orc = nullptr;
};

}  // namespace lf::cpu::plugin

// The plugin's exported symbols: the whole table, and the ORC loader's alone (what a plugin built
// only to load kernels exports; liblazyfuse-llvm.so exports both).
extern "C" const lf::cpu::plugin::Api* lazyfuse_llvm_plugin();
extern "C" const lf::cpu::plugin::OrcApi* lazyfuse_orc_loader();
