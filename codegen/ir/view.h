// Strided views: how a chain of view nodes (permute, expand, slice, reshape) turns into strides and
// an offset over the storage (or the generator index space) at its bottom.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "codegen/ir/node.h"

namespace lf::ir {

struct Strided {
  Shape shape;
  Shape strides;
  int64_t offset = 0;
};

Strided contiguous_view(const Shape& shape);

// The strides a reshape of `in` to `shape` needs without copying, or nullopt when the layout
// cannot be viewed that way (PyTorch's view rule).
std::optional<Shape> reshape_strides(const Strided& in, const Shape& shape);

// Applies one view node to `in`; nullopt when a reshape cannot be expressed as strides.
std::optional<Strided> apply_view(const Strided& in, const Node& view);

// Follows view nodes down from `node` to the first node that is not a pending view (the source).
// Returns the source and the views from the bottom up.
std::pair<Node*, std::vector<Node*>> resolve_views(Node* node);

// The source's own layout (realized: its storage layout; pending: contiguous, as it will be
// materialized), then each view of `chain` applied. nullopt when a reshape does not fit.
std::optional<Strided> view_of_chain(const Node& source, const std::vector<Node*>& chain);

// Whether a gather's indices (ir::Op::Gather, inputs[1]) are known to lie in [-size, size) of the
// gathered dim without looking at them: they are a view of a realized storage whose value range
// the host knows (rt::Storage::value_range: values it wrote itself) and that range fits. Such a
// gather's kernel checks nothing, so its flush does not wait for the device to read an error word.
// Flush plans keep this in their signature (plan::describe), so a replay never binds indices that
// are not known in range to a kernel that does not check them.
bool gather_indices_known_in_range(const Node& gather);

// The same of a scatter's indices (ir::Op::ScatterAdd and ir::Op::Scatter, inputs[1]) against the
// output's size along its axis: a GPU scatter of such indices reads no error word back, so its
// flush does not wait for the device either (the kernel still tests each index, and never writes
// out of bounds).
bool scatter_indices_known_in_range(const Node& scatter);

}  // namespace lf::ir
