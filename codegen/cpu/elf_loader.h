// A small loader for the ELF x86-64 relocatable objects LLVM makes of CPU kernels: it maps their
// sections, applies their relocations and finds their functions, so that running a kernel from the
// persistent cache needs no LLVM in the process (the LLVM plugin is loaded only to compile).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "runtime/status.h"

namespace lf::cpu {

// The address of an external symbol (a libm or libmvec function, a compiler helper), or nullptr.
using SymbolResolver = std::function<void*(const std::string& name)>;

// The resolver kernels use: the process's symbols, then libmvec's (dlopen'ed once).
void* resolve_process_symbol(const std::string& name);

// One object file in memory: text read+execute, constants and GOT read-only; unmapped when
// destroyed (its functions must not run any more then).
class LoadedObject {
 public:
  LoadedObject(const LoadedObject&) = delete;
  LoadedObject& operator=(const LoadedObject&) = delete;
  ~LoadedObject();

  // A defined global symbol's address, or nullptr.
  void* symbol(const std::string& name) const;
  size_t mapped_bytes() const { return size_; }

 private:
  friend lf::StatusOr<std::unique_ptr<LoadedObject>> load_object(std::string_view, const SymbolResolver&);
  LoadedObject() = default;
  void* base_ = nullptr;
  size_t size_ = 0;
  std::unordered_map<std::string, void*> symbols_;
};

// Loads an ELF64 x86-64 ET_REL object. Supported relocations: R_X86_64_64, PC32, PC64, PLT32,
// GOTPCREL, GOTPCRELX, REX_GOTPCRELX (what LLVM emits for position-independent small-code-model
// code); calls and GOT entries of external symbols go through a GOT and stubs placed after the
// code. Anything else (another machine or class, a truncated or inconsistent file, an unknown
// relocation, an unresolved symbol) is an error, never a crash.
lf::StatusOr<std::unique_ptr<LoadedObject>> load_object(std::string_view object,
                                                          const SymbolResolver& resolve = resolve_process_symbol);

}  // namespace lf::cpu
