// Which loader maps a compiled CPU kernel (an object file, fresh or from the persistent cache) into
// the process: our ELF loader (codegen/cpu/elf_loader.h: x86-64 relocations only, needs no LLVM, so
// a warm start never loads the LLVM plugin) or LLVM ORC's JITLink (codegen/cpu/llvm/orc.cpp, in the
// plugin: every target LLVM supports). LAZYFUSE_CPU_LOADER picks (runtime/config.h); "auto" takes
// the ELF loader on x86-64, where it starts faster (bench/RESULTS.md, "CPU loaders"), and ORC on
// every target the ELF loader does not know. This header shows no LLVM types.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/status.h"

namespace lf::cpu {

enum class Loader : uint8_t { Elf, Orc };
const char* loader_name(Loader loader);

// Whether our ELF loader knows the objects LLVM makes on this target (x86-64 ELF).
bool elf_loader_knows_target();

// The loader LAZYFUSE_CPU_LOADER asks for on this target, and why (for LAZYFUSE_LOG); "elf" where
// the ELF loader does not know the target is an error naming both.
struct LoaderChoice {
  Loader loader = Loader::Elf;
  std::string why;
};
lf::StatusOr<LoaderChoice> choose_loader();

// The code of one object file, mapped; its functions run while it lives.
class KernelImage {
 public:
  virtual ~KernelImage() = default;
  // A defined global symbol's address, or nullptr.
  virtual void* symbol(const std::string& name) const = 0;
};

// Loads `object` with `loader` (ORC: loads the LLVM plugin if it is not loaded yet).
lf::StatusOr<std::shared_ptr<const KernelImage>> load_image(std::string_view object, Loader loader);

// Loads `object` with the loader choose_loader() picks; LAZYFUSE_LOG=1 says once per process and
// loader which one ran and why.
lf::StatusOr<std::shared_ptr<const KernelImage>> load_image(std::string_view object);

}  // namespace lf::cpu
