// Facts about the indexing ops of the op table (ops.inc, issue 23) shared by the frontend, the
// reference executor and the executor: which user-facing op a gather node stands for (so that an
// index error names the op the user called), and the index error's message.
#pragma once

#include <cstdint>
#include <string>

namespace lf::ir {

// IndexPut: index_put checks and normalizes each index tensor by a gather of arange (dim j of x).
enum class GatherOp : int64_t {
  Gather = 0, IndexSelect, TakeAlongDim, Take, Embedding, IndexPut, MaskedScatter, Searchsorted, Index,
  CrossEntropy, NllLoss
};

inline const char* gather_op_name(int64_t op) {
  switch (static_cast<GatherOp>(op)) {
    case GatherOp::Gather: return "gather";
    case GatherOp::IndexSelect: return "index_select";
    case GatherOp::TakeAlongDim: return "take_along_dim";
    case GatherOp::Take: return "take";
    case GatherOp::Embedding: return "embedding";
    case GatherOp::IndexPut: return "index_put";
    case GatherOp::MaskedScatter: return "masked_scatter";
    case GatherOp::Searchsorted: return "searchsorted";
    case GatherOp::Index: return "index";
    case GatherOp::CrossEntropy: return "cross_entropy";
    case GatherOp::NllLoss: return "nll_loss";
  }
  return "gather";
}

// The scatter row (ops.inc `scatter`): how a value combines with its destination (attrs.start).
// Assign: the last value in index order wins (deterministic, where PyTorch leaves it unspecified).
// The others are scatter_reduce's reduce modes: without include_self (attrs.keepdim false) a
// destination that receives values starts from the mode's identity (PyTorch's rule), so self is
// left out of it; mean divides by the number of values (plus one with self), flooring for integers.
enum class ScatterReduce : int64_t { Assign = 0, Sum, Prod, Mean, AMax, AMin };
// The user-facing op a scatter node stands for (attrs.step), named by its index errors.
// (A scatter_add node's attrs.step is one too: ScatterAdd, or the composite it stands for.)
enum class ScatterOp : int64_t {
  Scatter = 0, ScatterReduce, IndexPut, IndexCopy, IndexFill, IndexReduce, ScatterAdd, IndexAdd, Bincount,
  MaxUnpool2d
};

inline const char* scatter_op_name(int64_t op) {
  switch (static_cast<ScatterOp>(op)) {
    case ScatterOp::Scatter: return "scatter";
    case ScatterOp::ScatterReduce: return "scatter_reduce";
    case ScatterOp::IndexPut: return "index_put";
    case ScatterOp::IndexCopy: return "index_copy";
    case ScatterOp::IndexFill: return "index_fill";
    case ScatterOp::IndexReduce: return "index_reduce";
    case ScatterOp::ScatterAdd: return "scatter_add";
    case ScatterOp::IndexAdd: return "index_add";
    case ScatterOp::Bincount: return "bincount";
    case ScatterOp::MaxUnpool2d: return "max_unpool2d";
  }
  return "scatter";
}

// The ScatterOp named `name` (a composite's user-facing op: frontend/record.h, UserOp), or `fallback`.
inline ScatterOp scatter_op_named(const char* name, ScatterOp fallback) {
  for (int64_t op = 0; op <= static_cast<int64_t>(ScatterOp::MaxUnpool2d); ++op) {
    const char* n = scatter_op_name(op);
    size_t i = 0;
    while (n[i] && n[i] == name[i]) ++i;
    if (n[i] == name[i]) return static_cast<ScatterOp>(op);
  }
  return fallback;
}

inline const char* scatter_reduce_name(ScatterReduce r) {
  switch (r) {
    case ScatterReduce::Assign: return "assign";
    case ScatterReduce::Sum: return "sum";
    case ScatterReduce::Prod: return "prod";
    case ScatterReduce::Mean: return "mean";
    case ScatterReduce::AMax: return "amax";
    case ScatterReduce::AMin: return "amin";
  }
  return "assign";
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

// The error for a bad index of a gather standing for user-facing op `op` (attrs.start) over a
// source of `size` along `axis`. masked_scatter gathers its source behind one padding element at
// the mask's running count: an index past it means the mask selects more than the source holds.
inline std::string gather_index_error(int64_t op, int64_t index, int64_t axis, int64_t size) {
  if (op == static_cast<int64_t>(GatherOp::MaskedScatter))
    return "lf::masked_scatter: the mask selects more elements than source has (" + std::to_string(size - 1) + ")";
  return index_error(gather_op_name(op), index, axis, size, op != static_cast<int64_t>(GatherOp::Take));
}

}  // namespace lf::ir
