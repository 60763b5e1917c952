// Facts about the indexing ops of the op table (ops.inc, issue 23) shared by the frontend, the
// reference executor and the executor: which user-facing op a gather node stands for (so that an
// index error names the op the user called), and the index error's message.
#pragma once

#include <cstdint>
#include <string>

namespace lf::ir {

enum class GatherOp : int64_t { Gather = 0, IndexSelect, TakeAlongDim, Take, Embedding };

inline const char* gather_op_name(int64_t op) {
  switch (static_cast<GatherOp>(op)) {
    case GatherOp::Gather: return "gather";
    case GatherOp::IndexSelect: return "index_select";
    case GatherOp::TakeAlongDim: return "take_along_dim";
    case GatherOp::Take: return "take";
    case GatherOp::Embedding: return "embedding";
  }
  return "gather";
}

// "lf::index_select: index 7 is out of range for dim 0 of size 5 (valid: -5 to 4)"; take names no dim
// (it indexes the flattened tensor).
inline std::string index_error(const char* op, int64_t index, int64_t axis, int64_t size, bool name_dim = true) {
  std::string where = name_dim ? "dim " + std::to_string(axis) + " of size " : "size ";
  std::string valid = size > 0 ? " (valid: " + std::to_string(-size) + " to " + std::to_string(size - 1) + ")"
                               : " (the dim is empty)";
  return std::string("lf::") + op + ": index " + std::to_string(index) + " is out of range for " + where +
         std::to_string(size) + valid;
}

}  // namespace lf::ir
