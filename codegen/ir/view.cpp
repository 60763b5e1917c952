#include "codegen/ir/view.h"

#include "runtime/storage.h"

namespace lf::ir {

Strided contiguous_view(const Shape& shape) { return Strided{shape, contiguous_strides(shape), 0}; }

std::optional<Shape> reshape_strides(const Strided& in, const Shape& shape) {
  const Shape& old_shape = in.shape;
  const Shape& old_strides = in.strides;
  Shape strides(shape.size());
  if (shape_numel(old_shape) == 0 || old_shape.empty()) return contiguous_strides(shape);
  // Walk both shapes from the innermost dim, matching chunks of old dims that are contiguous with
  // each other against runs of new dims with the same element count.
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_shape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_shape[tensor_d];
    bool chunk_ends = tensor_d == 0 || (old_shape[tensor_d - 1] != 1 &&
                                        old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
      strides[view_d] = view_numel * chunk_base_stride;
      view_numel *= shape[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (tensor_d > 0) {
      chunk_base_stride = old_strides[tensor_d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

std::optional<Strided> apply_view(const Strided& in, const Node& view) {
  Strided out = in;
  out.shape = view.shape;
  const Attrs& at = view.attrs;
  switch (view.op) {
    case Op::Reshape: {
      auto s = reshape_strides(in, view.shape);
      if (!s) return std::nullopt;
      out.strides = *s;
      return out;
    }
    case Op::Permute:
      for (size_t i = 0; i < at.dims.size(); ++i) out.strides[i] = in.strides[at.dims[i]];
      return out;
    case Op::Expand:
      for (size_t i = 0; i < view.shape.size(); ++i)
        if (in.shape[i] != view.shape[i]) out.strides[i] = 0;
      return out;
    case Op::Slice:
      if (view.shape[at.axis] > 0) out.offset += at.start * in.strides[at.axis];
      // Along a dim of one element the stride is never used, and a step past the dim (2^62)
      // would overflow it; with two or more, step times stride stays inside the input.
      if (view.shape[at.axis] > 1) out.strides[at.axis] *= at.step;
      return out;
    case Op::Diagonal: {
      size_t d1 = static_cast<size_t>(at.dims[0]), d2 = static_cast<size_t>(at.dims[1]);
      out.strides.clear();
      for (size_t d = 0; d < in.strides.size(); ++d)
        if (d != d1 && d != d2) out.strides.push_back(in.strides[d]);
      out.strides.push_back(in.strides[d1] + in.strides[d2]);
      if (view.shape.back() > 0) out.offset += at.start >= 0 ? at.start * in.strides[d2] : -at.start * in.strides[d1];
      return out;
    }
    default: return std::nullopt;
  }
}

std::pair<Node*, std::vector<Node*>> resolve_views(Node* node) {
  std::vector<Node*> chain;
  while (!node->realized() && is_view(node->op)) {
    chain.push_back(node);
    node = node->inputs[0].get();
  }
  return {node, std::vector<Node*>(chain.rbegin(), chain.rend())};
}

std::optional<Strided> view_of_chain(const Node& source, const std::vector<Node*>& chain) {
  Strided s = source.realized() ? Strided{source.shape, source.layout.strides, source.layout.offset}
                                : contiguous_view(source.shape);
  for (const Node* v : chain) {
    auto next = apply_view(s, *v);
    if (!next) return std::nullopt;
    s = std::move(*next);
  }
  return s;
}

namespace {

// Whether the values of `index` (a view of a realized storage whose value range the host knows)
// lie in [-size, size).
bool index_known_in(const NodePtr& index_input, int64_t size) {
  const Node* index = resolve_views(const_cast<Node*>(index_input.get())).first;
  rt::Storage::ValueRange r;
  if (!index->realized() || !index->storage->value_range(&r)) return false;
  return r.lo >= -size && r.hi < size;
}

}  // namespace

bool gather_indices_known_in_range(const Node& gather) {
  if (gather.op != Op::Gather || gather.inputs.size() < 2) return false;
  const size_t axis = static_cast<size_t>(gather.attrs.axis);
  const Shape& source = gather.inputs[0]->shape;
  return axis < source.size() && index_known_in(gather.inputs[1], source[axis]);
}

bool scatter_indices_known_in_range(const Node& scatter) {
  if ((scatter.op != Op::ScatterAdd && scatter.op != Op::Scatter) || scatter.inputs.size() < 2) return false;
  const size_t axis = static_cast<size_t>(scatter.attrs.axis);
  return axis < scatter.shape.size() && index_known_in(scatter.inputs[1], scatter.shape[axis]);
}

}  // namespace lf::ir
