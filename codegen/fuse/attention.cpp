// The attention rewrite (attention.h): a pattern match over the ops the frontend records.
// softmax(x, -1) is recorded as div(exp(sub(x, expand(max(x)))), expand(sum(exp(...)))) (frontend/
// ops_nn.cpp); the scores x are walked back from the softmax to the q @ k^T matmul through at most
// one mask and any number of scales; the probabilities' matmul with v becomes the attention node.
#include "codegen/fuse/attention.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "codegen/ir/attention.h"
#include "codegen/ir/half.h"
#include "codegen/ir/view.h"

namespace lf::fuse {
namespace {

using ir::Node;
using ir::Op;
using Params = ir::AttentionParams;

// `v` as the dtype holds it (a number operand is a full node of the op's dtype).
double round_to(DType d, double v) {
  switch (d) {
    case DType::Float32:
      return static_cast<float>(v);
    case DType::Float16:
      return Half::to_float(Half::from_float(static_cast<float>(v)));
    case DType::BFloat16:
      return BFloat16::to_float(BFloat16::from_float(static_cast<float>(v)));
    default:
      return v;
  }
}

// A number operand: a pending full node behind views (the frontend shares one per number).
std::optional<double> number(Node* n) {
  Node* s = ir::resolve_views(n).first;
  if (!ir::pending(s, Op::Full) || !is_floating(s->dtype)) return std::nullopt;
  ir::note_number_use(*s);  // the attention's scale: a plan requires it to repeat
  return round_to(s->dtype, s->attrs.value);
}

// `r` = max or sum of x over its last dim with keepdim, read by the softmax through broadcasts.
bool row_reduce_of(Node* read, Op op, const Node* x, std::vector<Node*>* internal) {
  auto [s, chain] = ir::resolve_views(read);
  if (!ir::pending(s, op) || s->inputs[0].get() != x || s->attrs.dims != std::vector<int64_t>{x->rank() - 1} ||
      !s->attrs.keepdim)
    return false;
  for (Node* v : chain)
    if (v->op != Op::Expand) return false;
  internal->push_back(s);
  internal->insert(internal->end(), chain.begin(), chain.end());
  return true;
}

// softmax(x, -1) = p: returns x, and the nodes of the softmax in *internal.
Node* softmax_input(Node* p, std::vector<Node*>* internal) {
  if (!ir::pending(p, Op::Div) || p->rank() < 2) return nullptr;
  Node* e = p->inputs[0].get();
  if (!ir::pending(e, Op::Exp)) return nullptr;
  Node* sub = e->inputs[0].get();
  if (!ir::pending(sub, Op::Sub)) return nullptr;
  Node* x = sub->inputs[0].get();
  if (!row_reduce_of(p->inputs[1].get(), Op::Sum, e, internal) ||
      !row_reduce_of(sub->inputs[1].get(), Op::Max, x, internal))
    return nullptr;
  internal->insert(internal->end(), {p, e, sub});
  return x;
}

struct Match {
  Node* qk = nullptr;
  Params params;
  ir::NodePtr mask;
  std::vector<Node*> internal;  // the scores' ops, from the softmax's input down to q @ k^T
  std::string why;              // a near miss: why the scores were not recognized
};

// An arange read along one of the scores' last two dims: which one (0: the query index i, 1: the
// key index j), its start and step. `outer`: the views from the comparison up to the scores' shape.
struct AxisArange {
  int axis = -1;
  double start = 0, step = 0;
};
std::optional<AxisArange> arange_axis(Node* in, const std::vector<Node*>& outer, int64_t rank) {
  auto [a, chain] = ir::resolve_views(in);
  if (!ir::pending(a, Op::Arange)) return std::nullopt;
  auto s = ir::view_of_chain(*a, chain);
  for (size_t i = 0; s && i < outer.size(); ++i) s = ir::apply_view(*s, *outer[i]);
  if (!s || s->offset != 0 || static_cast<int64_t>(s->strides.size()) != rank) return std::nullopt;
  AxisArange r;
  for (int64_t d = 0; d < rank; ++d) {
    if (s->shape[static_cast<size_t>(d)] == 1 || s->strides[static_cast<size_t>(d)] == 0) continue;
    if (d < rank - 2 || s->strides[static_cast<size_t>(d)] != 1 || r.axis >= 0) return std::nullopt;
    r.axis = static_cast<int>(d - (rank - 2));
  }
  ir::note_number_use(*a);  // the mask's shape: a plan requires it to repeat
  r.start = a->attrs.value;
  r.step = a->attrs.value2;
  // Integral values computed exactly in any dtype (below 2^24), so that i >= j is start + i * step
  // >= start + j * step.
  if (r.axis < 0 || r.step <= 0 || r.start != std::floor(r.start) || r.step != std::floor(r.step) ||
      std::fabs(r.start) + r.step * static_cast<double>(s->shape[static_cast<size_t>(rank - 2 + r.axis)]) > (1 << 24))
    return std::nullopt;
  return r;
}

// Whether the bool `cond` over the scores' shape is true exactly where j <= i (`keep_lower`) or
// exactly where j > i: a comparison of an arange along the query dim with the same arange along
// the key dim.
bool is_causal(Node* cond, bool keep_lower, int64_t rank) {
  auto [c, outer] = ir::resolve_views(cond);
  if (c->realized() || (c->op != Op::Ge && c->op != Op::Gt && c->op != Op::Le && c->op != Op::Lt)) return false;
  auto a = arange_axis(c->inputs[0].get(), outer, rank);
  auto b = arange_axis(c->inputs[1].get(), outer, rank);
  if (!a || !b || a->axis == b->axis || a->start != b->start || a->step != b->step) return false;
  Op op = c->op;
  if (a->axis == 1) {  // key OP query: turn it into query OP' key
    op = op == Op::Ge ? Op::Le : op == Op::Le ? Op::Ge : op == Op::Gt ? Op::Lt : Op::Gt;
  }
  return keep_lower ? op == Op::Ge : op == Op::Lt;  // i >= j, or its complement i < j
}

// Walks the scores back from `cur` (the softmax's input) to the q @ k^T matmul. Scales met before
// the mask (walking back) multiply after it.
bool parse_scores(Node* cur, bool mask_seen, Match* m) {
  if (cur->realized()) {
    m->why = "the scores are a value computed before this flush";
    return false;
  }
  double& scale = mask_seen ? m->params.scale : m->params.post_scale;
  switch (cur->op) {
    case Op::Cast:
      // The 16-bit floats' arithmetic is recorded as float32 between casts (x * s: cast, mul,
      // cast back); the kernels compute in float32 throughout.
      if (!is_floating(cur->dtype) || !is_floating(cur->inputs[0]->dtype)) break;
      m->internal.push_back(cur);
      return parse_scores(cur->inputs[0].get(), mask_seen, m);
    case Op::Matmul:
      m->qk = cur;
      m->internal.push_back(cur);
      return true;
    case Op::Mul:
      for (int side = 0; side < 2; ++side)
        if (auto c = number(cur->inputs[static_cast<size_t>(side)].get())) {
          scale *= *c;
          m->internal.push_back(cur);
          return parse_scores(cur->inputs[static_cast<size_t>(1 - side)].get(), mask_seen, m);
        }
      m->why = ir::node_name(*cur) + " multiplies the scores by a tensor, not a number";
      return false;
    case Op::Div:
      if (auto c = number(cur->inputs[1].get())) {
        scale /= *c;
        m->internal.push_back(cur);
        return parse_scores(cur->inputs[0].get(), mask_seen, m);
      }
      m->why = ir::node_name(*cur) + " divides the scores by a tensor, not a number";
      return false;
    case Op::Add:
      if (mask_seen) {
        m->why = ir::node_name(*cur) + " is a second mask";
        return false;
      }
      for (int side = 0; side < 2; ++side) {  // either operand may be the scores
        Match saved = *m;
        m->params.mask = Params::kAdd;
        m->mask = cur->inputs[static_cast<size_t>(1 - side)];
        m->internal.push_back(cur);
        if (parse_scores(cur->inputs[static_cast<size_t>(side)].get(), true, m)) return true;
        std::string why = m->why;
        *m = std::move(saved);
        m->why = why;
      }
      return false;
    case Op::Where: {
      if (mask_seen) {
        m->why = ir::node_name(*cur) + " is a second mask";
        return false;
      }
      const double ninf = -std::numeric_limits<double>::infinity();
      auto a = number(cur->inputs[1].get()), b = number(cur->inputs[2].get());
      int scores = b && *b == ninf ? 1 : a && *a == ninf ? 2 : 0;
      if (scores == 0) {
        m->why = ir::node_name(*cur) + " fills masked scores with something other than -inf";
        return false;
      }
      bool keep = scores == 1;  // where(mask, scores, -inf): true keeps
      m->internal.push_back(cur);
      // Causal: masked tiles are skipped, which needs masked scores to stay -inf after the scale.
      if (m->params.post_scale > 0 && is_causal(cur->inputs[0].get(), keep, cur->rank())) {
        m->params.causal = true;
      } else {
        m->params.mask = keep ? Params::kKeep : Params::kDrop;
        m->mask = cur->inputs[0];
      }
      return parse_scores(cur->inputs[static_cast<size_t>(scores)].get(), true, m);
    }
    default:
      break;
  }
  m->why = ir::node_name(*cur) + " lies between the scores and the softmax";
  return false;
}

// Why the nodes of the pattern cannot go (a handle holds one, or a node outside reads one), or "".
std::string kept_elsewhere(const std::vector<Node*>& internal, const Node* out,
                           const std::unordered_map<const Node*, int>& readers) {
  std::unordered_set<const Node*> set(internal.begin(), internal.end());
  std::unordered_map<const Node*, int> inside;
  for (const Node* n : internal)
    for (const ir::NodePtr& in : n->inputs) ++inside[in.get()];
  for (const ir::NodePtr& in : out->inputs) ++inside[in.get()];
  for (const Node* n : internal) {
    if (n->user_refs.load(std::memory_order_relaxed) > 0) return ir::node_name(*n) + " is held by a handle";
    if (n == out) continue;
    auto r = readers.find(n);
    auto i = inside.find(n);
    if ((r == readers.end() ? 0 : r->second) != (i == inside.end() ? 0 : i->second))
      return ir::node_name(*n) + " is also read by another op";
  }
  return "";
}

// transpose(attention(q, k, v), -3, -2), the attention's only reader, becomes the attention itself
// with its heads last (AttentionParams::heads_last): a transformer merges its heads with
// o.transpose(1, 2).reshape({B, T, D}), and the reshape of the transpose needed a copy kernel; of the
// interleaved output it is a view. Returns how many were folded.
int fold_head_transposes(const std::vector<Node*>& order, const std::unordered_map<const Node*, int>& readers,
                         int log_level, std::vector<ir::NodePtr>* keep) {
  int folded = 0;
  for (Node* t : order) {
    if (!ir::pending(t, Op::Permute)) continue;
    Node* a = t->inputs[0].get();
    const int64_t r = a->rank();
    if (!ir::pending(a, Op::Attention) || r < 3 || a->user_refs.load(std::memory_order_relaxed) > 0) continue;
    auto it = readers.find(a);
    if (it == readers.end() || it->second != 1) continue;
    std::vector<int64_t> swap(static_cast<size_t>(r));
    std::iota(swap.begin(), swap.end(), 0);
    std::swap(swap[static_cast<size_t>(r - 3)], swap[static_cast<size_t>(r - 2)]);
    if (t->attrs.dims != swap) continue;
    ir::AttentionParams params = ir::AttentionParams::of(*a);
    if (params.heads_last) continue;
    params.heads_last = true;
    ir::NodePtr old = t->inputs[0];
    t->inputs = old->inputs;
    t->attrs = ir::Attrs{};
    params.store(&t->attrs);
    t->op = Op::Attention;
    keep->push_back(std::move(old));
    ++folded;
    if (log_level >= 1)
      std::fprintf(stderr, "[lazyfuse] attention at %s writes its heads interleaved (the transpose after it folded)\n",
                   ir::node_name(*t).c_str());
  }
  return folded;
}

}  // namespace

int rewrite_attention(const std::vector<ir::Node*>& order, int log_level, std::vector<ir::NodePtr>* keep) {
  std::unordered_map<const Node*, int> readers;  // edges from pending nodes of the flush
  bool any = false;
  for (Node* n : order) any |= n->op == Op::Matmul;
  if (!any) return 0;
  for (Node* n : order)
    for (const ir::NodePtr& in : n->inputs) ++readers[in.get()];
  int rewritten = 0;
  for (Node* mm : order) {
    if (!ir::pending(mm, Op::Matmul) || !is_floating(mm->dtype)) continue;
    std::vector<Node*> softmax;
    Node* x = softmax_input(mm->inputs[0].get(), &softmax);
    if (!x) continue;  // not softmax(...) @ v: nothing to say
    Match m;
    std::string why;
    if (!parse_scores(x, false, &m))
      why = m.why;
    else if (m.qk->dtype != mm->dtype)
      why = "the scores' dtype differs from the output's";
    if (why.empty()) {
      m.internal.insert(m.internal.end(), softmax.begin(), softmax.end());
      why = kept_elsewhere(m.internal, mm, readers);
    }
    if (!why.empty()) {
      if (log_level >= 1)
        std::fprintf(stderr, "[lazyfuse] attention not rewritten at %s: %s\n", ir::node_name(*mm).c_str(), why.c_str());
      continue;
    }
    const std::string mm_name = ir::node_name(*mm);
    ir::NodePtr q = m.qk->inputs[0], kt = m.qk->inputs[1], v = mm->inputs[1];
    const int64_t rank = kt->rank();
    ir::Attrs perm;
    perm.dims.resize(static_cast<size_t>(rank));
    std::iota(perm.dims.begin(), perm.dims.end(), 0);
    std::swap(perm.dims[static_cast<size_t>(rank - 2)], perm.dims[static_cast<size_t>(rank - 1)]);
    Shape ks = kt->shape;
    std::swap(ks[static_cast<size_t>(rank - 2)], ks[static_cast<size_t>(rank - 1)]);
    // k as [..., Tk, D]: a view back over the transposed operand (index math, never a copy).
    ir::NodePtr k = ir::make_node(Op::Permute, kt->dtype, kt->device, std::move(ks), {kt}, std::move(perm));
    keep->push_back(mm->inputs[0]);  // the probabilities, and through them the scores
    ir::Inputs inputs{q, k, v};
    if (m.params.has_mask()) inputs.push_back(m.mask);
    mm->inputs = std::move(inputs);
    mm->attrs = ir::Attrs{};
    m.params.store(&mm->attrs);
    mm->op = Op::Attention;
    ++rewritten;
    if (log_level >= 1) {
      static const char* kMask[] = {"none", "added", "bool (true keeps)", "bool (true masks)"};
      std::fprintf(stderr,
                   "[lazyfuse] attention recognized at %s: softmax(q @ k^T * %g + mask) * %g @ v, mask %s%s, "
                   "%zu ops in one attention node\n",
                   mm_name.c_str(), m.params.scale, m.params.post_scale, kMask[m.params.mask],
                   m.params.causal ? ", causal" : "", m.internal.size() + 1);
    }
  }
  if (rewritten > 0) rewritten += fold_head_transposes(order, readers, log_level, keep);
  return rewritten;
}

}  // namespace lf::fuse
