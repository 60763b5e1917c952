// Why a kernel was compiled: what is new in its key compared with the nearest kernel of the same
// ops already compiled (or loaded) in this process, e.g. "input 1: transposed layout (was
// contiguous)", "dtype float64 (was float32)", "rank 3 (was 2)", "variant: vec4 off (was on)".
// Built from the kernel IR (ops, operand dtypes, stride classes, ranks) and the backend's variant
// (Variant::describe), not from the key's text. The explanation is kept with the compiled kernel
// (CompiledKernel::why) and in its persistent cache entry, so `lazyfuse-cache show` tells why an
// entry exists; LAZYFUSE_LOG=1 prints it at the compile.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "codegen/backend/backend.h"
#include "codegen/kir/kernel_ir.h"

namespace lf::backend {

// What the explanation compares: a kernel's structure in named parts.
struct KeyShape {
  std::string backend;
  std::string ops;  // the op list, without dtypes or ranks: kernels with equal lists are compared
  std::string key;  // the full cache key (a recompile of the very same key is told apart)
  bool row = false;
  int outer_rank = 0, inner_rank = 0;
  struct Operand {
    bool output = false;
    DType dtype = DType::Float32;
    std::vector<kir::StrideClass> strides;
  };
  std::vector<Operand> operands;                           // Index operands left out
  std::vector<std::pair<std::string, std::string>> variant;  // Variant::describe()
  std::string compute;  // the instructions' dtypes, e.g. "float32" or "float32,float64"
};

KeyShape key_shape(const kir::Kernel& kernel, const Variant& variant, const char* backend, const std::string& key);

// Compares `shape` with the kernels of the same backend and op list seen so far and returns what is
// new in it against the nearest ("" for the first of its op list). Does not remember it.
std::string explain_new(const KeyShape& shape);

// Remembers a kernel compiled or loaded, for later explanations.
void remember(KeyShape shape);

// "contiguous", "transposed", "broadcast", "strided", "scalar": an operand's layout class in words.
std::string layout_name(const std::vector<kir::StrideClass>& strides);

}  // namespace lf::backend
