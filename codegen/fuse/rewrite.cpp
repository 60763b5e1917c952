// The fuser's rewrites before partitioning (fuser.h, insert_reshape_copies): views and remaps
// pushed below elementwise ops, copies below reshapes that cannot be viewed and below gathered or
// remapped generators.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

#include "codegen/fuse/fuser.h"
#include "codegen/ir/view.h"

namespace lf::fuse {

namespace {

ir::NodePtr int64_full(int64_t v, const Shape& shape, Device device, std::vector<ir::NodePtr>* made) {
  ir::Attrs a;
  a.value = static_cast<double>(v);
  a.ivalue = v;
  ir::NodePtr n = ir::make_node(ir::Op::Full, DType::Int64, device, Shape(shape), {}, std::move(a));
  made->push_back(n);
  return n;
}

ir::NodePtr binary(ir::Op op, DType dtype, const ir::NodePtr& a, const ir::NodePtr& b, std::vector<ir::NodePtr>* made) {
  ir::NodePtr n = ir::make_node(op, dtype, a->device, Shape(a->shape), {a, b});
  made->push_back(n);
  return n;
}

// The coordinate along `axis` of every element of `shape`: an int64 arange viewed along it.
ir::NodePtr coordinate(const Shape& shape, size_t axis, Device device, std::vector<ir::NodePtr>* made) {
  ir::Attrs a;
  a.value2 = 1;
  ir::NodePtr r = ir::make_node(ir::Op::Arange, DType::Int64, device, Shape{shape[axis]}, {}, std::move(a));
  Shape along(shape.size(), 1);
  along[axis] = shape[axis];
  ir::NodePtr v = ir::make_node(ir::Op::Reshape, DType::Int64, device, std::move(along), {r});
  ir::NodePtr e = ir::make_node(ir::Op::Expand, DType::Int64, device, Shape(shape), {v});
  made->insert(made->end(), {r, v, e});
  return e;
}

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
  // A copy makes a contiguous buffer on purpose (`contiguous()`, the batch-norm fold's KRSC
  // filter): a view of it stays a view of that buffer.
  if (e.realized() || !ir::is_elementwise(e.op) || e.op == ir::Op::Copy || e.user_refs.load(std::memory_order_relaxed) > 0)
    return false;
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

// An int64 arange viewed along one dim of r's source, a + b * c[dim] (index math's coordinates:
// cat's and pad's `i`, sliced or stepped), remapped by r: a + b * (the index r reads along dim),
// or the same expression over r's shape when r does not remap dim. Null for any other node.
ir::NodePtr remapped_coordinate(const ir::Node& r, const ir::Node& s, const std::vector<ir::Node*>& chain,
                                std::vector<ir::NodePtr>* made) {
  if (s.realized() || s.op != ir::Op::Arange || s.dtype != DType::Int64) return nullptr;
  ir::note_number_use(s);  // folded into the nodes made below: a plan requires it to repeat
  const double start = s.attrs.value, step = s.attrs.value2;
  constexpr double kExact = 9007199254740992.0;  // 2^53: integers up to here are exact doubles
  if (start != std::floor(start) || step != std::floor(step) || std::abs(start) > kExact || std::abs(step) > kExact)
    return nullptr;
  std::optional<ir::Strided> v = ir::view_of_chain(s, chain);
  if (!v) return nullptr;
  int64_t dim = -1;
  for (size_t d = 0; d < v->shape.size(); ++d) {
    if (v->shape[d] == 1 || v->strides[d] == 0) continue;
    if (dim >= 0) return nullptr;
    dim = static_cast<int64_t>(d);
  }
  // The element at c is start + step * (offset + stride * c[dim]) = a + b * c[dim].
  const int64_t a = static_cast<int64_t>(start) + static_cast<int64_t>(step) * v->offset;
  const int64_t b = dim < 0 ? 0 : static_cast<int64_t>(step) * v->strides[static_cast<size_t>(dim)];
  if (dim < 0) return int64_full(a, r.shape, r.device, made);
  const auto& axes = r.attrs.dims;
  auto it = std::find(axes.begin(), axes.end(), dim);
  ir::NodePtr c;
  if (it == axes.end()) {
    c = coordinate(r.shape, static_cast<size_t>(dim), r.device, made);
  } else {
    c = r.inputs[static_cast<size_t>(it - axes.begin()) + 1];
    if (c->dtype != DType::Int64) return nullptr;
  }
  if (b != 1) c = binary(ir::Op::Mul, DType::Int64, c, int64_full(b, r.shape, r.device, made), made);
  if (a != 0) c = binary(ir::Op::Add, DType::Int64, c, int64_full(a, r.shape, r.device, made), made);
  return c;
}

// A remap of `a` at the indices of remap r (a has r's source's shape): a Full through views is
// the same number at every place, so it becomes a Full of r's shape instead of a remap; a
// coordinate becomes the index r reads (remapped_coordinate).
ir::NodePtr remap_like(const ir::Node& r, const ir::NodePtr& a, std::vector<ir::NodePtr>* made) {
  auto [s, chain] = ir::resolve_views(a.get());
  if (ir::NodePtr c = remapped_coordinate(r, *s, chain, made)) return c;
  ir::NodePtr n;
  if (!s->realized() && s->op == ir::Op::Full) {
    ir::note_number_use(*s);  // copied into a node of its own: a plan requires it to repeat
    n = ir::make_node(ir::Op::Full, a->dtype, a->device, Shape(r.shape), {}, ir::Attrs(s->attrs));
  } else {
    ir::Inputs in{a};
    for (size_t k = 1; k < r.inputs.size(); ++k) in.push_back(r.inputs[k]);
    n = ir::make_node(ir::Op::Remap, a->dtype, a->device, Shape(r.shape), std::move(in), ir::Attrs(r.attrs));
  }
  made->push_back(n);
  return n;
}

// A remap of a pending remap that no handle holds reads the inner one's source directly
// (compose), instead of the inner one being stored first.
bool composable(const ir::Node& inner) {
  return !inner.realized() && inner.op == ir::Op::Remap && inner.user_refs.load(std::memory_order_relaxed) == 0;
}

// remap(remap(s, j at dims A), k at dims B) -> remap(s, remap(j, k) at A, k at B - A): the outer
// remap reads the inner one at its indices k, and the inner one reads s at j there.
void compose(ir::Node* w, std::vector<ir::NodePtr>* made, std::vector<ir::NodePtr>* keep, std::vector<ir::Node*>* work) {
  ir::NodePtr inner = w->inputs[0];
  const auto& a_dims = inner->attrs.dims;
  ir::Attrs attrs = inner->attrs;
  ir::Inputs in{inner->inputs[0]};
  for (size_t k = 1; k < inner->inputs.size(); ++k) {
    ir::NodePtr index = remap_like(*w, inner->inputs[k], made);
    if (index->op == ir::Op::Remap) work->push_back(index.get());  // pushed into the index math next
    in.push_back(std::move(index));
  }
  for (size_t k = 0; k < w->attrs.dims.size(); ++k) {
    int64_t d = w->attrs.dims[k];
    if (std::find(a_dims.begin(), a_dims.end(), d) != a_dims.end()) continue;
    attrs.dims.push_back(d);
    in.push_back(w->inputs[k + 1]);
  }
  for (const ir::NodePtr& old : w->inputs) keep->push_back(old);
  w->attrs = std::move(attrs);
  w->inputs = std::move(in);
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
    if (w->op == ir::Op::Remap && composable(*w->inputs[0])) {
      compose(w, made, keep, &work);
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

namespace {

// Whether cat `n` becomes index math (inline_cats).
bool inlinable_cat(const ir::Node& n) {
  if (n.op != ir::Op::Cat || n.realized() || n.numel() == 0) return false;
  size_t parts = 0;
  bool all_in_memory = true;
  for (const ir::NodePtr& in : n.inputs) {
    if (in->numel() == 0) continue;
    ++parts;
    all_in_memory = all_in_memory && ir::resolve_views(in.get()).first->realized();
  }
  const bool held = n.user_refs.load(std::memory_order_relaxed) > 0;
  return parts <= kMaxInlineCatParts && !(held && all_in_memory);
}

}  // namespace

int inline_cats(const std::vector<ir::Node*>& order) {
  int rewritten = 0;
  std::vector<ir::NodePtr> made;
  for (ir::Node* w : order) {
    if (!inlinable_cat(*w)) continue;
    const size_t axis = static_cast<size_t>(w->attrs.axis);
    ir::NodePtr i = coordinate(w->shape, axis, w->device, &made);
    // Each part's remap at clamp(i - start, 0, size - 1), and where it starts.
    std::vector<std::pair<ir::NodePtr, int64_t>> parts;
    int64_t start = 0;
    for (const ir::NodePtr& in : w->inputs) {
      const int64_t size = in->shape[axis];
      if (size == 0) continue;
      ir::NodePtr j = i;
      if (start > 0) {
        j = binary(ir::Op::Sub, DType::Int64, i, int64_full(start, w->shape, w->device, &made), &made);
        j = binary(ir::Op::Maximum, DType::Int64, j, int64_full(0, w->shape, w->device, &made), &made);
      }
      if (start + size < w->shape[axis])
        j = binary(ir::Op::Minimum, DType::Int64, j, int64_full(size - 1, w->shape, w->device, &made), &made);
      ir::Attrs a;
      a.dims = {static_cast<int64_t>(axis)};
      ir::NodePtr r = ir::make_node(ir::Op::Remap, w->dtype, w->device, Shape(w->shape), {in, j}, std::move(a));
      made.push_back(r);
      parts.emplace_back(std::move(r), start);
      start += size;
    }
    // where(i < start_1, part_0, where(i < start_2, part_1, ... part_last)); the outermost is w.
    ir::NodePtr rest = parts.back().first;
    for (size_t k = parts.size() - 1; k-- > 1;) {
      ir::NodePtr below = binary(ir::Op::Lt, DType::Bool, i, int64_full(parts[k + 1].second, w->shape, w->device, &made), &made);
      ir::NodePtr n = ir::make_node(ir::Op::Where, w->dtype, w->device, Shape(w->shape), {below, parts[k].first, rest});
      made.push_back(n);
      rest = std::move(n);
    }
    if (parts.size() == 1) {
      w->op = ir::Op::Remap;
      w->attrs = parts[0].first->attrs;
      w->inputs = parts[0].first->inputs;
    } else {
      ir::NodePtr below = binary(ir::Op::Lt, DType::Bool, i, int64_full(parts[1].second, w->shape, w->device, &made), &made);
      w->op = ir::Op::Where;
      w->attrs = ir::Attrs{};
      w->inputs = {below, parts[0].first, rest};
    }
    ++rewritten;
  }
  return rewritten;
}

namespace {

// Whether a pending value may be stored channels-last once computed: it reads, at any depth within
// the flush, a channels-last buffer or a convolution (whose output a GPU writes NHWC, and the
// pointwise kernels after it keep: lower.h's out_strides). A superset of what the lowering and the
// backends decide, for the reshape check below, which otherwise takes a computed value to be
// contiguous. A copy's own output is contiguous, but values computed from it may not be: fused
// with the copy, they read the channels-last buffer the copy reads, and the lowering stores them
// in its order (seed 1405269: tan(contiguous(x)) of a channels-last x, then reshaped).
class ChannelsLastReach {
 public:
  bool operator()(ir::Node* root) { return !(root->op == ir::Op::Copy && !root->realized()) && reads(root); }

 private:
  // Whether n's expression reads, at any depth, a channels-last buffer or a convolution.
  bool reads(ir::Node* root) {
    std::vector<std::pair<ir::Node*, size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      ir::Node* n = stack.back().first;
      size_t i = stack.back().second;
      if (memo_.count(n)) {
        stack.pop_back();
      } else if (n->realized() || n->op == ir::Op::Conv2d) {
        memo_[n] = n->op == ir::Op::Conv2d || ir::is_channels_last(n->shape, n->layout);
        stack.pop_back();
      } else if (i < n->inputs.size()) {
        ++stack.back().second;
        stack.emplace_back(n->inputs[i].get(), 0);
      } else {
        bool any = false;
        for (const ir::NodePtr& in : n->inputs) any = any || memo_[in.get()];
        memo_[n] = any;
        stack.pop_back();
      }
    }
    return memo_[root];
  }

  std::unordered_map<const ir::Node*, bool> memo_;
};

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
  ChannelsLastReach channels_last;
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
    auto s = ir::view_of_chain(*source, chain);  // a computed source taken to be contiguous
    bool viewable = s && ir::reshape_strides(*s, n->shape);
    if (viewable && !source->realized() && source->shape.size() == 4 && channels_last(source)) {
      // ... unless it may be computed channels-last: then the reshape must view that layout too.
      std::optional<ir::Strided> cl = ir::Strided{source->shape, ir::channels_last_strides(source->shape), 0};
      for (const ir::Node* v : chain)
        if (cl) cl = ir::apply_view(*cl, *v);
      viewable = cl && ir::reshape_strides(*cl, n->shape);
    }
    if (viewable) continue;
    n->inputs[0] = ir::make_node(ir::Op::Copy, in->dtype, in->device, Shape(in->shape), {n->inputs[0]});
    ++inserted;
  }
  if (unlinked) std::move(keep.begin(), keep.end(), std::back_inserter(*unlinked));
  return inserted;
}

}  // namespace lf::fuse
