#include "codegen/fuse/nearest.h"

#include <cstdio>
#include <optional>
#include <string>
#include <unordered_map>

#include "codegen/ir/view.h"

namespace lf::fuse {
namespace {

using ir::Node;
using ir::NodePtr;
using ir::Op;

// The rank-2 value that `v` ([N, K, D]) reads through its views, element (i, j, e) at row
// `points ? i : j`, column e; null when it reads anything else.
NodePtr rows_of(const NodePtr& v, bool points) {
  auto [src, chain] = ir::resolve_views(v.get());
  if (chain.empty() || src->rank() != 2 || src->shape[1] != v->shape[2]) return nullptr;
  std::optional<ir::Strided> s = ir::Strided{src->shape, ir::contiguous_strides(src->shape), 0};
  for (const Node* view : chain)
    if (s) s = ir::apply_view(*s, *view);
  if (!s || s->offset != 0) return nullptr;
  const int64_t d = src->shape[1];
  const int64_t row = points ? 0 : 1, other = points ? 1 : 0;
  if (src->shape[0] != v->shape[static_cast<size_t>(row)]) return nullptr;
  auto stride_is = [&](int64_t dim, int64_t want) {
    return v->shape[static_cast<size_t>(dim)] == 1 || s->strides[static_cast<size_t>(dim)] == want;
  };
  if (!stride_is(row, d) || !stride_is(other, 0) || !stride_is(2, 1)) return nullptr;
  return chain.front()->inputs[0];
}

}  // namespace

int rewrite_nearest(const std::vector<ir::Node*>& order, int log_level, std::vector<ir::NodePtr>* keep) {
  std::unordered_map<const Node*, int> readers;  // edges from pending nodes of the flush
  for (Node* n : order)
    if (!n->realized())
      for (const NodePtr& in : n->inputs) ++readers[in.get()];
  int rewritten = 0;
  for (Node* a : order) {
    if (!ir::pending(a, Op::ArgMin) || a->attrs.dims != std::vector<int64_t>{1}) continue;
    const NodePtr r = a->inputs[0];  // a copy: a's inputs are replaced below
    if (!ir::pending(r.get(), Op::Sum) || r->rank() != 2 || r->attrs.keepdim || r->attrs.dims != std::vector<int64_t>{2})
      continue;
    Node* e = r->inputs[0].get();
    const bool square = ir::pending(e, Op::Square) || (ir::pending(e, Op::Mul) && e->inputs[0] == e->inputs[1]);
    if (!square || !ir::pending(e->inputs[0].get(), Op::Sub)) continue;
    Node* s = e->inputs[0].get();
    if (s->rank() != 3 || !is_floating(s->dtype) || e->dtype != s->dtype || r->dtype != s->dtype) continue;
    NodePtr x, c;
    for (size_t side = 0; side < 2 && !x; ++side) {
      NodePtr px = rows_of(s->inputs[side], true), pc = rows_of(s->inputs[1 - side], false);
      if (px && pc && px->dtype == s->dtype && pc->dtype == s->dtype) {
        x = px;
        c = pc;
      }
    }
    if (!x) continue;
    // The distances and what makes them are the argmin's alone: else the rewrite would drop a
    // value someone reads.
    std::string why;
    for (const Node* n : {r.get(), e, s}) {
      if (n->user_refs.load(std::memory_order_relaxed) > 0) why = ir::node_name(*n) + " is held by a handle";
      else if (readers[n] != (n == s && e->op == Op::Mul ? 2 : 1)) why = ir::node_name(*n) + " is also read by another op";
      if (!why.empty()) break;
    }
    if (!why.empty()) {
      if (log_level >= 1)
        std::fprintf(stderr, "[lazyfuse] nearest not rewritten at %s: %s\n", ir::node_name(*a).c_str(), why.c_str());
      continue;
    }
    if (log_level >= 1)
      std::fprintf(stderr, "[lazyfuse] nearest rewritten at %s: argmin over %lld centers of the squared distances (%s)\n",
                   ir::node_name(*a).c_str(), static_cast<long long>(c->shape[0]), ir::node_name(*r).c_str());
    keep->push_back(r);  // unlinked: order still points at it and what it reads
    a->op = Op::Nearest;
    a->inputs = ir::Inputs{x, c};
    a->attrs = ir::Attrs{};
    ++rewritten;
  }
  return rewritten;
}

}  // namespace lf::fuse
