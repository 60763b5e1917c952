#include "codegen/reference/nearest.h"

namespace lf::ir {

Value reference_nearest(const Node& node, const std::vector<Value>& in) {
  const Value& x = in[0];
  const Value& c = in[1];
  const int64_t n = x.shape[0], d = x.shape[1], k = c.shape[0];
  const DType t = x.dtype;
  // Each op as a node of its own (reference_op reads only the node's op, attributes, dtype and
  // shape), over the values of the one before.
  auto op = [&](Op o, DType dtype, Shape shape, const std::vector<Value>& args, Attrs attrs = {}) {
    NodePtr m = make_node(o, dtype, node.device, std::move(shape), {}, std::move(attrs));
    return reference_op(*m, args);
  };
  Value xs = op(Op::Expand, t, {n, k, d}, {op(Op::Reshape, t, {n, 1, d}, {x})});
  Value cs = op(Op::Expand, t, {n, k, d}, {op(Op::Reshape, t, {1, k, d}, {c})});
  Value sq = op(Op::Square, t, {n, k, d}, {op(Op::Sub, t, {n, k, d}, {xs, cs})});
  Attrs sum;
  sum.dims = {2};
  Value dist = op(Op::Sum, t, {n, k}, {sq}, sum);
  Attrs arg;
  arg.dims = {1};
  arg.keepdim = node.shape.size() == 2;
  return op(Op::ArgMin, DType::Int64, Shape(node.shape), {dist}, arg);
}

}  // namespace lf::ir
