// The fuser (fuser.h lists the fusion rules). Its cost rule: fusing is never meant to be slower
// than not fusing; where it would be, the fuser cuts, and every such cut is a named CutReason.
// What it weighs, per decision:
// - Bytes saved: a value kept inside a group is neither written nor read back; this is why nodes
//   join their producers' group by default, and why a value the user holds is still written once.
// - Parallelism: pointwise kernels split over threads by elements, row kernels by rows, and a row
//   kernel whose outputs are all per-row values splits long rows (cpu/backend.cpp launch()). A
//   row kernel with element outputs and fewer rows than threads runs on `rows` threads; measured
//   on 2 cores, fused still won there (softmax of one long row), so that makes no cut yet.
// - Vectorization and fixed costs per row: a row kernel loops over each row (CPU: scalar loops
//   when rows are short; GPU: a block per row). Over rows of fewer than kShortRowElements
//   elements with at least kShortRowMinElements elements in all, a held element value (Monte Carlo
//   pi's xy = rand(n, 2)) makes the row kernel slower than a pointwise kernel plus a separate
//   reduction, so the reduction does not take a group that holds one, and a held element value
//   does not join such a row group (kShortRows). Unheld element values (var's x - mean) stay.
// - Recomputation: a row kernel computes its element values again in every pass that needs them
//   (one pass per reduction level, then the output pass). A reduction over values computed from
//   another reduction of the group is one level up; past kMaxRowLevels levels (top-k by repeated
//   max: level k recomputes k `where`s per element, k^2/2 in all) the next level starts a new
//   group, which reads the values stored by the last one (kRecompute).
// - Processors per row: a row kernel with element outputs or several reductions runs a row on one
//   processor (a GPU block; the CPU splits rows of per-row outputs only, and measured on 2 cores
//   a fused row kernel still won with one thread a row: Costs{} there). Where the backend says
//   such a kernel leaves its device idle (Costs::few_rows: `(x - x.mean()) / x.std()` of a whole
//   tensor, a solver's dot products over its vectors, on a GPU in one block), a row group over
//   that few long rows takes one reduction and per-row values only, which the backend splits
//   over blocks; element work before and after goes to pointwise kernels, and a second reduction
//   to a group of its own (kFewRows). Likewise where a backend runs rows that are strided in
//   memory (a reduction over a leading dim: logsumexp(x, {0}); over the last dim of a transposed
//   buffer: logsumexp(x.t(), {1})) well only as one reduction with per-row values
//   (Costs::strided_rows_one_reduction: the CPU's column blocks, which walk the contiguous kept
//   dim; a second level or an element output there made a row kernel that strode through memory
//   a row at a time, 10x slower than unfused, issue 51's sweep) (kStridedRows). The inputs'
//   strides decide, not the logical dims: logsumexp(x.t(), {0}) reads contiguous rows and fuses.
// - Registers and code size: a group stops at kMaxGroupNodes members and kMaxGroupLeaves inputs
//   (kTooLarge).
// The thresholds come from measurements recorded in bench/RESULTS.md ("Fusion cost rule").
#include "codegen/fuse/fuser.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "codegen/ir/view.h"

namespace lf::fuse {

const char* cut_reason_name(CutReason r) {
  switch (r) {
    case CutReason::kNoProducerGroup: return "no-producer-group";
    case CutReason::kFusionDisabled: return "fusion-disabled";
    case CutReason::kShapeMismatch: return "shape-mismatch";
    case CutReason::kViewOfComputed: return "view-of-computed";
    case CutReason::kDifferentReduction: return "different-reduction";
    case CutReason::kWouldCycle: return "would-cycle";
    case CutReason::kTooLarge: return "too-large";
    case CutReason::kHostOp: return "host-op";
    case CutReason::kGatherSource: return "gather-source";
    case CutReason::kShortRows: return "short-rows";
    case CutReason::kRecompute: return "recompute";
    case CutReason::kFewRows: return "few-rows";
    case CutReason::kStridedRows: return "strided-rows";
    case CutReason::kCount: break;
  }
  return "?";
}

namespace {

bool reads_source_from_memory(const ir::Node& n) { return n.op == ir::Op::Gather || n.op == ir::Op::Remap; }

using ir::Node;

struct Builder {
  const std::function<bool(const Node&)>& wanted;
  bool fusion;
  bool record_cuts;
  const CostsOf& costs;
  Partition p;
  std::vector<Group> groups;                     // by id (creation order)
  std::vector<std::unordered_set<int>> deps;     // by id: groups it reads from directly
  std::unordered_map<const Node*, int> gid;        // member -> group id
  std::unordered_set<const Node*> materialize;     // members read from outside their group
  std::vector<int> leaves;                         // by id: distinct leaf reads (approximate)
  std::unordered_map<const Node*, int> level;      // member -> reduction levels below it in its group
  // With Costs::few_rows: every node's readers (through views; a view only where it is held),
  // built from `order` when first asked.
  const std::vector<Node*>* order = nullptr;
  mutable std::unordered_map<const Node*, std::vector<const Node*>> readers_of;
  mutable bool readers_built = false;
  mutable std::vector<std::pair<Device, Costs>> costs_seen;  // costs(device), asked once a device

  const Costs& costs_for(Device device) const {
    for (const auto& [d, c] : costs_seen)
      if (d == device) return c;
    costs_seen.emplace_back(device, costs(device));
    return costs_seen.back().second;
  }

  int level_of(const Node* n) const {
    auto it = level.find(n);
    return it == level.end() ? 0 : it->second;
  }

  // Cost rule, parallelism and vectorization: rows this short run as scalar loops with a row's
  // fixed cost each (and, on a GPU, a block per row), so element outputs are cheaper written by a
  // pointwise kernel. Small tensors keep fusing: there a launch costs more than the rows.
  static bool short_rows(const Shape& full, const std::vector<int64_t>& rdims) {
    int64_t len = 1, numel = 1;
    for (size_t d = 0; d < full.size(); ++d) {
      numel *= full[d];
      if (std::binary_search(rdims.begin(), rdims.end(), static_cast<int64_t>(d))) len *= full[d];
    }
    return len < kShortRowElements && numel >= kShortRowMinElements;
  }

  // Costs::few_rows: whether rows of `rdims` over `full` are too few and long for a row kernel
  // that is not one reduction with per-row values (the backend's answer for `device`).
  bool few_rows(const Shape& full, const std::vector<int64_t>& rdims, Device device) const {
    int64_t len = 1, numel = 1;
    for (size_t d = 0; d < full.size(); ++d) {
      numel *= full[d];
      if (std::binary_search(rdims.begin(), rdims.end(), static_cast<int64_t>(d))) len *= full[d];
    }
    if (len < kFewRowsMinElements) return false;
    const int64_t limit = costs_for(device).few_rows;
    return limit > 0 && numel / len < limit;
  }

  // How the rows of `rdims` over `full` lie in memory, as one operand read in the element phase
  // sees them (kir::column_blocks asks the same of the lowered kernel's operands): along the last
  // kept dim of size > 1 unit-strided and along the last reduced dim not (kColumns: rows are
  // columns of memory), along the last reduced dim unit-strided (kRows), else kOther. Merged dims
  // take the stride of their innermost dim, so the last dims of size > 1 decide.
  enum class Layout { kColumns, kRows, kOther };
  static Layout layout_of(const Shape& strides, const Shape& full, const std::vector<int64_t>& rdims) {
    int kept = -1, reduced = -1;
    for (size_t d = 0; d < full.size(); ++d) {
      if (full[d] == 1) continue;
      (std::binary_search(rdims.begin(), rdims.end(), static_cast<int64_t>(d)) ? reduced : kept) = static_cast<int>(d);
    }
    if (kept < 0 || reduced < 0) return Layout::kOther;
    if (strides[reduced] == 1 && strides[kept] != 0) return Layout::kRows;
    if (strides[kept] == 1 && strides[reduced] != 1) return Layout::kColumns;
    return Layout::kOther;
  }

  // Counts the element-phase inputs of `m` read from memory outside group g (a buffer through its
  // views, or a value of another group, written contiguous) by their Layout over (full, rdims).
  // Generators and inline values are index arithmetic; row values have the row shape.
  void count_layouts(const Node* m, int g, const Shape& full, const std::vector<int64_t>& rdims, int& columns,
                     int& rows) const {
    for (const ir::NodePtr& in : m->inputs) {
      auto [source, chain] = ir::resolve_views(in.get());
      if (computed(source) && gid.at(source) == g) continue;
      if (!source->realized() && (!computed(source) || p.inline_nodes.count(source))) continue;
      auto view = ir::view_of_chain(*source, chain);
      if (!view || view->shape != full) continue;
      Layout l = layout_of(view->strides, full, rdims);
      columns += l == Layout::kColumns;
      rows += l == Layout::kRows;
    }
  }

  // Per group: its members' counts of count_layouts, for the rows they were counted over, and how
  // many members have been counted (each member once while the rows stay the same: linear).
  struct LayoutCounts {
    Shape full;
    std::vector<int64_t> rdims;
    size_t counted = 0;
    int columns = 0, rows = 0;
  };
  mutable std::vector<LayoutCounts> layout_counts;  // by group id

  // Costs::strided_rows_one_reduction: whether rows of `rdims` over `full` are strided in memory
  // on a backend that runs such rows well only as one reduction with per-row values (the CPU's
  // column blocks), over enough elements for it to matter. The memory decides: the inputs that
  // group g (-1: none) and `joining` read from memory, by their strides (a transposed buffer's
  // rows along its logical last dim are columns of memory; along its dim 0, rows). An input read
  // along rows rules it out (no column block runs then); where no input is read from memory
  // (generators only), element outputs are, contiguous: rows strided where the last dim is kept.
  bool strided_rows(const Shape& full, const std::vector<int64_t>& rdims, Device device, int g,
                    const Node* joining) const {
    if (!costs_for(device).strided_rows_one_reduction || full.empty() || rdims.empty()) return false;
    int64_t numel = 1;
    for (int64_t s : full) numel *= s;
    if (numel < kStridedRowsMinElements) return false;
    int columns = 0, rows = 0;
    if (g >= 0) {
      if (layout_counts.size() <= static_cast<size_t>(g)) layout_counts.resize(static_cast<size_t>(g) + 1);
      LayoutCounts& c = layout_counts[static_cast<size_t>(g)];
      if (c.full != full || c.rdims != rdims) c = LayoutCounts{full, rdims};
      const std::vector<Node*>& members = groups[static_cast<size_t>(g)].nodes;
      for (; c.counted < members.size(); ++c.counted) count_layouts(members[c.counted], g, full, rdims, c.columns, c.rows);
      columns = c.columns;
      rows = c.rows;
    }
    if (joining) count_layouts(joining, g, full, rdims, columns, rows);
    if (rows > 0) return false;
    if (columns > 0) return true;
    return rdims.back() != static_cast<int64_t>(full.size()) - 1 && full.back() >= 2;
  }

  // The rules that keep a row group to one reduction and per-row values: kFewRows, kStridedRows,
  // or kCount where neither applies. Over group g (-1: none) with `joining` (nullptr: none).
  CutReason one_reduction_rule(const Shape& full, const std::vector<int64_t>& rdims, Device device, int g,
                               const Node* joining) const {
    if (few_rows(full, rdims, device)) return CutReason::kFewRows;
    if (strided_rows(full, rdims, device, g, joining)) return CutReason::kStridedRows;
    return CutReason::kCount;
  }

  // Whether a member of group g is needed outside it once reduction `n` joins: held, or read by a
  // node of another group or not placed yet, other than `n` (a later reader cannot join: the
  // group is over few rows).
  bool escapes(int g, const Node* n) const {
    if (!readers_built) {
      readers_built = true;
      for (const Node* r : *order) {
        if (((ir::is_view(r->op) || ir::is_generator(r->op)) && !wanted(*r)) || p.inline_nodes.count(r))
          continue;  // never placed
        for (const ir::NodePtr& in : r->inputs) {
          std::vector<const Node*>& v = readers_of[ir::resolve_views(in.get()).first];
          if (v.empty() || v.back() != r) v.push_back(r);
        }
      }
    }
    for (const Node* m : groups[static_cast<size_t>(g)].nodes) {
      if (wanted(*m)) return true;
      auto it = readers_of.find(m);
      if (it == readers_of.end()) continue;
      for (const Node* r : it->second)
        if (r != n) {
          auto rg = gid.find(r);
          if (rg == gid.end() || rg->second != g) return true;
        }
    }
    return false;
  }

  // Whether a member of group g is held by the user (an element output once g is a row group).
  bool holds_element_output(int g) const {
    for (const Node* m : groups[static_cast<size_t>(g)].nodes)
      if (wanted(*m)) return true;
    return false;
  }

  bool computed(const Node* n) const { return !n->realized() && gid.count(n) > 0; }

  // Keepdim (rank kept, reduced dims 1) or squeezed (reduced dims removed) shape of a row value.
  static bool is_row_shape(const Group& g, const Shape& s) {
    Shape keep = g.full, squeezed;
    for (size_t d = 0; d < g.full.size(); ++d) {
      bool r = std::binary_search(g.rdims.begin(), g.rdims.end(), static_cast<int64_t>(d));
      if (r) keep[d] = 1;
      else squeezed.push_back(g.full[d]);
    }
    return s == keep || s == squeezed;
  }

  // Whether `chain` over row value `source` of group g broadcasts it back over g's full shape.
  static bool is_broadcast_back(const Group& g, const Node& source, const std::vector<Node*>& chain,
                                const Shape& user_shape) {
    if (g.kind != Group::Kind::Row || user_shape != g.full || chain.empty()) return false;
    auto s = ir::view_of_chain(source, chain);
    if (!s || s->offset != 0) return false;
    // Expected: the row value's contiguous strides on kept dims, 0 on reduced dims.
    Shape cs = ir::contiguous_strides(source.shape);
    bool keepdim = source.shape.size() == g.full.size();
    size_t k = 0;
    for (size_t d = 0; d < g.full.size(); ++d) {
      bool r = std::binary_search(g.rdims.begin(), g.rdims.end(), static_cast<int64_t>(d));
      int64_t expect = r ? 0 : keepdim ? cs[d] : cs[k];
      if (!r && !keepdim) ++k;
      if (g.full[d] != 1 && s->strides[d] != expect) return false;
    }
    return true;
  }

  static bool only_reshapes(const std::vector<Node*>& chain) {
    for (const Node* v : chain)
      if (v->op != ir::Op::Reshape) return false;
    return true;
  }

  int new_group(Group::Kind kind, Shape full, std::vector<int64_t> rdims) {
    Group g;
    g.kind = kind;
    g.id = static_cast<int>(groups.size());
    g.full = std::move(full);
    g.rdims = std::move(rdims);
    groups.push_back(std::move(g));
    deps.emplace_back();
    leaves.push_back(0);
    return static_cast<int>(groups.size()) - 1;
  }

  void add(int g, Node* n, bool row) {
    groups[g].nodes.push_back(n);
    gid[n] = g;
    p.row_phase[n] = row;
  }

  void depend(int g, int h) {
    if (g != h) deps[g].insert(h);
  }

  // Whether group `from` depends on `target` through any chain of reads. Only asked when a node
  // reads from two groups, so the walk stays off the common path.
  bool reaches(int from, int target) const {
    std::vector<int> stack{from};
    std::unordered_set<int> seen{from};
    while (!stack.empty()) {
      int g = stack.back();
      stack.pop_back();
      if (g == target) return true;
      for (int d : deps[g])
        if (seen.insert(d).second) stack.push_back(d);
    }
    return false;
  }

  // `n` starts a group of its own instead of joining group id `would_join` (-1: none). The group it
  // goes to is the next one made (every caller makes it right after).
  void cut(CutReason r, const Node* n = nullptr, int would_join = -1) {
    ++p.cuts[static_cast<size_t>(r)];
    if (record_cuts) p.cut_log.push_back({r, n, would_join, static_cast<int>(groups.size())});
  }

  // An input read from outside the reading group: its source must be written by its own group.
  void read_external(int g, Node* source) {
    if (!computed(source)) {
      // A pending full() is a launch parameter, not an operand: index arithmetic (pad, roll,
      // index_put) uses many numbers and would otherwise fill the group's operand budget.
      if (source->realized() || source->op != ir::Op::Full) ++leaves[g];
      return;
    }
    materialize.insert(source);
    depend(g, gid[source]);
  }

  void place_elementwise(Node* n) {
    struct Edge {
      Node* source;
      std::vector<Node*> chain;
    };
    std::vector<Edge> edges;
    for (auto& in : n->inputs) {
      auto [s, chain] = ir::resolve_views(in.get());
      edges.push_back({s, std::move(chain)});
    }
    // Candidate: the newest group among computed producers (host groups take no members; a matmul
    // group takes epilogue members, which the checks below keep to its output shape, read directly).
    // A gather's source (edge 0) is read from memory at data-dependent places: it never makes the
    // gather join its group (insert_reshape_copies gave a generator source a copy to be written).
    const bool gather = reads_source_from_memory(*n);
    int best = -1;
    for (size_t i = gather ? 1 : 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (computed(e.source) && groups[gid[e.source]].kind != Group::Kind::Host) best = std::max(best, gid[e.source]);
    }
    // A newest candidate read only through views it cannot express (a per-channel scale computed
    // after a convolution, read broadcast) would cut; a library call's group read directly takes
    // the node as its epilogue instead (inference batch norm after conv2d or matmul).
    if (fusion && best >= 0) {
      bool direct_best = false, cuts = false;
      for (const Edge& e : edges) {
        if (!computed(e.source) || gid[e.source] != best) continue;
        if (e.chain.empty()) direct_best = true;
        else if (!is_broadcast_back(groups[best], *e.source, e.chain, n->shape)) cuts = true;
      }
      if (cuts && !direct_best && !gather) {  // (a gather's source is read from memory, never joined)
        for (const Edge& e : edges) {
          if (!computed(e.source) || !e.chain.empty()) continue;
          Group::Kind k = groups[gid[e.source]].kind;
          if ((k == Group::Kind::Conv || k == Group::Kind::Matmul) && groups[gid[e.source]].full == n->shape)
            best = gid[e.source];
        }
      }
    }
    if (fusion && best < 0) best = same_shape_group(n);
    if (!fusion || best < 0) {
      cut(fusion ? CutReason::kNoProducerGroup : CutReason::kFusionDisabled, n);
      start_alone(n, edges);
      return;
    }
    Group& g = groups[best];
    // Phase: per-row if every in-group input is a per-row value read directly and the shape fits.
    bool all_row = true, any_in_group = false;
    CutReason why = CutReason::kCount;
    for (const Edge& e : edges) {
      if (!computed(e.source) || gid[e.source] != best) continue;
      any_in_group = true;
      bool row_src = p.row_phase[e.source];
      if (e.chain.empty() || (row_src && only_reshapes(e.chain) && is_row_shape(g, n->shape))) {
        all_row &= row_src;  // direct, or a row value reshaped between its keepdim and squeezed forms
      } else if (row_src && is_broadcast_back(g, *e.source, e.chain, n->shape)) {
        all_row = false;
      } else {
        why = CutReason::kViewOfComputed;
      }
    }
    bool row = any_in_group && all_row && g.kind == Group::Kind::Row && is_row_shape(g, n->shape);
    if (gather) {
      row = false;  // element phase only (its source is addressed over the element shape)
      if (computed(edges[0].source) && gid[edges[0].source] == best) why = CutReason::kGatherSource;
      if (g.kind == Group::Kind::Matmul) why = CutReason::kHostOp;  // a matmul epilogue checks no indices
    }
    if (why == CutReason::kCount && !row && n->shape != g.full) why = CutReason::kShapeMismatch;
    for (const Edge& e : edges) {
      if (why != CutReason::kCount) break;
      if (computed(e.source) && gid[e.source] != best && reaches(gid[e.source], best))
        why = CutReason::kWouldCycle;
    }
    if (why == CutReason::kCount &&
        (static_cast<int>(g.nodes.size()) >= kMaxGroupNodes || leaves[best] >= kMaxGroupLeaves))
      why = CutReason::kTooLarge;
    if (why == CutReason::kCount && g.kind == Group::Kind::Row && !g.scan && !row && wanted(*n) &&
        short_rows(g.full, g.rdims))
      why = CutReason::kShortRows;
    if (why == CutReason::kCount && g.kind == Group::Kind::Row && !g.scan && !row)
      why = one_reduction_rule(g.full, g.rdims, n->device, best, n);
    if (why != CutReason::kCount) {
      cut(why, n, best);
      start_alone(n, edges);
      return;
    }
    add(best, n, row);
    int lv = 0;
    for (const Edge& e : edges) {
      bool inside = computed(e.source) && gid[e.source] == best;
      if (!inside) read_external(best, e.source);
      else lv = std::max(lv, level_of(e.source));
    }
    if (lv > 0) level[n] = lv;
  }

  // A node that reads only buffers and generators may join a recent group over the same shape
  // (horizontal fusion: shared inputs are read once, one launch fewer). It adds no dependency, so
  // it cannot make a cycle. Only the last few groups are looked at, to stay linear.
  int same_shape_group(const Node* n) const {
    const Shape& shape = n->shape;
    constexpr int kLookBack = 8;
    for (int g = static_cast<int>(groups.size()) - 1; g >= 0 && g >= static_cast<int>(groups.size()) - kLookBack; --g) {
      const Group& cand = groups[g];
      // (Not a scan group: its element pass runs in order, one element at a time.)
      bool takes = cand.kind == Group::Kind::Pointwise ||
                   (cand.kind == Group::Kind::Row && !cand.scan &&
                    one_reduction_rule(cand.full, cand.rdims, n->device, g, n) == CutReason::kCount);
      if (takes && cand.full == shape && static_cast<int>(cand.nodes.size()) < kMaxGroupNodes &&
          leaves[g] < kMaxGroupLeaves)
        return g;
    }
    return -1;
  }

  template <typename Edges>
  void start_alone(Node* n, const Edges& edges) {
    int g = new_group(Group::Kind::Pointwise, n->shape, {});
    add(g, n, false);
    for (const auto& e : edges) read_external(g, e.source);
  }

  // Joins reduction `n` of `source`, as a first-level reduction, to one of the last 8 groups over
  // the same rows (the most recent first) instead of a group of its own. A buffer or generator
  // (producer < 0) may join any such group, or a pointwise group of its shape, which becomes a row
  // group (mean and std of one x: one pass instead of two). A value of group `producer`, which
  // cannot take the reduction (a matmul's output), only a row group that already reads from
  // `producer` (a sibling reduction of the same value: layer_norm's of x + attn @ w, one kernel
  // after the GEMM; the value is written anyway). Neither adds a dependency, so no cycle.
  bool join_recent_row_group(Node* n, Node* source, int producer) {
    const Shape& in_shape = n->inputs[0]->shape;
    for (int gi = static_cast<int>(groups.size()) - 1; gi >= 0 && gi >= static_cast<int>(groups.size()) - 8; --gi) {
      Group& g = groups[gi];
      bool same_rows = g.kind == Group::Kind::Row && !g.scan && g.rdims == n->attrs.dims && g.full == in_shape;
      bool can_become_row = producer < 0 && g.kind == Group::Kind::Pointwise && g.full == in_shape;
      if (!(same_rows || can_become_row) || static_cast<int>(g.nodes.size()) >= kMaxGroupNodes) continue;
      if (producer >= 0 ? gi == producer || !deps[gi].count(producer)
                        : leaves[gi] >= kMaxGroupLeaves ||
                              (can_become_row && short_rows(in_shape, n->attrs.dims) && holds_element_output(gi)))
        continue;
      if (one_reduction_rule(in_shape, n->attrs.dims, n->device, gi, n) != CutReason::kCount && (same_rows || escapes(gi, n)))
        continue;
      if (can_become_row) {
        g.kind = Group::Kind::Row;
        g.rdims = n->attrs.dims;
      }
      add(gi, n, true);
      level[n] = 1;
      read_external(gi, source);
      return true;
    }
    return false;
  }

  void place_reduce(Node* n) {
    auto [source, chain] = ir::resolve_views(n->inputs[0].get());
    const Shape& in_shape = n->inputs[0]->shape;
    if (fusion && computed(source) && chain.empty() && !p.row_phase[source]) {
      int gi = gid[source];
      Group& g = groups[gi];
      bool same_rows = g.kind == Group::Kind::Row && !g.scan && g.rdims == n->attrs.dims && g.full == in_shape;
      bool can_become_row = g.kind == Group::Kind::Pointwise && g.full == in_shape;
      int lv = level_of(source) + 1;
      const CutReason rule = one_reduction_rule(in_shape, n->attrs.dims, n->device, gi, n);  // before escapes(), the walk
      CutReason why = !(same_rows || can_become_row) || static_cast<int>(g.nodes.size()) >= kMaxGroupNodes
                          ? CutReason::kDifferentReduction
                      : lv > kMaxRowLevels ? CutReason::kRecompute
                      : can_become_row && short_rows(in_shape, n->attrs.dims) && holds_element_output(gi)
                          ? CutReason::kShortRows
                      : rule != CutReason::kCount && (same_rows || escapes(gi, n)) ? rule
                                                                                   : CutReason::kCount;
      if (why == CutReason::kCount) {
        if (can_become_row) {
          g.kind = Group::Kind::Row;
          g.rdims = n->attrs.dims;
        }
        add(gi, n, true);
        level[n] = lv;
        return;
      }
      if (why == CutReason::kDifferentReduction && join_recent_row_group(n, source, gi)) return;
      cut(why, n, gi);
    } else if (fusion && !computed(source)) {
      if (join_recent_row_group(n, source, -1)) return;
      cut(CutReason::kNoProducerGroup, n);
    } else {
      cut(!fusion ? CutReason::kFusionDisabled
                  : computed(source) ? (chain.empty() ? CutReason::kDifferentReduction : CutReason::kViewOfComputed)
                                     : CutReason::kNoProducerGroup,
          n, fusion && computed(source) ? gid[source] : -1);
    }
    int g = new_group(Group::Kind::Row, in_shape, n->attrs.dims);
    add(g, n, true);
    level[n] = 1;
    read_external(g, source);
  }

  // cumsum / cumprod / logcumsumexp / cummax / cummin (fused_scan): into the group of its elementwise producer over the same shape
  // (which becomes a scan group), or a scan group of the same dim; else a scan group of its own,
  // which the elementwise consumers join (a group left with the scan alone is a library call
  // again: scan_groups_alone).
  void place_scan(Node* n) {
    if (!fusion || !fused_scan(*n)) return place_host(n);
    auto [source, chain] = ir::resolve_views(n->inputs[0].get());
    const std::vector<int64_t> dims{n->attrs.axis};
    if (computed(source) && chain.empty()) {
      int gi = gid[source];
      Group& g = groups[gi];
      bool same = g.kind == Group::Kind::Row && g.scan && g.rdims == dims && g.full == n->shape;
      bool can_become = g.kind == Group::Kind::Pointwise && g.full == n->shape;
      if ((same || can_become) && static_cast<int>(g.nodes.size()) < kMaxGroupNodes) {
        if (can_become) {
          g.kind = Group::Kind::Row;
          g.rdims = dims;
          g.scan = true;
        }
        add(gi, n, false);
        return;
      }
      cut(CutReason::kDifferentReduction, n, gi);
    } else {
      cut(computed(source) ? CutReason::kViewOfComputed : CutReason::kNoProducerGroup, n);
    }
    int g = new_group(Group::Kind::Row, n->shape, dims);
    groups[g].scan = true;
    add(g, n, false);
    read_external(g, source);
  }

  // A scan group that took nothing but its scan: the library's scan (its kernels are tuned for
  // every line shape) instead of a generated kernel that visits each line in order.
  void scan_groups_alone() {
    for (Group& g : groups)
      if (g.scan && g.nodes.size() == 1) {
        g.kind = Group::Kind::Host;
        g.rdims.clear();
        g.scan = false;
      }
  }

  // sort's and topk's values, gather(x, axis, argsort(x, axis)) over the keys the sort read: a
  // second member of the sort's group, which writes them with the positions (Backend::sort has
  // the keys at hand), instead of a gather reading x again at every position.
  bool join_sort(Node* n) {
    if (n->op != ir::Op::Gather) return false;
    Node* s = n->inputs[1].get();
    if ((s->op != ir::Op::ArgSort && s->op != ir::Op::TopK) || !computed(s)) return false;
    const int g = gid[s];
    if (n->inputs[0].get() != s->inputs[0].get() || n->attrs.axis != s->attrs.axis || n->shape != s->shape ||
        groups[g].nodes.size() != 1)
      return false;
    add(g, n, false);
    return true;
  }

  void place_host(Node* n) {
    cut(CutReason::kHostOp, n);
    Group::Kind kind = n->op == ir::Op::Matmul   ? Group::Kind::Matmul
                       : n->op == ir::Op::Conv2d ? Group::Kind::Conv
                                                 : Group::Kind::Host;
    int g = new_group(kind, n->shape, {});
    add(g, n, false);
    for (auto& in : n->inputs) read_external(g, ir::resolve_views(in.get()).first);
  }

  // A view or generator the user holds: written by a group of its own.
  void place_alone(Node* n) {
    int g = new_group(Group::Kind::Pointwise, n->shape, {});
    add(g, n, false);
    if (ir::is_view(n->op)) read_external(g, ir::resolve_views(n).first);
  }

  // Partition::inline_nodes: integer or bool elementwise values over generators only, unheld, read directly by
  // pointwise, row, gather and remap nodes only (a host op, library call or cat reads memory, and
  // a view of one would need it at other places).
  void mark_inline(const std::vector<Node*>& order) {
    std::unordered_set<const Node*> pinned;
    for (const Node* n : order) {
      bool reads_memory = !ir::is_elementwise(n->op) && !ir::is_reduce(n->op) && !ir::is_view(n->op) &&
                          n->op != ir::Op::Gather && n->op != ir::Op::Remap;
      for (size_t k = 0; k < n->inputs.size(); ++k) {
        auto [s, chain] = ir::resolve_views(n->inputs[k].get());
        if (reads_memory || !chain.empty() || (k == 0 && reads_source_from_memory(*n))) pinned.insert(s);
      }
      if (ir::is_view(n->op) && wanted(*n)) pinned.insert(ir::resolve_views(const_cast<Node*>(n)).first);
    }
    for (const Node* n : order) {
      // Integer and bool values only: index math. Float values over generators (rand * 2) keep
      // their groups, which the short-rows cost rule weighs.
      if (!ir::is_elementwise(n->op) || is_floating(n->dtype) || wanted(*n) || pinned.count(n)) continue;
      bool gen_only = true;
      for (const ir::NodePtr& in : n->inputs) {
        const Node* s = ir::resolve_views(in.get()).first;
        gen_only &= (!s->realized() && ir::is_generator(s->op)) || p.inline_nodes.count(s) > 0;
      }
      if (gen_only) p.inline_nodes.insert(n);
    }
  }

  // An elementwise member that other groups read, computed only from values that are in memory
  // anyway (members of its own group written for other reasons, buffers, generators): its readers
  // compute it inline instead of the group writing it and them reading it back (heat2d's 4 * a,
  // recorded with step t + 1 but read only by step t + 2's kernel, which reads a itself). Its
  // readers must be elementwise nodes of pointwise or row groups reading it directly; the group's
  // own members still use it as before. The readers' dependencies do not change: they read its
  // inputs from the same group instead.
  void recompute_cheap_outputs(const std::vector<Node*>& order) {
    auto candidate = [&](const Node* n) {
      return gid.count(n) && ir::is_elementwise(n->op) && !wanted(*n) && materialize.count(n) && !p.row_phase[n];
    };
    if (std::none_of(order.begin(), order.end(), candidate)) return;  // no readers map to build
    std::unordered_map<const Node*, std::vector<std::pair<const Node*, bool>>> readers;  // reader, direct
    for (const Node* n : order)
      for (const ir::NodePtr& in : n->inputs) {
        auto [s, chain] = ir::resolve_views(in.get());
        readers[s].emplace_back(n, chain.empty());
      }
    auto plain = [&](int g) { return groups[g].kind == Group::Kind::Pointwise || groups[g].kind == Group::Kind::Row; };
    for (const Node* n : order) {
      if (!candidate(n)) continue;
      const int g = gid.at(n);
      if (!plain(g)) continue;
      bool ok = true;
      for (const ir::NodePtr& in : n->inputs) {
        auto [s, chain] = ir::resolve_views(in.get());
        if (s->realized() || p.inline_nodes.count(s) || (ir::is_generator(s->op) && !gid.count(s))) continue;
        auto sg = gid.find(s);
        ok &= sg != gid.end() && sg->second == g && chain.empty() && !p.row_phase[s] && (wanted(*s) || materialize.count(s));
      }
      for (const auto& [r, direct] : readers[n]) {
        auto rg = gid.find(r);
        if (rg == gid.end()) {
          ok = false;
        } else if (rg->second != g) {
          ok &= direct && ir::is_elementwise(r->op) && plain(rg->second);
        }
      }
      if (!ok) continue;
      materialize.erase(n);
      p.inline_nodes.insert(n);
    }
  }

  void run(const std::vector<Node*>& order) {
    if (fusion) mark_inline(order);
    this->order = &order;
    for (Node* n : order) {
      if (p.inline_nodes.count(n) || (fusion && join_sort(n))) continue;
      if (ir::is_view(n->op) || ir::is_generator(n->op)) {
        if (wanted(*n)) place_alone(n);
      } else if (ir::is_reduce(n->op)) {
        place_reduce(n);
      } else if (ir::is_scan(n->op)) {
        place_scan(n);
      } else if (n->op == ir::Op::Matmul || n->op == ir::Op::Cat || n->op == ir::Op::Conv2d ||
                 n->op == ir::Op::Pool2d || n->op == ir::Op::ScatterAdd || n->op == ir::Op::Scatter ||
                 n->op == ir::Op::ArgSort || n->op == ir::Op::TopK ||
                 n->op == ir::Op::Attention || n->op == ir::Op::Nearest || n->op == ir::Op::Linalg ||
                 n->op == ir::Op::Fft) {
        place_host(n);
      } else {
        place_elementwise(n);
      }
    }
    if (fusion) recompute_cheap_outputs(order);
    scan_groups_alone();
    finish();
  }

  // Outputs, then an execution order that respects dependencies (ids are nearly topological
  // already; a group that received a node after a later group was made may need to wait for it).
  void finish() {
    for (Group& g : groups)
      for (Node* n : g.nodes)
        if (wanted(*n) || materialize.count(n)) g.outputs.push_back(n);
    std::vector<int> order;
    std::vector<char> state(groups.size(), 0);
    std::vector<std::vector<int>> sorted_deps(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
      sorted_deps[g].assign(deps[g].begin(), deps[g].end());
      std::sort(sorted_deps[g].begin(), sorted_deps[g].end());
    }
    std::vector<std::pair<int, size_t>> stack;
    for (int root = 0; root < static_cast<int>(groups.size()); ++root) {
      if (state[root]) continue;
      stack.emplace_back(root, 0);
      state[root] = 1;
      while (!stack.empty()) {
        auto& [g, next] = stack.back();
        if (next < sorted_deps[g].size()) {
          int d = sorted_deps[g][next++];
          if (!state[d]) {
            state[d] = 1;
            stack.emplace_back(d, 0);
          }
        } else {
          order.push_back(g);
          stack.pop_back();
        }
      }
    }
    std::vector<int> index_of(groups.size());
    for (size_t i = 0; i < order.size(); ++i) index_of[order[i]] = static_cast<int>(i);
    for (int id : order) {
      Group g = std::move(groups[id]);
      for (int a : sorted_deps[id]) g.deps.push_back(index_of[a]);
      std::sort(g.deps.begin(), g.deps.end());
      for (Node* n : g.nodes) p.group_of[n] = static_cast<int>(p.groups.size());
      p.groups.push_back(std::move(g));
    }
    for (Cut& c : p.cut_log) {  // creation ids -> execution indices
      if (c.would_join >= 0) c.would_join = index_of[c.would_join];
      if (c.group >= 0 && c.group < static_cast<int>(index_of.size())) c.group = index_of[c.group];
      else c.group = -1;
    }
  }
};

}  // namespace

bool fused_scan(const ir::Node& n) {
  const bool sum_or_prod = n.op == ir::Op::CumSum || n.op == ir::Op::CumProd;
  const bool extreme = n.op == ir::Op::CumMax || n.op == ir::Op::CumMin;  // int64 positions of any dtype's values
  if (!(sum_or_prod || extreme || (n.op == ir::Op::LogCumSumExp && is_floating(n.dtype))) || n.dtype == DType::Bool ||
      n.shape.empty())
    return false;
  const int64_t length = n.shape[static_cast<size_t>(n.attrs.axis)];
  const int64_t lines = length == 0 ? 0 : n.numel() / length;
  const Costs c = backend_costs(n.device);
  if (c.scan_last_dim_only)
    for (size_t d = static_cast<size_t>(n.attrs.axis) + 1; d < n.shape.size(); ++d)
      if (n.shape[d] > 1) return false;  // lines side by side: the library's
  return lines >= c.scan_min_lines ? length <= c.scan_max_length : length < c.scan_short_line;
}

namespace {
CostsOf& registered_costs() {
  static CostsOf costs;
  return costs;
}
}  // namespace

void set_backend_costs(CostsOf costs) { registered_costs() = std::move(costs); }

Costs backend_costs(Device device) {
  const CostsOf& c = registered_costs();
  return c ? c(device) : Costs{};
}

Partition partition(const std::vector<ir::Node*>& order, const std::function<bool(const ir::Node&)>& wanted,
                    bool fusion, bool record_cuts, const CostsOf& costs) {
  static const CostsOf registered = [](Device d) { return backend_costs(d); };
  Builder b{wanted, fusion, record_cuts, costs ? costs : registered, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};  // NOLINT
  b.run(order);
  return std::move(b.p);
}

}  // namespace lf::fuse
