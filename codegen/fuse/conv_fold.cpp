// The batch-norm fold (conv_fold.h): a pattern match over the ops the frontend records. batch_norm
// records x * expand(reshape(scale)) + expand(reshape(shift)) and conv2d's bias
// conv + expand(reshape(bias)) (frontend/ops_conv.cpp); the per-channel values are found through
// those views, and the new weights and bias are pending nodes the fuser runs as small kernels.
#include "codegen/fuse/conv_fold.h"

#include <cstdio>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "codegen/ir/view.h"

namespace lf::fuse {
namespace {

using ir::Node;
using ir::NodePtr;
using ir::Op;

// Whether `target` is reachable from `from` through pending nodes: a scale computed from the
// convolution's own output (y * mean(y)) cannot move into its weights.
bool depends_on(Node* from, const Node* target) {
  std::vector<Node*> stack{from};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    if (n == target) return true;
    if (n->realized() || !seen.insert(n).second) continue;
    for (const NodePtr& in : n->inputs) stack.push_back(in.get());
  }
  return false;
}

// The value of `channels` elements that `in` (an operand over the output's [N, O, H, W]) reads
// along dim 1 only, element i at channel i; null when `in` is anything else.
NodePtr channel_source(const NodePtr& in, int64_t channels, DType dtype, const Node* conv) {
  if (in->dtype != dtype || in->rank() != 4 || in->shape[1] != channels) return nullptr;
  auto [src, chain] = ir::resolve_views(in.get());
  // Reshapes keep the row-major order and expands only repeat: with O elements, all on dim 1,
  // channel i reads element i.
  for (Node* v : chain)
    if (v->op != Op::Reshape && v->op != Op::Expand) return nullptr;
  if (src->numel() != channels) return nullptr;
  auto s = ir::view_of_chain(*src, chain);
  if (!s) return nullptr;
  for (size_t d : {0, 2, 3})
    if (s->shape[d] != 1 && s->strides[d] != 0) return nullptr;
  if (channels > 1 && s->strides[1] == 0) return nullptr;
  NodePtr source = chain.empty() ? in : chain.front()->inputs[0];
  if (depends_on(source.get(), conv)) return nullptr;
  return source;
}

// conv2d(x, w), or conv2d(x, w) + b with b per channel.
struct BiasedConv {
  NodePtr conv;
  NodePtr bias;  // the per-channel source; null without a bias
};
std::optional<BiasedConv> biased_conv(const NodePtr& y) {
  if (ir::pending(y.get(), Op::Conv2d)) return BiasedConv{y, nullptr};
  if (!ir::pending(y.get(), Op::Add)) return std::nullopt;
  for (size_t side = 0; side < 2; ++side) {
    const NodePtr& c = y->inputs[side];
    if (!ir::pending(c.get(), Op::Conv2d) || c->dtype != y->dtype) continue;
    if (NodePtr b = channel_source(y->inputs[1 - side], c->shape[1], c->dtype, c.get())) return BiasedConv{c, b};
  }
  return std::nullopt;
}

NodePtr view(Op op, const NodePtr& in, Shape shape) {
  return ir::make_node(op, in->dtype, in->device, std::move(shape), {in});
}
NodePtr binary(Op op, const NodePtr& a, const NodePtr& b) {
  return ir::make_node(op, a->dtype, a->device, Shape(a->shape), {a, b});
}
NodePtr permute(const NodePtr& in, std::vector<int64_t> dims) {
  Shape shape(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) shape[i] = in->shape[static_cast<size_t>(dims[i])];
  ir::Attrs a;
  a.dims = std::move(dims);
  return ir::make_node(Op::Permute, in->dtype, in->device, std::move(shape), {in}, std::move(a));
}

// [O] -> [1, O, 1, 1] (a bias) or [O, 1, 1, 1] (a weights' scale).
NodePtr as_channels(const NodePtr& v, bool out_dim_first) {
  int64_t o = v->numel();
  return view(Op::Reshape, v, out_dim_first ? Shape{o, 1, 1, 1} : Shape{1, o, 1, 1});
}

struct Folder {
  const std::unordered_set<const Node*>& roots;
  std::unordered_map<const Node*, int>& readers;  // edges from pending nodes of the flush
  std::vector<NodePtr>* keep;
  int log_level;
  const ConvAsks& asks;

  // Why `n` (an intermediate the rewrite removes) must stay, or "".
  std::string kept(const Node* n) const {
    if (n->user_refs.load(std::memory_order_relaxed) > 0) return ir::node_name(*n) + " is held by a handle";
    if (roots.count(n)) return ir::node_name(*n) + " is realized by this flush";
    auto r = readers.find(n);
    if (r != readers.end() && r->second > 1) return ir::node_name(*n) + " is also read by another op";
    return "";
  }
  void unlink(Node* m) {
    for (const NodePtr& in : m->inputs) keep->push_back(in);
  }

  // m = y * s, y = conv2d(x, w) [+ b].
  bool fold_scale(Node* m) {
    for (size_t side = 0; side < 2; ++side) {
      const NodePtr& y = m->inputs[side];
      auto bc = biased_conv(y);
      if (!bc || bc->conv->dtype != m->dtype) continue;
      Node* conv = bc->conv.get();
      NodePtr s = channel_source(m->inputs[1 - side], conv->shape[1], m->dtype, conv);
      if (!s) continue;
      if (!bc->bias && asks.keep_scale && asks.keep_scale(*conv)) {
        if (log_level >= 1)
          std::fprintf(stderr, "[lazyfuse] batch norm kept out of %s's filter at %s: the convolution's call scales in float32\n",
                       ir::node_name(*conv).c_str(), ir::node_name(*m).c_str());
        return false;
      }
      std::string why = kept(y.get());
      if (why.empty() && bc->bias) why = kept(conv);
      if (why.empty() && conv->numel() == 0) why = "its output is empty";
      if (!why.empty()) {
        if (log_level >= 1)
          std::fprintf(stderr, "[lazyfuse] batch norm not folded into %s at %s: %s\n", ir::node_name(*conv).c_str(),
                       ir::node_name(*m).c_str(), why.c_str());
        return false;
      }
      const NodePtr& w = conv->inputs[1];
      NodePtr scale = view(Op::Expand, as_channels(s, true), Shape(w->shape));
      NodePtr w2;
      if (asks.reads_krsc && asks.reads_krsc(*conv)) {
        // Computed as [O, kh, kw, C] into a copy (always contiguous, and never a view's to push
        // through: rewrite.cpp), i.e. KRSC memory, and viewed back as OIHW: the GPU's convolution
        // takes it as it is (exec/conv.cpp), with no transform each call.
        NodePtr krsc = binary(Op::Mul, permute(w, {0, 2, 3, 1}), permute(scale, {0, 2, 3, 1}));
        w2 = permute(view(Op::Copy, krsc, Shape(krsc->shape)), {0, 3, 1, 2});
      } else {
        w2 = binary(Op::Mul, w, scale);
      }
      unlink(m);
      if (!bc->bias) {
        // m becomes the convolution itself.
        ir::Inputs inputs{conv->inputs[0], w2};
        m->attrs = conv->attrs;
        m->inputs = std::move(inputs);
        m->op = Op::Conv2d;
      } else {
        NodePtr c2 = ir::make_node(Op::Conv2d, conv->dtype, conv->device, Shape(conv->shape), {conv->inputs[0], w2},
                                   ir::Attrs(conv->attrs));
        NodePtr b2 = binary(Op::Mul, as_channels(bc->bias, false), as_channels(s, false));
        readers[c2.get()] = 1;
        m->inputs = ir::Inputs{c2, view(Op::Expand, b2, Shape(m->shape))};
        m->attrs = ir::Attrs{};
        m->op = Op::Add;
      }
      if (log_level >= 1)
        std::fprintf(stderr, "[lazyfuse] batch norm folded into %s at %s: weights scaled per out-channel%s\n",
                     ir::node_name(*conv).c_str(), ir::node_name(*m).c_str(), bc->bias ? ", bias b * s" : "");
      return true;
    }
    return false;
  }

  // a = (conv2d(x, w) + b) + t.
  bool merge_bias(Node* a) {
    for (size_t side = 0; side < 2; ++side) {
      const NodePtr& y = a->inputs[side];
      auto bc = biased_conv(y);
      if (!bc || !bc->bias || y->dtype != a->dtype) continue;
      NodePtr t = channel_source(a->inputs[1 - side], y->shape[1], a->dtype, bc->conv.get());
      if (!t) continue;
      std::string why = kept(y.get());
      if (!why.empty()) {
        if (log_level >= 1)
          std::fprintf(stderr, "[lazyfuse] bias adds not merged into %s at %s: %s\n", ir::node_name(*bc->conv).c_str(),
                       ir::node_name(*a).c_str(), why.c_str());
        return false;
      }
      NodePtr b2 = binary(Op::Add, as_channels(bc->bias, false), as_channels(t, false));
      unlink(a);
      a->inputs = ir::Inputs{bc->conv, view(Op::Expand, b2, Shape(a->shape))};
      if (log_level >= 1)
        std::fprintf(stderr, "[lazyfuse] batch norm shift merged into %s's bias at %s\n", ir::node_name(*bc->conv).c_str(),
                     ir::node_name(*a).c_str());
      return true;
    }
    return false;
  }
};

}  // namespace

int fold_conv_affine(const std::vector<ir::Node*>& order, const std::vector<ir::Node*>& roots, int log_level,
                     std::vector<ir::NodePtr>* keep, const ConvAsks& asks) {
  bool any = false;
  for (Node* n : order) any |= n->op == Op::Conv2d;
  if (!any) return 0;
  std::unordered_map<const Node*, int> readers;
  for (Node* n : order)
    for (const NodePtr& in : n->inputs) ++readers[in.get()];
  std::unordered_set<const Node*> root_set(roots.begin(), roots.end());
  Folder f{root_set, readers, keep, log_level, asks};
  int folded = 0;
  // In order, so that a multiply folded into an add (conv + b * s) is seen by the add after it.
  for (Node* n : order) {
    if (n->realized() || n->rank() != 4 || !is_floating(n->dtype)) continue;
    if (n->op == Op::Mul)
      folded += f.fold_scale(n);
    else if (n->op == Op::Add)
      folded += f.merge_bias(n);
  }
  return folded;
}

}  // namespace lf::fuse
