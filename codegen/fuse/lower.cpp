#include "codegen/fuse/lower.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>

#include "codegen/ir/indexing.h"
#include "codegen/ir/view.h"

namespace lf::lower {
namespace {

using ir::Node;
using kir::Instr;
using kir::InstrKind;
using kir::Operand;

struct OperandData {
  Operand meta;
  Shape strides;  // over the group's full shape, before canonicalization
  int64_t offset = 0;
  void* pointer = nullptr;
};

class Lowerer {
 public:
  Lowerer(const fuse::Group& g, const fuse::Partition& p, int index, Device device, bool keep_last_dim,
          const std::vector<OutputPlacement>* placement)
      : g_(g), p_(p), index_(index), device_(device), keep_last_dim_(keep_last_dim), placement_(placement) {}

  Lowered run() {
    out_.kernel.row = g_.kind == fuse::Group::Kind::Row;
    for (Node* o : g_.outputs) {
      int value = instr_of(o);
      const OutputPlacement* place = placement_ ? &(*placement_)[out_.outputs.size()] : nullptr;
      auto storage = place ? place->storage
                           : rt::Storage::allocate(device_, static_cast<size_t>(o->numel()) * dtype_size(o->dtype));
      bool row = is_row(o);
      Shape strides = place ? place->strides : output_strides(*o, value);
      OperandData od;
      od.meta = Operand{Operand::Kind::Output, o->dtype, row, {}};
      od.strides = to_full(strides, o->shape, row);
      od.offset = place ? place->offset : 0;
      od.pointer = storage->data();
      int slot = static_cast<int>(operands_.size());
      operands_.push_back(std::move(od));
      out_.kernel.outputs.push_back({value, slot});
      out_.outputs.push_back(o);
      out_.out_storage.push_back(std::move(storage));
      out_.out_strides.push_back(std::move(strides));
      out_.bytes += o->numel() * static_cast<int64_t>(dtype_size(o->dtype));
    }
    canonicalize();
    return std::move(out_);
  }

 private:
  bool member(const Node* n) const {
    if (n->realized()) return false;
    auto it = p_.group_of.find(n);
    return it != p_.group_of.end() && it->second == index_;
  }
  // A fresh output's strides: channels-last when the group is pointwise, the output 4-D and its
  // expression (instruction `value`) reads a channels-last 4-D buffer; else contiguous. A copy is
  // always contiguous (copies make contiguous buffers: a reshape that cannot view its input, a
  // library operand, `contiguous()`), and a matmul epilogue keeps the product's row-major rows.
  // fuse::insert_reshape_copies assumes no more than this (its ChannelsLastReach).
  Shape output_strides(const Node& o, int value) const {
    if (reads_channels_last_[static_cast<size_t>(value)] && !out_.kernel.row && !keep_last_dim_ &&
        o.shape.size() == 4 && o.op != ir::Op::Copy)
      return ir::channels_last_strides(o.shape);
    return ir::contiguous_strides(o.shape);
  }
  static bool channels_last(const Node& source) {
    return source.realized() && ir::is_channels_last(source.shape, source.layout);
  }

  bool is_row(const Node* n) const {
    auto it = p_.row_phase.find(n);
    return it != p_.row_phase.end() && it->second;
  }
  bool reduced(size_t d) const {
    return std::binary_search(g_.rdims.begin(), g_.rdims.end(), static_cast<int64_t>(d));
  }

  // Strides over a value of `shape` (the full shape, or a row value's keepdim/squeezed shape) as
  // strides over the group's full shape: reduced dims of row values get stride 0.
  Shape to_full(const Shape& strides, const Shape& shape, bool row) const {
    if (!row || shape.size() == g_.full.size()) {
      Shape s = strides;
      if (row)
        for (size_t d = 0; d < s.size(); ++d)
          if (reduced(d)) s[d] = 0;
      return s;
    }
    Shape s(g_.full.size(), 0);
    size_t k = 0;
    for (size_t d = 0; d < g_.full.size(); ++d)
      if (!reduced(d)) s[d] = strides[k++];
    return s;
  }

  // `reads_channels_last`: the instruction loads a channels-last buffer (or its arguments do).
  int push(Instr in, bool reads_channels_last = false) {
    for (int a : in.args) reads_channels_last = reads_channels_last || reads_channels_last_[static_cast<size_t>(a)];
    out_.kernel.instrs.push_back(std::move(in));
    reads_channels_last_.push_back(reads_channels_last);
    return static_cast<int>(out_.kernel.instrs.size()) - 1;
  }

  int param(kir::ParamKind kind, int64_t bits) {
    out_.kernel.params.push_back(kind);
    out_.args.params.push_back(bits);
    return static_cast<int>(out_.kernel.params.size()) - 1;
  }
  int float_param(double v) {
    int64_t bits;
    std::memcpy(&bits, &v, 8);
    return param(kir::ParamKind::Float, bits);
  }

  // Launch parameter `p` is number `field` of `source` (Lowered::numbers).
  void number(int p, const Node& source, int field) {
    ir::note_number_use(source);
    out_.numbers.push_back({p, source.flush_mark, source.flush_pos, field});
  }

  // A value read from outside the group: a buffer, or a generator evaluated in place.
  int leaf(Node* source, const std::vector<Node*>& chain, bool row) {
    if (source->op == ir::Op::Full && !source->realized()) {
      auto key = std::make_tuple(source, Shape{}, int64_t{0}, row);
      if (auto it = leaves_.find(key); it != leaves_.end()) return it->second;
      Instr in;
      in.kind = InstrKind::Param;
      in.dtype = source->dtype;
      in.row = row;
      in.slot = is_floating(source->dtype) ? float_param(source->attrs.value)
                                           : param(kir::ParamKind::Int, source->attrs.ivalue);
      number(in.slot, *source, is_floating(source->dtype) ? 0 : 1);  // the value's bits, or the integer value
      return leaves_[key] = push(in);
    }
    auto view = ir::view_of_chain(*source, chain);
    if (!view) throw Error("lower: a reshape that cannot be viewed reached the lowering (internal error)");
    Shape strides = to_full(view->strides, view->shape, row);
    auto key = std::make_tuple(source, strides, view->offset, row);
    if (auto it = leaves_.find(key); it != leaves_.end()) return it->second;
    bool gen = !source->realized();
    OperandData od;
    od.meta = Operand{gen ? Operand::Kind::Index : Operand::Kind::Input, source->dtype, row, {}};
    od.strides = strides;
    od.offset = view->offset;
    od.pointer = gen ? nullptr : source->storage->data();
    int slot = static_cast<int>(operands_.size());
    operands_.push_back(std::move(od));
    Instr in;
    in.kind = gen ? InstrKind::Gen : InstrKind::Load;
    in.dtype = source->dtype;
    in.row = row;
    in.slot = slot;
    if (gen) {
      in.op = source->op;
      const ir::Attrs& a = source->attrs;
      if (source->op == ir::Op::Arange) {
        in.params = {float_param(a.value), float_param(a.value2)};
      } else {
        in.params = {param(kir::ParamKind::Int, static_cast<int64_t>(a.seed)),
                     param(kir::ParamKind::Int, static_cast<int64_t>(a.counter))};
      }
      number(in.params[0], *source, 0);
      number(in.params[1], *source, 1);
    } else {
      out_.bytes += source->numel() * static_cast<int64_t>(dtype_size(source->dtype));
    }
    return leaves_[key] = push(in, channels_last(*source));
  }

  int instr_of(Node* n) {
    if (auto it = memo_.find(n); it != memo_.end()) return it->second;
    int result;
    bool row = is_row(n);
    if (n->op == ir::Op::Gather) {
      result = gather(n, row);
    } else if (n->op == ir::Op::Remap) {
      result = remap(n, row);
    } else if (ir::is_view(n->op) || ir::is_generator(n->op)) {
      // Held by the user on its own: the group copies it out.
      auto [source, chain] = ir::resolve_views(n);
      result = leaf(source, chain, row);
    } else {
      std::vector<int> args;
      bool reduce = ir::is_reduce(n->op);
      for (auto& input : n->inputs) {
        auto [source, chain] = ir::resolve_views(input.get());
        if (member(source)) {
          args.push_back(instr_of(source));  // direct, or a row value broadcast back
        } else if (p_.inline_nodes.count(source)) {
          args.push_back(inline_instr(source, reduce ? false : row));
        } else {
          args.push_back(leaf(source, chain, reduce ? false : row));
        }
      }
      // A float product accumulates in float64, as the reference does: in a narrower type the
      // partial products of a row with a 0 and large values overflow to inf on some lanes, and
      // inf * 0 gave NaN where the product is 0 (the order of the lanes decided which).
      bool widen = n->op == ir::Op::Prod && is_floating(n->dtype) && n->dtype != DType::Float64;
      if (widen) args[0] = cast(args[0], DType::Float64, /*row=*/false);  // per element
      Instr in;
      in.kind = reduce ? InstrKind::Reduce : ir::is_scan(n->op) ? InstrKind::Scan : InstrKind::Op;
      in.op = n->op;
      in.dtype = n->dtype;
      in.row = row;
      in.args = std::move(args);
      if (widen) in.dtype = DType::Float64;
      result = push(std::move(in));
      if (widen) result = cast(result, n->dtype, row);
    }
    memo_[n] = result;
    return result;
  }

  int cast(int arg, DType to, bool row) {
    Instr c;
    c.kind = InstrKind::Op;
    c.op = ir::Op::Cast;
    c.dtype = to;
    c.row = row;
    c.args = {arg};
    return push(std::move(c));
  }

  // A value of Partition::inline_nodes (elementwise over generators), computed here in the
  // reader's phase, as a generator would be.
  int inline_instr(Node* n, bool row) {
    auto key = std::make_pair(n, row);
    if (auto it = inline_memo_.find(key); it != inline_memo_.end()) return it->second;
    std::vector<int> args;
    for (auto& input : n->inputs) {
      auto [source, chain] = ir::resolve_views(input.get());
      args.push_back(p_.inline_nodes.count(source) ? inline_instr(source, row) : leaf(source, chain, row));
    }
    Instr in;
    in.kind = InstrKind::Op;
    in.op = n->op;
    in.dtype = n->dtype;
    in.row = row;
    in.args = std::move(args);
    return inline_memo_[key] = push(std::move(in));
  }

  // A gather (ir::Op::Gather): its source is read from memory (the fuser makes sure it is written
  // first) through a view whose stride along the gathered dim is 0; the index picks the element.
  // Checked against the error operand unless its indices are known in range (no tag param then).
  int gather(Node* n, bool row) {
    auto [isrc, ichain] = ir::resolve_views(n->inputs[1].get());
    int index = member(isrc) ? instr_of(isrc) : p_.inline_nodes.count(isrc) ? inline_instr(isrc, row) : leaf(isrc, ichain, row);
    auto [source, chain] = ir::resolve_views(n->inputs[0].get());
    if (!source->realized()) throw Error("lower: a gather's source is not in memory (internal error)");
    auto view = ir::view_of_chain(*source, chain);
    if (!view) throw Error("lower: a reshape that cannot be viewed reached the lowering (internal error)");
    size_t axis = static_cast<size_t>(n->attrs.axis);
    int64_t size = view->shape[axis], stride = view->strides[axis];
    Shape strides = view->strides;
    strides[axis] = 0;
    OperandData od;
    od.meta = Operand{Operand::Kind::Input, source->dtype, false, {}};
    od.strides = std::move(strides);
    od.offset = view->offset;
    od.pointer = source->storage->data();
    int slot = static_cast<int>(operands_.size());
    operands_.push_back(std::move(od));
    out_.bytes += n->numel() * static_cast<int64_t>(dtype_size(source->dtype));
    Instr in;
    in.kind = InstrKind::Gather;
    in.dtype = n->dtype;
    in.row = row;
    in.slot = slot;
    in.args = {index};
    in.params = {param(kir::ParamKind::Int, size), param(kir::ParamKind::Int, stride)};
    if (ir::gather_indices_known_in_range(*n)) return push(std::move(in), channels_last(*source));  // no check
    if (out_.kernel.error_slot < 0) {
      out_.error_storage = rt::Storage::allocate(device_, 2 * sizeof(int64_t));
      rt::fill_zero(*out_.error_storage);
      OperandData err;
      err.meta = Operand{Operand::Kind::Output, DType::Int64, false, {}};
      err.strides = Shape(g_.full.size(), 0);
      err.pointer = out_.error_storage->data();
      out_.kernel.error_slot = static_cast<int>(operands_.size());
      operands_.push_back(std::move(err));
    }
    out_.gathers.push_back(n);
    in.params.push_back(param(kir::ParamKind::Int, static_cast<int64_t>(out_.gathers.size())));
    return push(std::move(in), channels_last(*source));
  }

  // A remap (ir::Op::Remap): like a gather, its source is read from memory through a view whose
  // strides along the remapped dims are 0, and each index adds index * stride. The indices are
  // built in range by the frontend, so there is no error operand and flush plans may record it.
  int remap(Node* n, bool row) {
    std::vector<int> indices;
    for (size_t k = 1; k < n->inputs.size(); ++k) {
      auto [isrc, ichain] = ir::resolve_views(n->inputs[k].get());
      indices.push_back(member(isrc)                    ? instr_of(isrc)
                        : p_.inline_nodes.count(isrc) ? inline_instr(isrc, row)
                                                      : leaf(isrc, ichain, row));
    }
    auto [source, chain] = ir::resolve_views(n->inputs[0].get());
    if (!source->realized()) throw Error("lower: a remap's source is not in memory (internal error)");
    auto view = ir::view_of_chain(*source, chain);
    if (!view) throw Error("lower: a reshape that cannot be viewed reached the lowering (internal error)");
    Shape strides = view->strides;
    // The farthest element the view reaches (its offset plus each dim's last index times its
    // stride): a backend takes narrower index math where that fits.
    int64_t reach = view->offset;
    for (size_t d = 0; d < strides.size(); ++d)
      reach += std::max<int64_t>(view->shape[d] - 1, 0) * std::abs(strides[d]);
    std::vector<int> stride_params;
    for (int64_t axis : n->attrs.dims) {
      stride_params.push_back(param(kir::ParamKind::Int, strides[static_cast<size_t>(axis)]));
      strides[static_cast<size_t>(axis)] = 0;
    }
    OperandData od;
    od.meta = Operand{Operand::Kind::Input, source->dtype, false, {}};
    od.strides = std::move(strides);
    od.offset = view->offset;
    od.pointer = source->storage->data();
    int slot = static_cast<int>(operands_.size());
    operands_.push_back(std::move(od));
    out_.bytes += n->numel() * static_cast<int64_t>(dtype_size(source->dtype));
    Instr in;
    in.kind = InstrKind::Remap;
    in.dtype = n->dtype;
    in.row = row;
    in.slot = slot;
    in.args = std::move(indices);
    in.params = std::move(stride_params);
    in.params.push_back(param(kir::ParamKind::Int, reach));
    return push(std::move(in), channels_last(*source));
  }

  // A row kernel walks its reduced dims, and its rows, in the memory order of its first input
  // read per element (dims by decreasing size of stride; a contiguous input keeps the logical order), so
  // that a reduction over a transposed buffer reads it as one dense run (x.t().sum() strode 4 KB
  // an element, 40x slower than the contiguous sum) and rows contiguous along a kept dim become
  // column blocks (kir::column_blocks). Not where an order is part of the result or of the
  // index arithmetic: the reduced dims of argmax / argmin (the first of equal values), a scan,
  // gathers; nor the rows of a kernel with element outputs (written in logical order), nor those
  // of rows shorter than kOrderRowsMinLength: there the per-row outputs are a large part of the
  // bytes, and written in the input's order they stride (max over a size-1 dim of a transposed
  // 1024 x 1024: 11.8-15.3 ms so, 8.0 in logical order; 2-core CPU at load 6, 2026-12-04).
  static constexpr int64_t kOrderRowsMinLength = 16;
  void order_row_dims(std::vector<size_t>& outer, std::vector<size_t>& inner) const {
    if (keep_last_dim_ || g_.scan) return;
    bool arg = false, element_out = false;
    for (const Instr& in : out_.kernel.instrs) {
      if (in.kind == InstrKind::Gather || in.kind == InstrKind::Remap || in.kind == InstrKind::Scan) return;
      arg |= in.kind == InstrKind::Reduce && (in.op == ir::Op::ArgMax || in.op == ir::Op::ArgMin);
    }
    for (const kir::Output& o : out_.kernel.outputs) element_out |= !out_.kernel.instrs[static_cast<size_t>(o.instr)].row;
    const Shape* by = nullptr;
    for (const OperandData& od : operands_) {
      if (od.meta.kind != Operand::Kind::Input || od.meta.row) continue;
      bool dense = true;  // no broadcast dim: its strides order every dim
      for (size_t d = 0; d < g_.full.size(); ++d) dense &= g_.full[d] == 1 || od.strides[d] != 0;
      if (dense) {
        by = &od.strides;
        break;
      }
    }
    if (!by) return;
    auto larger = [by](size_t a, size_t b) { return std::abs((*by)[a]) > std::abs((*by)[b]); };  // flips too
    if (!arg) std::stable_sort(inner.begin(), inner.end(), larger);
    int64_t len = 1;
    for (size_t d : inner) len *= g_.full[d];
    if (!element_out && len >= kOrderRowsMinLength) std::stable_sort(outer.begin(), outer.end(), larger);
  }

  // A pointwise kernel that reads an input transposed against its output (the output's unit-
  // stride dim a strided in the input, the input's unit-stride dim b another) walks both in tiles
  // of kTile x kTileRun: b and a are split in (hi, lo) and run as (.., b_hi, .., a_hi, b_lo,
  // a_lo), so that a tile's input lines (kTileRun of them, kTile elements each) stay in L1 while
  // all their elements are used, where the plain order read one element of a line per element,
  // each on its own page (softmax(x.t(), 1)'s exp(x - max): bench/RESULTS.md; 16 x 64 beat 16 x
  // 16 there). Where b's size is a multiple of kTile and a's of kTileRun, each of at least 2
  // tiles, over 2^16 elements or more; not with gathers or remaps (their index arithmetic reads
  // the columns).
  static constexpr int64_t kTile = 16, kTileRun = 64;  // b_lo, a_lo
  void tile_transposed(std::vector<int64_t>& sizes, std::vector<Shape>& strides) const {
    if (keep_last_dim_ || out_.kernel.outputs.empty() || sizes.size() < 2) return;
    for (const Instr& in : out_.kernel.instrs)
      if (in.kind == InstrKind::Gather || in.kind == InstrKind::Remap || in.kind == InstrKind::Scan) return;
    const size_t a = sizes.size() - 1;
    int64_t numel = 1;
    for (int64_t n : sizes) numel *= n;
    if (numel < (int64_t{1} << 16) || sizes[a] % kTileRun != 0 || sizes[a] < 2 * kTileRun) return;
    for (const kir::Output& o : out_.kernel.outputs)
      if (strides[static_cast<size_t>(o.slot)][a] != 1) return;
    size_t b = a;
    for (size_t o = 0; o < operands_.size() && b == a; ++o) {
      if (operands_[o].meta.kind != Operand::Kind::Input) continue;
      const Shape& st = strides[o];
      if (st[a] == 0 || st[a] == 1 || st[a] == -1) continue;
      for (size_t d = 0; d < a; ++d)
        if (st[d] == 1 && sizes[d] % kTile == 0 && sizes[d] >= 2 * kTile) b = d;
    }
    if (b == a) return;
    std::vector<int64_t> ns;
    std::vector<Shape> nst(strides.size());
    auto push = [&](int64_t n, size_t d, int64_t scale) {
      ns.push_back(n);
      for (size_t o = 0; o < strides.size(); ++o) nst[o].push_back(strides[o][d] * scale);
    };
    for (size_t d = 0; d < a; ++d) push(d == b ? sizes[d] / kTile : sizes[d], d, d == b ? kTile : 1);
    push(sizes[a] / kTileRun, a, kTileRun);
    push(kTile, b, 1);
    push(kTileRun, a, 1);
    sizes = std::move(ns);
    strides = std::move(nst);
  }

  // Reduced dims last; drop size-1 dims; merge neighbours that are contiguous for every operand.
  void canonicalize() {
    size_t rank = g_.full.size();
    std::vector<size_t> outer, inner;
    for (size_t d = 0; d < rank; ++d) (out_.kernel.row && reduced(d) ? inner : outer).push_back(d);
    // A pointwise kernel runs in its first output's memory order (dims by decreasing stride; a
    // contiguous output keeps the logical order), so that a channels-last output is written, and
    // channels-last inputs read, as one dense run.
    if (!out_.kernel.row && !keep_last_dim_ && !out_.kernel.outputs.empty()) {
      const Shape& os = operands_[static_cast<size_t>(out_.kernel.outputs[0].slot)].strides;
      std::stable_sort(outer.begin(), outer.end(), [&](size_t a, size_t b) { return os[a] > os[b]; });
    }
    if (out_.kernel.row) order_row_dims(outer, inner);
    auto coalesce = [&](const std::vector<size_t>& dims) {
      std::vector<int64_t> sizes;
      std::vector<Shape> strides(operands_.size());
      for (size_t d : dims) {
        int64_t n = g_.full[d];
        // A matmul epilogue keeps its last two dims as they are (even of size 1), so that its
        // columns are the product's columns and one kernel serves every m.
        bool pinned = keep_last_dim_ && d + 2 >= rank;
        if (n == 1 && !pinned) continue;
        bool merge = !sizes.empty() && sizes.back() != 0 && n != 0 && !pinned;
        for (size_t o = 0; merge && o < operands_.size(); ++o)
          merge = strides[o].back() == operands_[o].strides[d] * n;
        if (merge) {
          sizes.back() *= n;
          for (size_t o = 0; o < operands_.size(); ++o) strides[o].back() = operands_[o].strides[d];
        } else {
          sizes.push_back(n);
          for (size_t o = 0; o < operands_.size(); ++o) strides[o].push_back(operands_[o].strides[d]);
        }
      }
      return std::make_pair(sizes, strides);
    };
    std::vector<int64_t> sizes;
    std::vector<Shape> strides(operands_.size());
    if (out_.kernel.row) {
      auto [os, ost] = coalesce(outer);
      auto [is, ist] = coalesce(inner);
      if (is.empty()) {  // a reduction over nothing (or over size-1 dims): one element per row
        is.push_back(1);
        for (auto& s : ist) s.push_back(0);
      }
      sizes = os;
      sizes.insert(sizes.end(), is.begin(), is.end());
      for (size_t o = 0; o < operands_.size(); ++o) {
        strides[o] = ost[o];
        strides[o].insert(strides[o].end(), ist[o].begin(), ist[o].end());
      }
      out_.kernel.outer_rank = static_cast<int>(os.size());
      out_.kernel.inner_rank = static_cast<int>(is.size());
    } else {
      auto [all, st] = coalesce(outer);
      if (all.empty()) {
        all.push_back(1);
        for (auto& s : st) s.push_back(0);
      }
      tile_transposed(all, st);
      sizes = all;
      strides = st;
      out_.kernel.outer_rank = static_cast<int>(all.size()) - 1;
      out_.kernel.inner_rank = 1;
    }
    out_.args.outer_rank = out_.kernel.outer_rank;
    out_.args.sizes = sizes;
    for (size_t o = 0; o < operands_.size(); ++o) {
      OperandData& od = operands_[o];
      for (int64_t s : strides[o]) {
        od.meta.strides.push_back(s == 0 ? kir::StrideClass::Zero
                                  : s == 1 ? kir::StrideClass::Unit
                                           : kir::StrideClass::Any);
      }
      out_.kernel.operands.push_back(od.meta);
      out_.args.pointers.push_back(od.pointer);
      out_.args.offsets.push_back(od.offset);
      out_.args.strides.insert(out_.args.strides.end(), strides[o].begin(), strides[o].end());
    }
  }

  const fuse::Group& g_;
  const fuse::Partition& p_;
  int index_;
  Device device_;
  bool keep_last_dim_;
  const std::vector<OutputPlacement>* placement_;
  Lowered out_;
  std::vector<OperandData> operands_;
  std::vector<bool> reads_channels_last_;  // per instruction (push)
  std::unordered_map<Node*, int> memo_;
  std::map<std::pair<Node*, bool>, int> inline_memo_;
  std::map<std::tuple<Node*, Shape, int64_t, bool>, int> leaves_;
};

}  // namespace

void check_gathers(const Lowered& low) {
  if (!low.error_storage) return;
  int64_t err[2];
  rt::read_flags(*low.error_storage, 0, err, sizeof err);  // waits for the launch
  if (err[0] <= 0 || err[0] > static_cast<int64_t>(low.gathers.size())) return;
  const Node& g = *low.gathers[static_cast<size_t>(err[0] - 1)];
  int64_t axis = g.attrs.axis;
  throw Error(ir::gather_index_error(g.attrs.start, err[1], axis, g.inputs[0]->shape[static_cast<size_t>(axis)]));
}

Lowered lower_group(const fuse::Group& group, const fuse::Partition& partition, int group_index, Device device,
                    bool keep_last_dim, const std::vector<OutputPlacement>* placement) {
  return Lowerer(group, partition, group_index, device, keep_last_dim, placement).run();
}

}  // namespace lf::lower
