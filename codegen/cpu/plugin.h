// The seam between liblazyfuse.so and liblazyfuse-llvm.so, the plugin that holds everything that
// needs LLVM (emitting, optimizing and compiling CPU kernels to object files). The core loads the
// plugin (dlopen, from the folder liblazyfuse.so was loaded from) the first time a CPU kernel must
// be compiled, inspected or printed as IR; running a kernel, fresh or from the persistent cache,
// needs no LLVM (codegen/cpu/elf_loader.h). This header shows no LLVM types.
#pragma once

#include <string>

#include "runtime/status.h"
#include "codegen/cpu/backend.h"
#include "codegen/cpu/plugin_api.h"

namespace lf::cpu::plugin {

// The plugin, loaded at the first call; an error (kUnavailable) says which file could not be loaded
// and why, at every call.
lf::StatusOr<const Api*> get();

// Loads the plugin at `path` and checks that it belongs to this build (tests: the error paths).
lf::StatusOr<const Api*> load_from(const std::string& path);

// LLVM ORC's loader (plugin_api.h, OrcApi), from the plugin (loaded at the first call).
lf::StatusOr<const OrcApi*> orc();

// Whether the plugin has been loaded into this process (tests).
bool loaded();

}  // namespace lf::cpu::plugin
