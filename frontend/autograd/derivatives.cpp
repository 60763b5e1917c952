// The derivative column of the op table, expanded: one switch over every op (generated from
// codegen/ir/ops.inc, so a row without its vjp_<name> function does not compile), the elementwise
// rows' expressions in place, and a vjp_<name> function for each other row. Each records ordinary
// ops, which fuse with the rest of the trace. Formulas follow PyTorch's derivatives.yaml
// (1.13), including its choices at ties and kinks: max/min split a tie evenly, relu's kink has
// gradient 0, pow's exponent gradient is 0 where the base is 0.
#include "frontend/autograd/derivatives.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "codegen/ir/attention.h"
#include "codegen/ir/conv.h"
#include "codegen/ir/indexing.h"
#include "frontend/record.h"
#include "lazyfuse/autograd.h"
#include "lazyfuse/ops.h"

namespace lf::autograd {
namespace {

using ir::Op;

// The derivative column's two words: `none` (no gradient flows) and `zero` (zero almost
// everywhere).
struct None {};
struct Zero {};
[[maybe_unused]] constexpr None none{};
[[maybe_unused]] constexpr Zero zero{};
Tensor as_grad(const Tensor&, Tensor t) { return t; }
Tensor as_grad(const Tensor&, None) { return {}; }
Tensor as_grad(const Tensor& g, Zero) { return zeros_like(g); }

constexpr double kLn2 = std::numbers::ln2;
constexpr double kTwoOverSqrtPi = 2 * std::numbers::inv_sqrtpi;

// d/dx of x * Phi(x): Phi(x) + x * phi(x).
Tensor gelu_grad(const Tensor& x) {
  Tensor cdf = (erf(x * (1 / std::numbers::sqrt2)) + 1) * 0.5;
  Tensor pdf = exp(x * x * -0.5) * (std::numbers::inv_sqrtpi / std::numbers::sqrt2);
  return cdf + x * pdf;
}

// PyTorch's GeluBackward with approximate='tanh'.
Tensor gelu_tanh_grad(const Tensor& x) {
  constexpr double kBeta = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2 / pi)
  constexpr double kKappa = 0.044715;
  Tensor x_sq = x * x;
  Tensor t = tanh((x + x_sq * x * kKappa) * kBeta);
  Tensor right_derivative = (1 - t * t) * ((x_sq * (3 * kKappa) + 1) * kBeta);
  return (t + 1) * 0.5 + x * 0.5 * right_derivative;
}

Tensor silu_grad(const Tensor& x) {
  Tensor s = sigmoid(x);
  return s * (x * (1 - s) + 1);
}

std::vector<Tensor> elementwise(const VjpArgs& args) {
  const Tensor& g = args.g;
  [[maybe_unused]] const Tensor& y = args.y;
  switch (args.op) {
#define LF_UNARY(Name, str, rule, expr, grad) \
  case Op::Name: {                            \
    [[maybe_unused]] const Tensor& x = args.in[0]; \
    return {as_grad(g, grad)};                \
  }
#define LF_BINARY(Name, str, rule, expr, grad_a, grad_b)                          \
  case Op::Name: {                                                                \
    [[maybe_unused]] const Tensor& a = args.in[0];                                \
    [[maybe_unused]] const Tensor& b = args.in[1];                                \
    return {args.needed[0] ? as_grad(g, grad_a) : Tensor(), args.needed[1] ? as_grad(g, grad_b) : Tensor()}; \
  }
#include "codegen/ir/ops.inc"
    default: break;
  }
  throw Error(std::string("lf::grad: internal: ") + ir::op_name(args.op) + " is not elementwise");
}

// g of a reduction's shape back over x's shape: the reduced dims put back as 1, then expanded.
Tensor unreduce(const Tensor& g, const Shape& shape, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor r = g;
  if (!keepdim) {
    Shape kept = shape;
    for (int64_t d : dims) kept[static_cast<size_t>(d)] = 1;
    r = reshape(r, kept);
  }
  return expand(r, shape);
}

std::vector<Tensor> no_grad(const VjpArgs& args) { return std::vector<Tensor>(args.in.size()); }

std::vector<Tensor> vjp_leaf(const VjpArgs& args) { return no_grad(args); }
std::vector<Tensor> vjp_none(const VjpArgs& args) { return no_grad(args); }

std::vector<Tensor> vjp_where(const VjpArgs& args) {
  const Tensor& c = args.in[0];
  return {Tensor(), args.needed[1] ? where(c, args.g, 0) : Tensor(), args.needed[2] ? where(c, 0, args.g) : Tensor()};
}

std::vector<Tensor> vjp_cast(const VjpArgs& args) {
  const Tensor& x = args.in[0];
  if (!is_floating(x.dtype())) return {Tensor()};
  return {cast(args.g, x.dtype())};
}

std::vector<Tensor> vjp_sum(const VjpArgs& args) {
  return {unreduce(args.g, args.in[0].shape(), args.attrs.dims, args.attrs.keepdim)};
}

// d prod / d x_i is the product of the others: exclusive running products from both ends, so a
// zero in the slab gives the exact answer (y / x would be 0 / 0).
std::vector<Tensor> vjp_prod(const VjpArgs& args) {
  const Tensor& x = args.in[0];
  const auto& dims = args.attrs.dims;
  Shape shape = x.shape();
  if (x.numel() == 0) return {zeros_like(x)};
  std::vector<int64_t> perm, inverse(shape.size());
  Shape kept;
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), static_cast<int64_t>(d))) {
      perm.push_back(static_cast<int64_t>(d));
      kept.push_back(shape[d]);
    }
  for (int64_t d : dims) {
    perm.push_back(d);
    n *= shape[static_cast<size_t>(d)];
  }
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  Tensor xt = permute(x, perm);
  Shape flat = kept;
  flat.push_back(n);
  Tensor xf = reshape(xt, flat);
  auto exclusive = [&](const Tensor& v) {
    Tensor one = ones_like(slice(v, -1, 0, 1));
    return n == 1 ? one : cat({one, slice(cumprod(v, -1), -1, 0, n - 1)}, -1);
  };
  Tensor others = exclusive(xf) * flip(exclusive(flip(xf, {-1})), {-1});
  Tensor back = permute(reshape(others, xt.shape()), inverse);
  return {back * unreduce(args.g, shape, dims, args.attrs.keepdim)};
}

// max / min over dims (amax / amin): the gradient is split evenly between the tied extrema (NaN
// ties NaN).
std::vector<Tensor> vjp_extremum(const VjpArgs& args) {
  const Tensor& x = args.in[0];
  const auto& dims = args.attrs.dims;
  bool keepdim = args.attrs.keepdim;
  Tensor y = unreduce(args.y, x.shape(), dims, keepdim);
  Tensor mask = (x == y) || (isnan(x) && isnan(y));
  Tensor count = sum(cast(mask, x.dtype()), dims, true);
  return {where(mask, unreduce(args.g, x.shape(), dims, keepdim) / count, 0)};
}

std::vector<Tensor> vjp_reshape(const VjpArgs& args) { return {reshape(args.g, args.in[0].shape())}; }

std::vector<Tensor> vjp_permute(const VjpArgs& args) {
  const auto& perm = args.attrs.dims;
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  // A cotangent that is itself a pending permute (vjp_matmul's (g^T a)^T for linear's weight) is
  // permuted once, from its source: a transpose of a transpose is the source itself, not a view of
  // a view that the fuser would copy. The cotangent is the backward's own value: no gradient is
  // asked of it.
  const ir::Node& gn = *args.g.node();
  if (gn.op == Op::Permute && gn.attrs.dims.size() == perm.size()) {
    std::vector<int64_t> composed(perm.size());
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) {
      composed[i] = gn.attrs.dims[static_cast<size_t>(inverse[i])];
      identity &= composed[i] == static_cast<int64_t>(i);
    }
    Tensor source(gn.inputs[0]);
    return {identity ? source : permute(source, composed)};
  }
  return {permute(args.g, inverse)};
}

std::vector<Tensor> vjp_expand(const VjpArgs& args) {
  const Shape& in = args.in[0].shape();
  const Shape& out = args.g.shape();
  std::vector<int64_t> dims;
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] == 1 && out[d] != 1) dims.push_back(static_cast<int64_t>(d));
  if (dims.empty()) return {reshape(args.g, in)};
  return {sum(args.g, dims, true)};
}

std::vector<Tensor> vjp_slice(const VjpArgs& args) {
  const Tensor& x = args.in[0];
  const auto& at = args.attrs;
  int64_t len = args.g.shape()[static_cast<size_t>(at.axis)];
  if (len == 0) return {zeros_like(x)};
  std::vector<Slice> region(static_cast<size_t>(at.axis) + 1, Slice{});
  region.back() = Slice{at.start, at.start + (len - 1) * at.step + 1, at.step};
  return {index_put(zeros_like(x), region, args.g)};
}

// Any view with distinct positions: the cotangent written at the positions the view reads.
Tensor unview(const Tensor& x, const Tensor& positions, const Tensor& g) {
  Tensor flat = reshape(zeros_like(x), {x.numel()});
  return reshape(scatter(flat, 0, reshape(positions, {-1}), reshape(g, {-1})), x.shape());
}

std::vector<Tensor> vjp_diagonal(const VjpArgs& args) {
  const Tensor& x = args.in[0];
  Tensor pos = reshape(arange(0, static_cast<double>(x.numel()), 1, DType::Int64).to(x.device()), x.shape());
  const auto& d = args.attrs.dims;
  return {unview(x, diagonal(pos, args.attrs.start, d[0], d[1]), args.g)};
}

std::vector<Tensor> vjp_cat(const VjpArgs& args) {
  std::vector<Tensor> out;
  int64_t axis = args.attrs.axis, offset = 0;
  for (size_t i = 0; i < args.in.size(); ++i) {
    int64_t len = args.in[i].shape()[static_cast<size_t>(axis)];
    out.push_back(args.needed[i] ? slice(args.g, axis, offset, offset + len) : Tensor());
    offset += len;
  }
  return out;
}

// Whether matrix `t` is the transpose of another value (linear's weight: x @ w.mT()): a permute
// swapping the two dims, pending or kept as history, or a computed view with column-major strides.
bool is_transposed_matrix(const Tensor& t) {
  const ir::Node& n = *t.node();
  if (n.shape.size() != 2) return false;
  const Op op = n.history ? n.history->op : n.op;
  if (op == Op::Permute) {
    const std::vector<int64_t>& p = (n.history ? n.history->attrs : n.attrs).dims;
    return p.size() == 2 && p[0] == 1 && p[1] == 0;
  }
  return n.realized() && n.shape[0] > 1 && n.shape[1] > 1 && n.layout.strides[0] == 1;
}

std::vector<Tensor> vjp_matmul(const VjpArgs& args) {
  const Tensor& a = args.in[0];
  const Tensor& b = args.in[1];
  // b's cotangent is a^T g. Where b is itself a transpose (linear's w.mT()), that cotangent goes
  // back through the transpose to w: compute it as (g^T a)^T, so that w's gradient is g^T a, a
  // row-major matrix, rather than a transposed view that each reader then copies (the MLP step's
  // three weight gradients: 30 copies, 36 ms of 10 CPU steps, 2026-12-04).
  Tensor gb;
  if (args.needed[1]) {
    gb = a.dim() == 2 && args.g.dim() == 2 && is_transposed_matrix(b) ? transpose(matmul(transpose(args.g, 0, 1), a), 0, 1)
                                                                       : matmul(transpose(a, -1, -2), args.g);
  }
  return {args.needed[0] ? matmul(args.g, transpose(b, -1, -2)) : Tensor(), gb};
}

// conv2d's input gradient is the transposed convolution of g (a stride-1 convolution of g with
// stride - 1 zeros between its elements, padded so its output has x's size, with the weight
// flipped and its channels swapped per group); the weight's is a convolution of x with g as the
// kernel, the batch as channels (stride and dilation trade places), groups kept apart.
std::vector<Tensor> vjp_conv2d(const VjpArgs& args) {
  const Tensor& x = args.in[0];
  const Tensor& w = args.in[1];
  const Tensor& g = args.g;
  const auto& d = args.attrs.dims;
  const int64_t sh = d[0], sw = d[1], pt = d[2], pb = d[3], pl = d[4], pr = d[5], dh = d[6], dw = d[7], G = d[8];
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t O = w.size(0), kh = w.size(2), kw = w.size(3);
  const int64_t Ho = g.size(2), Wo = g.size(3);
  std::vector<Tensor> out(2);
  if (g.numel() == 0 || x.numel() == 0) {
    out[0] = zeros_like(x);
    out[1] = zeros_like(w);
    return out;
  }
  if (args.needed[0]) {
    Tensor gz = g;
    const int64_t Hz = (Ho - 1) * sh + 1, Wz = (Wo - 1) * sw + 1;
    if (sh != 1 || sw != 1) {
      Tensor z = detail::full_like_shape({N, O, Hz, Wz}, 0, g.dtype(), g.device());
      gz = index_put(z, {Slice{}, Slice{}, Slice{0, Hz, sh}, Slice{0, Wz, sw}}, g);
    }
    const int64_t top = dh * (kh - 1) - pt, left = dw * (kw - 1) - pl;
    Tensor gp = pad(gz, {left, W - Wz + pl, top, H - Hz + pt});
    Tensor wt = reshape(w, {G, O / G, C / G, kh, kw});
    wt = flip(reshape(transpose(wt, 1, 2), {C, O / G, kh, kw}), {2, 3});
    out[0] = conv2d(gp, wt, {}, 1, 0, Size2(dh, dw), G);
  }
  if (args.needed[1]) {
    Tensor xin = reshape(permute(reshape(x, {N, G, C / G, H, W}), {2, 1, 0, 3, 4}), {C / G, G * N, H, W});
    xin = pad(xin, {pl, pr, pt, pb});
    Tensor gw = reshape(permute(reshape(g, {N, G, O / G, Ho, Wo}), {1, 2, 0, 3, 4}), {O, N, Ho, Wo});
    Tensor r = conv2d(xin, gw, {}, Size2(dh, dw), 0, Size2(sh, sw), G);  // [C / G, O, >= kh, >= kw]
    out[1] = transpose(slice(slice(r, 2, 0, kh), 3, 0, kw), 0, 1);
  }
  return out;
}

// The [out, in] matrix of an average pool's weights along one axis: output i averages its window
// clipped to the input, divided by the window's length clipped to the padded input
// (count_include_pad) or to the input; adaptive windows are [floor(i in / out), ceil((i+1) in / out)).
// Pooling's divisor is the product of the two axes' lengths, so the pool is separable.
Tensor pool_weights(const ir::PoolParams& p, bool along_h, int64_t in, int64_t out, DType dtype, Device device) {
  std::vector<double> m(static_cast<size_t>(in * out), 0.0);
  const int64_t k = along_h ? p.kernel_h : p.kernel_w, s = along_h ? p.stride_h : p.stride_w;
  const int64_t pad = along_h ? p.pad_h : p.pad_w;
  for (int64_t i = 0; i < out; ++i) {
    int64_t lo, hi, divisor;
    if (p.kind == ir::PoolParams::kAdaptiveAvg) {
      lo = i * in / out;
      hi = ((i + 1) * in + out - 1) / out;
      divisor = hi - lo;
    } else {
      lo = i * s - pad;
      hi = std::min(lo + k, in + pad);
      divisor = hi - lo;
      lo = std::max<int64_t>(lo, 0);
      hi = std::min(hi, in);
      if (!p.count_include_pad) divisor = hi - lo;
    }
    for (int64_t j = lo; j < hi; ++j) m[static_cast<size_t>(i * in + j)] = 1.0 / static_cast<double>(divisor);
  }
  return cast(from_vector(m, {out, in}).to(device), dtype);
}

std::vector<Tensor> vjp_pool2d(const VjpArgs& args) {
  const Tensor& x = args.in[0];
  const Tensor& g = args.g;
  ir::PoolParams p{args.attrs.dims[0], args.attrs.dims[1], args.attrs.dims[2], args.attrs.dims[3],
                   args.attrs.dims[4], args.attrs.dims[5], args.attrs.dims[6], args.attrs.dims[7]};
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), Ho = g.size(2), Wo = g.size(3);
  if (g.numel() == 0 || x.numel() == 0) return {zeros_like(x)};
  if (p.kind == ir::PoolParams::kMax) {
    // Each window's maximum takes the window's gradient (the first maximum, or the last NaN, as
    // the forward's indices): a scatter-add of g at max_pool2d's indices.
    bool ceil_mode = ir::PoolParams::out_size(H, p.kernel_h, p.stride_h, p.pad_h, false) != Ho ||
                     ir::PoolParams::out_size(W, p.kernel_w, p.stride_w, p.pad_w, false) != Wo;
    Tensor idx = max_pool2d_with_indices(x, Size2(p.kernel_h, p.kernel_w), Size2(p.stride_h, p.stride_w),
                                         Size2(p.pad_h, p.pad_w), ceil_mode)
                     .second;
    Tensor plane = detail::full_like_shape({N, C, H * W}, 0, x.dtype(), x.device());
    return {reshape(scatter_add(plane, 2, reshape(idx, {N, C, Ho * Wo}), reshape(g, {N, C, Ho * Wo})), x.shape())};
  }
  Tensor ah = pool_weights(p, true, H, Ho, x.dtype(), x.device());
  Tensor aw = pool_weights(p, false, W, Wo, x.dtype(), x.device());
  return {matmul(matmul(transpose(ah, 0, 1), g), aw)};
}

std::vector<Tensor> vjp_gather(const VjpArgs& args) {
  const Tensor& src = args.in[0];
  return {scatter_add(zeros_like(src), args.attrs.axis, args.in[1], args.g), Tensor()};
}

std::vector<Tensor> vjp_scatter_add(const VjpArgs& args) {
  return {args.g, Tensor(), args.needed[2] ? gather(args.g, args.attrs.axis, args.in[1]) : Tensor()};
}

std::vector<Tensor> vjp_scatter(const VjpArgs& args) {
  using R = ir::ScatterReduce;
  const Tensor& self = args.in[0];
  const Tensor& index = args.in[1];
  const Tensor& g = args.g;
  const int64_t axis = args.attrs.axis;
  const bool include_self = args.attrs.keepdim;
  const R mode = static_cast<R>(args.attrs.start);
  switch (mode) {
    case R::Assign:  // written positions take src's gradient; self keeps the rest
      return {scatter(g, axis, index, 0), Tensor(), args.needed[2] ? gather(g, axis, index) : Tensor()};
    case R::Sum:
      return {include_self ? g : scatter(g, axis, index, 0), Tensor(),
              args.needed[2] ? gather(g, axis, index) : Tensor()};
    case R::Mean: {
      const Tensor& src = args.in[2];
      Tensor count = scatter_add(include_self ? ones_like(self) : zeros_like(self), axis, index, ones_like(src));
      Tensor shared = g / where(count == 0, 1, count);
      Tensor received = scatter(zeros_like(self, DType::Bool), axis, index, true);
      Tensor gs = include_self ? where(received, shared, g) : where(received, 0, g);
      return {gs, Tensor(), args.needed[2] ? gather(shared, axis, index) : Tensor()};
    }
    case R::AMax:
    case R::AMin: {
      // PyTorch's: the gradient split evenly between self and the sources equal to the result.
      const Tensor& src = args.in[2];
      Tensor at_src = gather(args.y, axis, index);
      Tensor self_is = cast(self == args.y, self.dtype()), src_is = cast(src == at_src, src.dtype());
      Tensor share = g / scatter_add(self_is, axis, index, src_is);
      Tensor gs = self_is * share;
      return {include_self ? gs : scatter(gs, axis, index, 0), Tensor(),
              args.needed[2] ? src_is * gather(share, axis, index) : Tensor()};
    }
    case R::Prod: {
      // PyTorch's: the product of the others, exact where one factor is 0 (self's zeros taken out
      // of its product, a source's single zero taken out of its destination's).
      const Tensor& src = args.in[2];
      const std::string name = ir::scatter_reduce_name(mode);
      Tensor masked_self = where(self == 0, 1, self);
      Tensor gs = g * scatter_reduce(masked_self, axis, index, src, name, include_self) / masked_self;
      Tensor gsrc;
      if (args.needed[2]) {
        Tensor src_zero = src == 0;
        Tensor zeros_at = gather(scatter_add(zeros_like(self), axis, index, cast(src_zero, self.dtype())), axis, index);
        Tensor single_zero = src_zero && (zeros_at == 1);
        Tensor without = scatter_reduce(self, axis, index, where(single_zero, 1, src), name, include_self);
        gsrc = where(single_zero, gather(g * without, axis, index), gather(g * args.y, axis, index) / where(src_zero, 1, src));
      }
      return {include_self ? gs : scatter(gs, axis, index, 0), Tensor(), gsrc};
    }
  }
  throw Error(std::string("lf::grad: internal: scatter reduce mode ") + ir::scatter_reduce_name(mode));
}

Tensor reverse_cumsum(const Tensor& v, int64_t axis) { return flip(cumsum(flip(v, {axis}), axis), {axis}); }

std::vector<Tensor> vjp_cumsum(const VjpArgs& args) { return {reverse_cumsum(args.g, args.attrs.axis)}; }

// sum over j >= i of g_j y_j / x_i, except at zeros: up to a row's first zero z that is exact;
// past it every product is 0; at z itself it is the same sum over the products with x_z = 1.
std::vector<Tensor> vjp_cumprod(const VjpArgs& args) {
  const Tensor& x = args.in[0];
  const int64_t axis = args.attrs.axis;
  Tensor is_zero = x == 0;
  Tensor first_zero = is_zero && (cumsum(is_zero, axis) == 1);
  Tensor y_without = cumprod(where(first_zero, 1, x), axis);
  Tensor before = reverse_cumsum(args.g * args.y, axis) / where(is_zero, 1, x);
  return {where(first_zero, reverse_cumsum(args.g * y_without, axis), where(is_zero, 0, before))};
}

// sum over j >= i of g_j exp(x_i - y_j), summed in log space for the positive and the negative
// parts of g apart, so that neither exp overflows (PyTorch's formula).
std::vector<Tensor> vjp_logcumsumexp(const VjpArgs& args) {
  const Tensor& x = args.in[0];
  const int64_t axis = args.attrs.axis;
  const double inf = std::numeric_limits<double>::infinity();
  auto part = [&](const Tensor& log_g) {
    return exp(flip(logcumsumexp(flip(log_g - args.y, {axis}), axis), {axis}) + x);
  };
  Tensor g = args.g;
  Tensor pos = where(g > 0, log(where(g > 0, g, 1)), -inf);
  Tensor neg = where(g < 0, log(where(g < 0, -g, 1)), -inf);
  return {part(pos) - part(neg)};
}

// remap: out[c] = src[c with c[dims[k]] = index_k[c]]; the cotangent is added at each element's
// source position (several elements may read one: pad's replicated border, repeat, tile).
std::vector<Tensor> vjp_remap(const VjpArgs& args) {
  const Tensor& src = args.in[0];
  const Shape& out_shape = args.g.shape();
  const auto& dims = args.attrs.dims;
  std::vector<Tensor> out(args.in.size());
  Tensor flat;
  int64_t stride = 1;
  for (size_t d = src.dim(); d-- > 0;) {
    auto k = std::find(dims.begin(), dims.end(), static_cast<int64_t>(d));
    Tensor c = k != dims.end() ? args.in[1 + static_cast<size_t>(k - dims.begin())]
                               : detail::coord(out_shape, d, src.device());
    Tensor term = stride == 1 ? c : c * stride;
    flat = flat.defined() ? flat + term : term;
    stride *= src.shape()[d];
  }
  Tensor zeros = reshape(zeros_like(src), {src.numel()});
  if (!flat.defined()) flat = detail::full_like_shape(out_shape, 0, DType::Int64, src.device());  // rank 0
  out[0] = reshape(scatter_add(zeros, 0, reshape(flat, {-1}), reshape(args.g, {-1})), src.shape());
  return out;
}

// An attention node (made by the rewrite from the user's ops at a flush: only a value kept by
// lf::KeepGraph has one in its history) is differentiated through the ops it stands for.
std::vector<Tensor> vjp_attention(const VjpArgs& args) {
  ir::AttentionParams p{args.attrs.value, args.attrs.value2, static_cast<ir::AttentionParams::Mask>(args.attrs.axis),
                        args.attrs.start != 0, args.attrs.ivalue != 0};
  const Tensor &q = args.in[0], &k = args.in[1], &v = args.in[2];
  const double inf = std::numeric_limits<double>::infinity();
  Tensor s = matmul(q, transpose(k, -1, -2)) * p.scale;
  if (p.mask == ir::AttentionParams::kAdd) s = s + args.in[3];
  if (p.mask == ir::AttentionParams::kKeep) s = where(args.in[3], s, -inf);
  if (p.mask == ir::AttentionParams::kDrop) s = where(args.in[3], -inf, s);
  if (p.causal) {
    const int64_t tq = q.size(-2), tk = k.size(-2);
    Shape ij{tq, tk};
    s = where(detail::coord(ij, 1, q.device()) > detail::coord(ij, 0, q.device()), -inf, s);
  }
  Tensor o = matmul(softmax(s * p.post_scale, -1), v);
  if (p.heads_last) o = transpose(o, -3, -2);
  std::vector<Tensor> wrt{q, k, v};
  bool mask_grad = p.mask == ir::AttentionParams::kAdd && args.needed.size() > 3 && args.needed[3];
  if (mask_grad) wrt.push_back(args.in[3]);
  std::vector<Tensor> grads = grad(o, wrt, args.g);
  grads.resize(args.in.size());
  return grads;
}

}  // namespace

std::vector<Tensor> vjp(const VjpArgs& args) {
  switch (args.op) {
#define LF_UNARY(Name, str, rule, expr, grad) case Op::Name:
#define LF_BINARY(Name, str, rule, expr, grad_a, grad_b) case Op::Name:
#include "codegen/ir/ops.inc"
    return elementwise(args);
#define LF_GENERATOR(Name, str, grad) \
  case Op::Name: return vjp_##grad(args);
#define LF_REDUCE(Name, str, grad) \
  case Op::Name: return vjp_##grad(args);
#define LF_VIEW(Name, str, grad) \
  case Op::Name: return vjp_##grad(args);
#define LF_SPECIAL(Name, str, grad) \
  case Op::Name: return vjp_##grad(args);
#include "codegen/ir/ops.inc"
  }
  throw Error(std::string("lf::grad: internal: unknown op ") + ir::op_name(args.op));
}

}  // namespace lf::autograd
