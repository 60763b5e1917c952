// The seam between liblazyfuse.so and liblazyfuse-llvm.so, the plugin that holds everything that
// needs LLVM (emitting, optimizing and compiling CPU kernels to object files). The core loads the
// plugin (dlopen, from the folder liblazyfuse.so was loaded from) the first time a CPU kernel must
// be compiled, inspected or printed as IR; running a kernel, fresh or from the persistent cache,
// needs no LLVM (codegen/cpu/elf_loader.h). This header shows no LLVM types.
#pragma once

#include <string>

#include "runtime/status.h"
#include "codegen/cpu/backend.h"

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

// The plugin, loaded at the first call; an error (kUnavailable) says which file could not be loaded
// and why, at every call.
lf::StatusOr<const Api*> get();

// Loads the plugin at `path` and checks that it belongs to this build (tests: the error paths).
lf::StatusOr<const Api*> load_from(const std::string& path);

// Whether the plugin has been loaded into this process (tests).
bool loaded();

}  // namespace lf::cpu::plugin

// The plugin's one exported symbol.
extern "C" const lf::cpu::plugin::Api* lazyfuse_llvm_plugin();
