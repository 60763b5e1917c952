// Shape ops and slice assignment (issue 23, second wave). Views where the layout allows (narrow,
// split, chunk, unbind, movedim, diagonal, stack's unsqueeze); the rest are index math recorded as
// one Remap node (pad, flip, roll, tile, repeat, repeat_interleave, index_put's value) whose
// indices are integer arithmetic over arange, or a where over arange comparisons (tril, triu, pad's
// constant border, index_put's region). All of it fuses into the consumer's kernel.
#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <string>

#include "frontend/record.h"
#include "lazyfuse/ops.h"
#include "runtime/checked.h"

namespace lf {
namespace {

using detail::coord;
using detail::fail;
using detail::record;
using ir::Op;

std::string list_str(const std::vector<int64_t>& v) { return shape_str(v); }


// floor(i / n) for 0 <= i < 2^52 and n > 0, in float64 (exact there; there is no integer
// division op): the index arithmetic of tile, repeat and strided index_put.
Tensor floordiv(const Tensor& i, int64_t n) {
  if (n == 1) return i;
  return cast(floor(cast(i, DType::Float64) / static_cast<double>(n)), DType::Int64);
}

// out[c] = x[c with c[axes[k]] = indices[k][c]]; the indices are in range by construction.
Tensor remap(const Tensor& x, const Shape& shape, const std::vector<int64_t>& axes, const std::vector<Tensor>& indices) {
  if (axes.empty()) return x;
  ir::Inputs in;
  in.push_back(x.node());
  for (const Tensor& t : indices) in.push_back(t.node());
  ir::Attrs a;
  a.dims = axes;
  return detail::record_node(ir::make_node(Op::Remap, x.dtype(), x.device(), Shape(shape), std::move(in), std::move(a)));
}

// Index math (integer and bool tensors over aranges) that an op records the same way call after
// call, such as a stencil loop's pad or slice assignment, 50 times a flush: shared while it is
// pending, like a scalar operand's `full` node (record.cpp, scalar_operand), so that the trace
// holds one set of its nodes instead of one a call. Every kernel that reads it computes it inline
// (fuser: Partition::inline_nodes). Only pending nodes are shared: one that a flush materialized
// (with fusion off, each op is its own kernel) would make kernels read it from memory. The cache
// holds weak references: it neither makes a node materialized (a handle would) nor keeps one
// alive, so once a flush's results drop their inputs, the next call records the math afresh.
class IndexMathCache {
 public:
  // The tensors stored under `key`, or an empty vector.
  std::vector<Tensor> find(const std::vector<int64_t>& key) {
    for (const Entry& e : entries_) {
      if (e.key != key) continue;
      std::vector<Tensor> out;
      for (const std::weak_ptr<ir::Node>& w : e.nodes) {
        ir::NodePtr n = w.lock();
        if (!n || n->realized()) return {};
        out.emplace_back(std::move(n));
      }
      return out;
    }
    return {};
  }
  void put(std::vector<int64_t> key, const std::vector<Tensor>& values) {
    Entry& e = entries_[next_++ % entries_.size()];
    e.key = std::move(key);
    e.nodes.clear();
    for (const Tensor& t : values) e.nodes.push_back(t.node());
  }
  // The tensors under `key`, else what `build` records (then stored under it).
  template <typename Build>
  std::vector<Tensor> get(std::vector<int64_t> key, const Build& build) {
    std::vector<Tensor> values = find(key);
    if (values.empty()) {
      values = build();
      put(std::move(key), values);
    }
    return values;
  }

 private:
  struct Entry {
    std::vector<int64_t> key;
    std::vector<std::weak_ptr<ir::Node>> nodes;
  };
  std::array<Entry, 8> entries_;
  size_t next_ = 0;
};

IndexMathCache& index_math_cache() {
  thread_local IndexMathCache cache;
  return cache;
}

std::vector<int64_t> normalize_dims(const char* op, std::vector<int64_t> dims, const Tensor& x) {
  std::vector<bool> seen(static_cast<size_t>(x.dim()), false);
  for (int64_t& d : dims) {
    d = detail::normalize_dim(op, d, x.dim(), x);
    if (seen[static_cast<size_t>(d)]) fail(op, "dim " + std::to_string(d) + " appears more than once", {&x});
    seen[static_cast<size_t>(d)] = true;
  }
  return dims;
}

}  // namespace

Tensor flip(const Tensor& x, std::vector<int64_t> dims) {
  detail::check_defined("flip", {&x});
  dims = normalize_dims("flip", std::move(dims), x);
  std::vector<int64_t> axes;
  std::vector<Tensor> idx;
  for (int64_t d : dims) {
    int64_t n = x.shape()[static_cast<size_t>(d)];
    if (n <= 1) continue;
    axes.push_back(d);
    idx.push_back((n - 1) - coord(x.shape(), static_cast<size_t>(d), x.device()));
  }
  return remap(x, x.shape(), axes, idx);
}

Tensor roll(const Tensor& x, std::vector<int64_t> shifts, std::vector<int64_t> dims) {
  detail::check_defined("roll", {&x});
  if (dims.empty()) {
    if (shifts.size() != 1) fail("roll", "without dims takes one shift, not " + list_str(shifts), {&x});
    if (x.dim() == 0) return x;
    return reshape(roll(flatten(x), shifts, {0}), x.shape());
  }
  if (shifts.size() != dims.size())
    fail("roll", "shifts " + list_str(shifts) + " and dims " + list_str(dims) + " differ in length", {&x});
  for (int64_t& d : dims) d = detail::normalize_dim("roll", d, x.dim(), x);
  // A dim named twice rolls twice: add up its shifts.
  std::vector<int64_t> axes, total;
  for (size_t k = 0; k < dims.size(); ++k) {
    auto it = std::find(axes.begin(), axes.end(), dims[k]);
    int64_t n = x.shape()[static_cast<size_t>(dims[k])];
    int64_t s = n == 0 ? 0 : ((shifts[k] % n) + n) % n;
    if (it == axes.end()) {
      axes.push_back(dims[k]);
      total.push_back(s);
    } else {
      int64_t& t = total[static_cast<size_t>(it - axes.begin())];
      t = (t + s) % n;
    }
  }
  std::vector<int64_t> used;
  std::vector<Tensor> idx;
  for (size_t k = 0; k < axes.size(); ++k) {
    if (total[k] == 0) continue;
    int64_t n = x.shape()[static_cast<size_t>(axes[k])];
    Tensor j = coord(x.shape(), static_cast<size_t>(axes[k]), x.device()) - total[k];
    used.push_back(axes[k]);
    idx.push_back(where(j < 0, j + n, j));
  }
  return remap(x, x.shape(), used, idx);
}

Tensor repeat(const Tensor& x, std::vector<int64_t> repeats) {
  detail::check_defined("repeat", {&x});
  if (static_cast<int64_t>(repeats.size()) < x.dim())
    fail("repeat", "needs at least " + std::to_string(x.dim()) + " repeats, got " + list_str(repeats), {&x});
  Shape in(repeats.size() - static_cast<size_t>(x.dim()), 1);
  in.insert(in.end(), x.shape().begin(), x.shape().end());
  Tensor src = reshape(x, in);
  Shape out = in;
  for (size_t d = 0; d < in.size(); ++d) {
    if (repeats[d] < 0) fail("repeat", "repeats " + list_str(repeats) + " has a negative count", {&x});
    auto n = rt::mul(in[d], repeats[d]);
    if (!n) fail("repeat", "the result's dim " + std::to_string(d) + " does not fit int64", {&x});
    out[d] = *n;
  }
  detail::check_shape("repeat", out, x.dtype());
  if (shape_numel(out) == 0) return zeros(out, x.dtype()).to(x.device());
  // Size-1 dims broadcast (a view); other repeated dims wrap: index i reads i mod n.
  Shape mid = in;
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] == 1) mid[d] = out[d];
  src = expand(src, mid);
  std::vector<int64_t> axes;
  std::vector<Tensor> idx;
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 1 || repeats[d] == 1) continue;
    Tensor i = coord(out, d, x.device());
    axes.push_back(static_cast<int64_t>(d));
    idx.push_back(i - floordiv(i, in[d]) * in[d]);
  }
  return remap(src, out, axes, idx);
}

Tensor tile(const Tensor& x, std::vector<int64_t> reps) {
  detail::UserOp user("tile");
  detail::check_defined("tile", {&x});
  // PyTorch: fewer reps than dims are padded with leading 1s.
  while (static_cast<int64_t>(reps.size()) < x.dim()) reps.insert(reps.begin(), 1);
  return repeat(x, std::move(reps));
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats, int64_t dim) {
  detail::check_defined("repeat_interleave", {&x});
  if (repeats < 0) fail("repeat_interleave", "repeats must be non-negative, not " + std::to_string(repeats), {&x});
  Tensor src = x.dim() == 0 ? reshape(x, {1}) : x;
  dim = detail::normalize_dim("repeat_interleave", dim, src.dim(), src);
  Shape out = src.shape();
  auto n = rt::mul(out[static_cast<size_t>(dim)], repeats);
  if (!n) fail("repeat_interleave", "the result does not fit int64", {&x});
  out[static_cast<size_t>(dim)] = *n;
  detail::check_shape("repeat_interleave", out, x.dtype());
  if (shape_numel(out) == 0) return zeros(out, x.dtype()).to(x.device());
  Tensor i = coord(out, static_cast<size_t>(dim), x.device());
  return remap(src, out, {dim}, {floordiv(i, repeats)});
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats) { return repeat_interleave(flatten(x), repeats, 0); }

namespace {

// tril / triu: x where (col - row) compares with `diagonal`, else 0, over the last two dims.
Tensor triangle(const char* op, const Tensor& x, int64_t diagonal, bool lower) {
  detail::check_defined(op, {&x});
  if (x.dim() < 2) fail(op, "needs at least 2 dims", {&x});
  size_t r = static_cast<size_t>(x.dim());
  Tensor diff = coord(x.shape(), r - 1, x.device()) - coord(x.shape(), r - 2, x.device());
  Tensor outside = lower ? diff > diagonal : diff < diagonal;
  return masked_fill(x, outside, 0);
}

}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) { return triangle("tril", x, diagonal, true); }
Tensor triu(const Tensor& x, int64_t diagonal) { return triangle("triu", x, diagonal, false); }

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  detail::check_defined("diagonal", {&x});
  if (x.dim() < 2) fail("diagonal", "needs at least 2 dims", {&x});
  dim1 = detail::normalize_dim("diagonal", dim1, x.dim(), x);
  dim2 = detail::normalize_dim("diagonal", dim2, x.dim(), x);
  if (dim1 == dim2) fail("diagonal", "dim1 and dim2 must differ (both " + std::to_string(dim1) + ")", {&x});
  int64_t n1 = x.shape()[static_cast<size_t>(dim1)], n2 = x.shape()[static_cast<size_t>(dim2)];
  int64_t len = offset >= 0 ? std::max<int64_t>(0, std::min(n1, n2 - offset))
                            : std::max<int64_t>(0, std::min(n1 + offset, n2));
  Shape shape;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != dim1 && d != dim2) shape.push_back(x.shape()[static_cast<size_t>(d)]);
  shape.push_back(len);
  ir::Attrs a;
  a.dims = {dim1, dim2};
  a.start = offset;
  return record(Op::Diagonal, x.dtype(), x.device(), shape, {&x}, std::move(a));
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  detail::check_defined("select", {&x});
  if (x.dim() == 0) fail("select", "cannot select from a rank-0 tensor", {&x});
  dim = detail::normalize_dim("select", dim, x.dim(), x);
  int64_t n = x.shape()[static_cast<size_t>(dim)];
  if (index < -n || index >= n)
    fail("select", "index " + std::to_string(index) + " is out of range for dim " + std::to_string(dim) + " of size " +
                       std::to_string(n),
         {&x});
  if (index < 0) index += n;
  return squeeze(slice(x, dim, index, index + 1), dim);
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  detail::check_defined("narrow", {&x});
  if (x.dim() == 0) fail("narrow", "cannot narrow a rank-0 tensor", {&x});
  dim = detail::normalize_dim("narrow", dim, x.dim(), x);
  int64_t n = x.shape()[static_cast<size_t>(dim)];
  if (start < 0) start += n;
  if (start < 0 || start > n || length < 0 || length > n - start)
    fail("narrow", "start " + std::to_string(start) + " and length " + std::to_string(length) +
                       " do not fit dim " + std::to_string(dim) + " of size " + std::to_string(n),
         {&x});
  return slice(x, dim, start, start + length);
}

std::vector<Tensor> split(const Tensor& x, std::vector<int64_t> sizes, int64_t dim) {
  detail::check_defined("split", {&x});
  if (x.dim() == 0) fail("split", "cannot split a rank-0 tensor", {&x});
  dim = detail::normalize_dim("split", dim, x.dim(), x);
  int64_t n = x.shape()[static_cast<size_t>(dim)], total = 0;
  for (int64_t s : sizes) {
    if (s < 0) fail("split", "sizes " + list_str(sizes) + " has a negative size", {&x});
    total += s;
  }
  if (total != n)
    fail("split", "sizes " + list_str(sizes) + " add up to " + std::to_string(total) + ", not dim " +
                      std::to_string(dim) + "'s size " + std::to_string(n),
         {&x});
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(s == n ? x : slice(x, dim, at, at + s));
    at += s;
  }
  return out;
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  detail::check_defined("split", {&x});
  if (x.dim() == 0) fail("split", "cannot split a rank-0 tensor", {&x});
  dim = detail::normalize_dim("split", dim, x.dim(), x);
  int64_t n = x.shape()[static_cast<size_t>(dim)];
  if (split_size < 0 || (split_size == 0 && n > 0))
    fail("split", "split_size must be positive, not " + std::to_string(split_size), {&x});
  std::vector<int64_t> sizes;
  for (int64_t at = 0; at < n; at += split_size) sizes.push_back(std::min(split_size, n - at));
  if (sizes.empty()) sizes.push_back(0);  // PyTorch: an empty dim splits into one empty tensor
  return split(x, sizes, dim);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  detail::check_defined("chunk", {&x});
  if (chunks <= 0) fail("chunk", "chunks must be positive, not " + std::to_string(chunks), {&x});
  if (x.dim() == 0) fail("chunk", "cannot chunk a rank-0 tensor", {&x});
  int64_t d = detail::normalize_dim("chunk", dim, x.dim(), x);
  int64_t n = x.shape()[static_cast<size_t>(d)];
  int64_t size = n == 0 ? 0 : (n - 1) / chunks + 1;  // ceil(n / chunks), without n + chunks overflowing
  if (size == 0) {  // PyTorch: an empty dim gives `chunks` empty pieces
    return std::vector<Tensor>(static_cast<size_t>(chunks), x);
  }
  return split(x, size, d);
}

std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  detail::check_defined("unbind", {&x});
  if (x.dim() == 0) fail("unbind", "cannot unbind a rank-0 tensor", {&x});
  dim = detail::normalize_dim("unbind", dim, x.dim(), x);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < x.shape()[static_cast<size_t>(dim)]; ++i) out.push_back(squeeze(slice(x, dim, i, i + 1), dim));
  return out;
}

Tensor movedim(const Tensor& x, std::vector<int64_t> source, std::vector<int64_t> destination) {
  detail::check_defined("movedim", {&x});
  if (source.size() != destination.size())
    fail("movedim", "source " + list_str(source) + " and destination " + list_str(destination) + " differ in length",
         {&x});
  source = normalize_dims("movedim", std::move(source), x);
  destination = normalize_dims("movedim", std::move(destination), x);
  size_t r = static_cast<size_t>(x.dim());
  std::vector<int64_t> perm(r, -1);
  std::vector<bool> taken(r, false);
  for (size_t k = 0; k < source.size(); ++k) {
    perm[static_cast<size_t>(destination[k])] = source[k];
    taken[static_cast<size_t>(source[k])] = true;
  }
  int64_t next = 0;
  for (size_t d = 0; d < r; ++d) {
    if (perm[d] >= 0) continue;
    while (taken[static_cast<size_t>(next)]) ++next;
    perm[d] = next++;
  }
  return permute(x, perm);
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) fail("stack", "needs at least one tensor");
  const Tensor& first = tensors[0];
  for (const Tensor& t : tensors) {
    detail::check_defined("stack", {&t});
    if (t.shape() != first.shape())
      fail("stack", "shapes must be equal: " + shape_str(first.shape()) + " vs " + shape_str(t.shape()), {&first, &t});
  }
  dim = detail::normalize_dim("stack", dim, first.dim() + 1, first);
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(unsqueeze(t, dim));
  return cat(parts, dim);
}

// ---- pad

Tensor pad(const Tensor& x, std::vector<int64_t> pads, PadMode mode, double value) {
  detail::UserOp user("pad");
  detail::check_defined("pad", {&x});
  const char* mode_name = mode == PadMode::Constant    ? "constant"
                          : mode == PadMode::Reflect   ? "reflect"
                          : mode == PadMode::Replicate ? "replicate"
                                                       : "circular";
  auto bad = [&](const std::string& why) {
    fail("pad", why + " (pads " + list_str(pads) + ", mode " + mode_name + ")", {&x});
  };
  if (pads.size() % 2 != 0) bad("needs an even number of pads");
  if (static_cast<int64_t>(pads.size() / 2) > x.dim()) bad("pads more dims than the tensor has");
  Shape out = x.shape();
  size_t r = out.size();
  std::vector<int64_t> before(r, 0);
  for (size_t k = 0; k < pads.size() / 2; ++k) {  // PyTorch's order: last dim first
    size_t d = r - 1 - k;
    int64_t lo = pads[2 * k], hi = pads[2 * k + 1], n = x.shape()[d];
    auto total = rt::add(n, lo);
    if (total) total = rt::add(*total, hi);
    if (!total || *total < 0)
      bad("gives dim " + std::to_string(d) + " of size " + std::to_string(n) + " a negative or too large size");
    if (mode == PadMode::Reflect && (lo >= n || hi >= n))
      bad("reflect pads must be smaller than the dim they pad (dim " + std::to_string(d) + " has size " +
          std::to_string(n) + ")");
    if (mode == PadMode::Circular && (lo > n || hi > n))
      bad("circular pads must be at most the dim they pad (dim " + std::to_string(d) + " has size " +
          std::to_string(n) + ")");
    if (mode == PadMode::Replicate && n == 0 && *total > 0)
      bad("cannot replicate an empty dim " + std::to_string(d));
    out[d] = *total;
    before[d] = lo;
  }
  detail::check_shape("pad", out, x.dtype());
  if (out == x.shape() && std::all_of(before.begin(), before.end(), [](int64_t b) { return b == 0; })) return x;
  if (shape_numel(out) == 0 || x.numel() == 0) return full(out, value, x.dtype()).to(x.device());
  std::vector<int64_t> axes;
  for (size_t d = 0; d < r; ++d)
    if (!(before[d] == 0 && out[d] == x.shape()[d])) axes.push_back(static_cast<int64_t>(d));
  // The index math depends on the shapes, pads, mode and device only: shared while pending.
  std::vector<int64_t> key = {1, static_cast<int64_t>(mode), static_cast<int64_t>(x.device().kind()), x.device().index()};
  key.insert(key.end(), x.shape().begin(), x.shape().end());
  key.insert(key.end(), out.begin(), out.end());
  key.insert(key.end(), before.begin(), before.end());
  const bool constant = mode == PadMode::Constant;
  // [inside (constant mode)] then the source index of each padded axis.
  std::vector<Tensor> math = index_math_cache().get(std::move(key), [&] {
    std::vector<Tensor> idx;
    Tensor inside;
    for (int64_t ax : axes) {
      size_t d = static_cast<size_t>(ax);
      int64_t n = x.shape()[d];
      Tensor j = coord(out, d, x.device()) - before[d];  // the source index before the mode's fold
      Tensor s;
      switch (mode) {
        case PadMode::Constant: {
          s = clamp(j, 0, n - 1);  // any place inside the source: the where picks the constant
          Tensor in_d = s == j;
          inside = inside.defined() ? (inside && in_d) : in_d;
          break;
        }
        case PadMode::Replicate: s = clamp(j, 0, n - 1); break;
        case PadMode::Reflect: s = (n - 1) - abs((n - 1) - abs(j)); break;  // valid for pads < n
        case PadMode::Circular: s = where(j < 0, j + n, where(j >= n, j - n, j)); break;
      }
      idx.push_back(s);
    }
    if (constant) idx.insert(idx.begin(), inside);
    return idx;
  });
  Tensor y = remap(x, out, axes, std::vector<Tensor>(math.begin() + (constant ? 1 : 0), math.end()));
  return constant ? where(math[0], y, full({}, value, x.dtype()).to(x.device())) : y;
}

// ---- slice assignment

Tensor index_put(const Tensor& x, const std::vector<Slice>& index, const Tensor& v) {
  detail::check_defined("index_put", {&x, &v});
  detail::check_same_device("index_put", {&x, &v});
  if (static_cast<int64_t>(index.size()) > x.dim())
    fail("index_put", std::to_string(index.size()) + " slices for " + std::to_string(x.dim()) + " dims", {&x, &v});
  size_t r = static_cast<size_t>(x.dim());
  Shape region = x.shape();
  std::vector<int64_t> start(r, 0), step(r, 1);
  for (size_t d = 0; d < index.size(); ++d) {
    int64_t n = x.shape()[d];
    const Slice& s = index[d];
    if (s.step <= 0)
      fail("index_put", "slice step must be positive, not " + std::to_string(s.step) + " (dim " + std::to_string(d) + ")",
           {&x, &v});
    auto clampb = [n](int64_t b) { return std::clamp<int64_t>(b < 0 ? b + n : b, 0, n); };
    int64_t lo = clampb(s.start), hi = clampb(s.end);
    region[d] = hi > lo ? (hi - lo - 1) / s.step + 1 : 0;
    start[d] = lo;
    step[d] = s.step;
  }
  // v broadcasts to the region (numpy's x[1:-1, ::2] = v), in x's dtype.
  bool fits = v.dim() <= x.dim();
  for (int64_t k = 1; fits && k <= v.dim(); ++k) {
    int64_t have = v.shape()[static_cast<size_t>(v.dim() - k)], want = region[r - static_cast<size_t>(k)];
    fits = have == want || have == 1;
  }
  if (!fits)
    fail("index_put", "value of shape " + shape_str(v.shape()) + " does not broadcast to the region " +
                          shape_str(region) + " of x",
         {&x, &v});
  if (shape_numel(region) == 0) return x;
  Tensor val = expand(detail::cast_to(v, x.dtype()), region);
  std::vector<int64_t> axes;
  for (size_t d = 0; d < r; ++d)
    if (!(start[d] == 0 && step[d] == 1 && region[d] == x.shape()[d])) axes.push_back(static_cast<int64_t>(d));
  if (axes.empty()) return expand(val, x.shape());  // the region is all of x
  // The region's index math depends on the shape, the slices and the device only: shared while
  // pending (a Jacobi loop records it once a flush).
  std::vector<int64_t> key = {2, static_cast<int64_t>(x.device().kind()), x.device().index()};
  key.insert(key.end(), x.shape().begin(), x.shape().end());
  key.insert(key.end(), start.begin(), start.end());
  key.insert(key.end(), step.begin(), step.end());
  key.insert(key.end(), region.begin(), region.end());
  // [inside] then the region index of each sliced axis.
  std::vector<Tensor> math = index_math_cache().get(std::move(key), [&] {
    std::vector<Tensor> out = {Tensor()};
    for (int64_t ax : axes) {
      size_t d = static_cast<size_t>(ax);
      Tensor j = coord(x.shape(), d, x.device()) - start[d];
      int64_t last = (region[d] - 1) * step[d];  // j of the region's last element
      Tensor q = floordiv(clamp(j, 0, last), step[d]);
      Tensor in_d = (step[d] == 1 ? q : q * step[d]) == j;  // inside the region's bounds and on its step
      out[0] = out[0].defined() ? (out[0] && in_d) : in_d;
      out.push_back(q);
    }
    return out;
  });
  return where(math[0], remap(val, x.shape(), axes, std::vector<Tensor>(math.begin() + 1, math.end())), x);
}

Tensor index_put(const Tensor& x, const std::vector<Slice>& index, Scalar v) {
  detail::check_defined("index_put", {&x});
  // An integer keeps every bit (through a double, 2^53 + 1 became 2^53).
  Tensor value = v.kind() == Scalar::Kind::Float ? full({}, v.to_double(), x.dtype()).to(x.device())
                                                 : detail::full_like_shape({}, v, x.dtype(), x.device());
  return index_put(x, index, value);
}

Tensor index_put(const Tensor& x, const Tensor& mask, const Tensor& v) {
  detail::check_defined("index_put", {&x, &mask, &v});
  if (is_integral(mask.dtype())) return index_put(x, std::vector<Tensor>{mask}, v);  // x[i] = v
  if (mask.dtype() != DType::Bool) fail("index_put", "a mask index must be bool", {&x, &mask, &v});
  if (detail::broadcast_shapes("index_put", x, mask) != x.shape())
    fail("index_put", "mask must broadcast to x's shape " + shape_str(x.shape()), {&x, &mask, &v});
  Tensor out = where(mask, detail::cast_to(v, x.dtype()), x);
  if (out.shape() != x.shape())
    fail("index_put", "value of shape " + shape_str(v.shape()) + " does not broadcast to x's shape " + shape_str(x.shape()),
         {&x, &mask, &v});
  return out;
}

}  // namespace lf
