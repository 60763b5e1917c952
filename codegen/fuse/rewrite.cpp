// The fuser's rewrites before partitioning (fuser.h, insert_reshape_copies): views and remaps
// pushed below elementwise ops, copies below reshapes that cannot be viewed and below gathered or
// remapped generators.
#include <algorithm>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

#include "codegen/fuse/fuser.h"
#include "codegen/ir/view.h"

namespace lf::fuse {

namespace {

bool generator_only(const ir::Node* s, int depth = 12);

// Views pushed below elementwise ops (push_views_into_elementwise). Expand only over index math
// (elementwise ops over generators: a pooling's divisor, a mask from aranges): pushed below an op, a
// broadcast computes the op once per broadcast element instead of once, which costs a few integer
// ops there, where stopping at the broadcast stores the value and cuts its consumer from it.
bool pushable_view(const ir::Node& v) {
  if (v.realized()) return false;
  if (v.op == ir::Op::Slice || v.op == ir::Op::Permute || v.op == ir::Op::Reshape) return true;
  return v.op == ir::Op::Expand && !v.inputs[0]->realized() && generator_only(v.inputs[0].get());
}

// Whether elementwise `e` computes on a pending matmul's or conv2d's result (through at most
// `depth` elementwise ops of its shape): it then joins that anchor's epilogue, which writes it in
// the pass that writes the product anyway, and its views are read as strides (a GEMM operand's)
// or index math. Pushed below, the views would each need the product stored, then a kernel of
// their own (a transformer's qkv bias: three kernels after the GEMM instead of none).
bool feeds_on_anchor(const ir::Node& e, int depth) {
  for (const ir::NodePtr& in : e.inputs) {
    if (in->realized() || in->shape != e.shape) continue;
    if (in->op == ir::Op::Matmul || in->op == ir::Op::Conv2d) return true;
    if (depth > 0 && ir::is_elementwise(in->op) && feeds_on_anchor(*in, depth - 1)) return true;
  }
  return false;
}

// An elementwise value that no handle holds (so nothing else needs all of it written), whose
// inputs have its own shape (the frontend broadcasts them with views first), and which is not a
// matmul's or conv2d's epilogue (feeds_on_anchor).
bool pushable_source(const ir::Node& e) {
  if (e.realized() || !ir::is_elementwise(e.op) || e.user_refs.load(std::memory_order_relaxed) > 0) return false;
  for (const ir::NodePtr& in : e.inputs)
    if (in->shape != e.shape) return false;
  return !feeds_on_anchor(e, 4);
}

// Whether `s` is a leaf, or elementwise arithmetic over generators only (index math).
bool generator_only(const ir::Node* s, int depth) {
  if (s->realized() || ir::is_generator(s->op)) return true;
  if (depth == 0 || !ir::is_elementwise(s->op)) return false;
  for (const ir::NodePtr& in : s->inputs) {
    const ir::Node* i = ir::resolve_views(in.get()).first;
    if (i->realized() || !generator_only(i, depth - 1)) return false;
  }
  return true;
}

// A leaf, index math, a remap of memory at index math, or a chain of elementwise ops each over one
// such value and index math (f(pad(x)) for a stored x: a pooling window's producer, a cast of pad's
// constant border): cheap to compute again. Not an op over several remaps (a stencil step).
bool cheap(const ir::Node* s, int depth = 6) {
  if (generator_only(s)) return true;
  if (s->op != ir::Op::Remap) {
    if (depth == 0 || s->realized() || !ir::is_elementwise(s->op)) return false;
    const ir::Node* chain = nullptr;
    for (const ir::NodePtr& in : s->inputs) {
      const ir::Node* i = ir::resolve_views(in.get()).first;
      if (generator_only(i)) continue;
      if (chain) return false;
      chain = i;
    }
    return chain && cheap(chain, depth - 1);
  }
  const ir::Node* src = ir::resolve_views(s->inputs[0].get()).first;
  if (!src->realized() && !ir::is_generator(src->op)) return false;
  for (size_t k = 1; k < s->inputs.size(); ++k)
    if (!generator_only(ir::resolve_views(s->inputs[k].get()).first)) return false;
  return true;
}

// Whether a remap lies within `depth` elementwise ops below `s`.
bool cone_has_remap(const ir::Node* s, int depth) {
  if (s->realized()) return false;
  if (s->op == ir::Op::Remap) return true;
  if (depth == 0 || !ir::is_elementwise(s->op)) return false;
  for (const ir::NodePtr& in : s->inputs)
    if (cone_has_remap(ir::resolve_views(in.get()).first, depth - 1)) return true;
  return false;
}

// Cost rule, recomputation: a view or remap pushed into a value some other node also reads
// computes that value's cone again for the view (the push budget caps it). A shared value with a
// remap in its cone, over inputs that are not all cheap (leaves, index math, remaps of memory:
// pad's constant border), is a stencil's previous step: its slices are not pushed into it, since
// each step reading five slices of the last would recompute every earlier step five times over.
bool shared_and_deep(const ir::Node& e, const std::unordered_map<const ir::Node*, int>& uses) {
  auto it = uses.find(&e);
  if (it == uses.end() || it->second <= 1 || !cone_has_remap(&e, 6)) return false;
  for (const ir::NodePtr& in : e.inputs)
    if (!cheap(ir::resolve_views(in.get()).first)) return true;
  return false;
}

// Uses of each node by the nodes of `nodes` still in the graph (not unlinked into `keep`).
std::unordered_map<const ir::Node*, int> count_uses(const std::vector<ir::Node*>& nodes,
                                                    const std::vector<ir::NodePtr>& keep) {
  std::unordered_set<const ir::Node*> gone;
  for (const ir::NodePtr& k : keep) gone.insert(k.get());
  std::unordered_map<const ir::Node*, int> uses;
  for (const ir::Node* n : nodes)
    if (!gone.count(n))
      for (const ir::NodePtr& in : n->inputs) ++uses[in.get()];
  return uses;
}

// The most nodes one flush's pushes may add: the cone of elementwise ops under a view is copied
// (a value shared by several views' cones is copied once per view), so a huge cone stops being
// pushed where the budget ends and is stored there, as it was before.
constexpr int kPushBudget = 4096;

// Rewrites each pushable view of a pushable elementwise value, view(op(a, b)) -> op(view(a),
// view(b)), in place (the view node becomes the op node: its value is the same, and handles and
// users that hold it see the new form), recursively while the inputs are pushable too. The
// consumer then computes only the elements it reads, as index math, instead of the fuser cutting
// at a view-of-computed and storing the whole value first (issue 25, case 8). Returns the number of
// nodes rewritten; `made` gets the new view nodes, `keep` the nodes the rewrite unlinked (they stay
// alive until the caller has re-ordered the flush: `order` still points at them).
int push_views_into_elementwise(const std::vector<ir::Node*>& order, std::vector<ir::NodePtr>* made,
                                std::vector<ir::NodePtr>* keep) {
  int rewritten = 0, budget = kPushBudget;
  const auto uses = count_uses(order, *keep);
  for (ir::Node* v : order) {
    if (budget <= 0) break;
    if (!pushable_view(*v) || !pushable_source(*v->inputs[0]) || shared_and_deep(*v->inputs[0], uses)) continue;
    std::unordered_map<const ir::Node*, ir::NodePtr> view_of;  // input -> the view of it (a DAG stays one)
    const ir::Op view_op = v->op;  // v itself is rewritten first: keep what its copies are made of
    const ir::Attrs view_attrs = v->attrs;
    const Shape view_shape = v->shape;
    std::vector<ir::Node*> work{v};
    while (!work.empty()) {
      ir::Node* w = work.back();
      work.pop_back();
      ir::NodePtr e = w->inputs[0];
      if (!pushable_source(*e) || shared_and_deep(*e, uses)) continue;
      ir::Inputs views;
      for (const ir::NodePtr& a : e->inputs) {
        auto it = view_of.find(a.get());
        if (it == view_of.end()) {
          ir::NodePtr nv = ir::make_node(view_op, a->dtype, a->device, Shape(view_shape), {a}, ir::Attrs(view_attrs));
          it = view_of.emplace(a.get(), nv).first;
          made->push_back(nv);
          if (--budget > 0) work.push_back(nv.get());
        }
        views.push_back(it->second);
      }
      w->op = e->op;
      w->attrs = e->attrs;
      w->inputs = std::move(views);
      keep->push_back(std::move(e));
      ++rewritten;
    }
  }
  return rewritten;
}

// A remap of `a` at the indices of remap r (a has r's source's shape): a Full through views is
// the same number at every place, so it becomes a Full of r's shape instead of a remap.
ir::NodePtr remap_like(const ir::Node& r, const ir::NodePtr& a, std::vector<ir::NodePtr>* made) {
  ir::Node* s = ir::resolve_views(a.get()).first;
  ir::NodePtr n;
  if (!s->realized() && s->op == ir::Op::Full) {
    n = ir::make_node(ir::Op::Full, a->dtype, a->device, Shape(r.shape), {}, ir::Attrs(s->attrs));
  } else {
    ir::Inputs in{a};
    for (size_t k = 1; k < r.inputs.size(); ++k) in.push_back(r.inputs[k]);
    n = ir::make_node(ir::Op::Remap, a->dtype, a->device, Shape(r.shape), std::move(in), ir::Attrs(r.attrs));
  }
  made->push_back(n);
  return n;
}

// Remaps (pad, flip, roll, index_put's shifted value, ...) read their source from memory. Two
// rewrites keep them inside their consumer's kernel instead of storing the source first:
// remap(op(a, b)) -> op(remap(a), remap(b)) for an unheld elementwise source (index_put's
// 0.25 * (up + down + ...) becomes four remapped reads of u), and slice(remap(s, i)) ->
// remap(s', slice(i)) for an unheld remap (pad(u)[1:-1, 2:]: s' is s sliced along the dims the
// remap keeps). The index slices are then pushed into the index arithmetic like any view.
// Returns the number of nodes rewritten (each in place, like push_views_into_elementwise).
int push_remaps(const std::vector<ir::Node*>& order, std::vector<ir::NodePtr>* made, std::vector<ir::NodePtr>* keep) {
  int rewritten = 0, budget = kPushBudget;
  const auto uses = count_uses(order, *keep);
  std::vector<ir::Node*> work(order.rbegin(), order.rend());
  while (!work.empty() && budget > 0) {
    ir::Node* w = work.back();
    work.pop_back();
    if (w->realized()) continue;
    if (w->op == ir::Op::Slice && !w->inputs[0]->realized() && w->inputs[0]->op == ir::Op::Remap &&
        w->inputs[0]->user_refs.load(std::memory_order_relaxed) == 0) {
      ir::NodePtr r = w->inputs[0];
      const ir::Attrs sa = w->attrs;
      const auto& axes = r->attrs.dims;
      ir::NodePtr src = r->inputs[0];
      if (std::find(axes.begin(), axes.end(), sa.axis) == axes.end()) {
        Shape ss = src->shape;
        ss[static_cast<size_t>(sa.axis)] = w->shape[static_cast<size_t>(sa.axis)];
        src = ir::make_node(ir::Op::Slice, src->dtype, src->device, std::move(ss), {src}, ir::Attrs(sa));
        made->push_back(src);
      }
      ir::Inputs in{src};
      for (size_t k = 1; k < r->inputs.size(); ++k) {
        ir::NodePtr v = ir::make_node(ir::Op::Slice, r->inputs[k]->dtype, w->device, Shape(w->shape), {r->inputs[k]},
                                      ir::Attrs(sa));
        made->push_back(v);
        in.push_back(v);
      }
      w->op = ir::Op::Remap;
      w->attrs = r->attrs;
      w->inputs = std::move(in);
      keep->push_back(std::move(r));
      ++rewritten;
      --budget;
      work.push_back(w);  // its source may be elementwise now
      continue;
    }
    if (w->op != ir::Op::Remap || w->inputs[0]->op == ir::Op::Remap || !pushable_source(*w->inputs[0]) ||
        shared_and_deep(*w->inputs[0], uses))
      continue;
    ir::NodePtr e = w->inputs[0];
    ir::Inputs in;
    for (const ir::NodePtr& a : e->inputs) {
      ir::NodePtr n = remap_like(*w, a, made);
      if (n->op == ir::Op::Remap) work.push_back(n.get());
      in.push_back(std::move(n));
    }
    w->op = e->op;
    w->attrs = e->attrs;
    // The old inputs stay alive until the caller re-orders (`order` may point at an index that no
    // new remap reads: a remap of a full() reads no indices).
    for (const ir::NodePtr& old : w->inputs) keep->push_back(old);
    w->inputs = std::move(in);
    ++rewritten;
    budget -= static_cast<int>(w->inputs.size());
  }
  return rewritten;
}

bool reads_source_from_memory(const ir::Node& n) { return n.op == ir::Op::Gather || n.op == ir::Op::Remap; }

}  // namespace

int insert_reshape_copies(const std::vector<ir::Node*>& order, std::vector<ir::NodePtr>* unlinked) {
  std::vector<ir::NodePtr> made, keep;
  std::vector<ir::Node*> all = order;
  int inserted = 0;
  // Each kind of push makes work for the other (a slice pushed below pad's constant-border where
  // lands on a remap; a remap's index slices land on index arithmetic): a few rounds, until quiet.
  for (int round = 0; round < 4; ++round) {
    size_t before = made.size();
    int n = push_remaps(all, &made, &keep);
    for (size_t i = before; i < made.size(); ++i) all.push_back(made[i].get());
    before = made.size();
    n += push_views_into_elementwise(all, &made, &keep);
    for (size_t i = before; i < made.size(); ++i) all.push_back(made[i].get());
    inserted += n;
    if (n == 0) break;
  }
  for (ir::Node* n : all) {
    if (reads_source_from_memory(*n)) {
      // A gather reads its source from memory at data-dependent places: a generator (arange,
      // full, rand, through views) is written by a copy first. The gather holds the copy.
      ir::Node* s = ir::resolve_views(n->inputs[0].get()).first;
      if (!s->realized() && ir::is_generator(s->op)) {
        ir::Node* in = n->inputs[0].get();
        n->inputs[0] = ir::make_node(ir::Op::Copy, in->dtype, in->device, Shape(in->shape), {n->inputs[0]});
        ++inserted;
      }
      continue;
    }
    if (n->op != ir::Op::Reshape) continue;
    ir::Node* in = n->inputs[0].get();
    auto [source, chain] = ir::resolve_views(in);
    if (!is_view(in->op) && !in->realized()) continue;  // a computed value is contiguous
    auto s = ir::view_of_chain(*source, chain);
    if (s && ir::reshape_strides(*s, n->shape)) continue;
    n->inputs[0] = ir::make_node(ir::Op::Copy, in->dtype, in->device, Shape(in->shape), {n->inputs[0]});
    ++inserted;
  }
  if (unlinked) std::move(keep.begin(), keep.end(), std::back_inserter(*unlinked));
  return inserted;
}

}  // namespace lf::fuse
