// Complex numbers as ops on (re, im) pairs (lazyfuse/complex.h, frontend/complex.h).
//
// Every formula here is the one numpy and PyTorch use (their C++ std::complex), written with real
// tensor ops so that the fuser sees through it: a complex product is one kernel of four products
// and two sums, like any elementwise chain. Where the textbook formula overflows or cancels, the
// scaled form is used (|z| as max * sqrt(1 + (min / max)^2), Smith's division, the half-angle
// square root).
#include "frontend/complex.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "frontend/record.h"
#include "lazyfuse/complex.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace detail {
namespace {

using ir::NodePtr;
using ir::Op;

// The pairs are planar: dim 0 of size 2 holds the real parts, then the imaginary parts.
Tensor re(const Tensor& r) { return select(r, 0, 0); }
Tensor im(const Tensor& r) { return select(r, 0, 1); }
// Pairs [2, S...] or a real value [S...] with its dims aligned to `rank` complex dims (leading
// 1s after the pair dim), so that broadcasting lines up the values' dims and not the pair dim.
Tensor aligned_pairs(const Tensor& r, int64_t rank) {
  if (r.dim() - 1 == rank) return r;
  Shape s(static_cast<size_t>(rank - (r.dim() - 1)), 1);
  s.insert(s.begin(), 2);
  s.insert(s.end(), r.shape().begin() + 1, r.shape().end());
  return reshape(r, s);
}
Tensor aligned_real(const Tensor& x, int64_t rank) {  // [1, 1..., S...]
  Shape s(static_cast<size_t>(rank - x.dim() + 1), 1);
  s.insert(s.end(), x.shape().begin(), x.shape().end());
  return reshape(x, s);
}
// The index of each pair's part, 0 (real) or 1, shaped [2, 1, ...] for `rank` complex dims.
Tensor part_index(int64_t rank, Device device) {
  Shape s(static_cast<size_t>(rank), 1);
  s.insert(s.begin(), 2);
  return reshape(coord({2}, 0, device), s);
}
// (a, b) as pairs, broadcast: a stack along the pair dim, which the fuser reads through (the
// cat's index math pushes down into a and b's own ops), and whose two halves are contiguous runs.
Tensor pack(const Tensor& a, const Tensor& b) {
  if (a.shape() == b.shape()) return stack({a, b}, 0);
  Shape s = broadcast_shapes("complex", a, b);
  return stack({broadcast_to(a, s), broadcast_to(b, s)}, 0);
}
// The same for values made of generators only (numbers, `full`): where(k == 0, a, b) over the
// pair dim k, computed inside every kernel that reads it.
Tensor pack_constants(const Tensor& a, const Tensor& b) {
  return where(part_index(a.dim(), a.device()) == 0, unsqueeze(a, 0), unsqueeze(b, 0));
}
Tensor zeros_as(const Tensor& x) { return full_like_shape(x.shape(), 0.0, x.dtype(), x.device()); }

// The complex dtype an op on `a` and `b` computes in.
DType complex_common(const Tensor& a, const Tensor& b) {
  DType d = promote(a.dtype(), b.dtype());
  return is_complex(d) ? d : complex_of(d);
}

// |z| without overflow or underflow in the squares (C's hypot): inf if either part is inf, even
// beside a NaN; NaN otherwise if either is NaN.
Tensor modulus(const Tensor& r) {
  Tensor a = abs(re(r)), b = abs(im(r));
  Tensor big = maximum(a, b), small = minimum(a, b);
  Tensor q = small / big;
  Tensor m = big * sqrt(q * q + 1.0);
  m = where(big == 0.0, 0.0, m);
  return where(isinf(a) || isinf(b), std::numeric_limits<double>::infinity(), m);
}

Tensor argument(const Tensor& r) { return atan2(im(r), re(r)); }

// (a + ib)(c + id), parts broadcast.
Tensor mul_pairs(const Tensor& x, const Tensor& y) {
  Tensor a = re(x), b = im(x), c = re(y), d = im(y);
  return pack(a * c - b * d, a * d + b * c);
}

// Smith's algorithm: (a + ib) / (c + id) scaled by the larger of |c| and |d|, so that c^2 + d^2
// neither overflows nor underflows where the quotient is representable.
Tensor div_pairs(const Tensor& x, const Tensor& y) {
  Tensor a = re(x), b = im(x), c = re(y), d = im(y);
  Tensor c_big = abs(c) >= abs(d);
  Tensor t1 = d / c, den1 = c + d * t1;   // |c| >= |d|
  Tensor t2 = c / d, den2 = d + c * t2;   // |d| > |c|
  Tensor re1 = (a + b * t1) / den1, im1 = (b - a * t1) / den1;
  Tensor re2 = (a * t2 + b) / den2, im2 = (b * t2 - a) / den2;
  return pack(where(c_big, re1, re2), where(c_big, im1, im2));
}

Tensor exp_pairs(const Tensor& r) {
  Tensor a = re(r), b = im(r);
  Tensor e = exp(a);
  // exp(inf + 0i) is inf + 0i (not inf * sin(0) = NaN), as std::exp.
  return pack(e * cos(b), where(b == 0.0, b, e * sin(b)));
}

Tensor log_pairs(const Tensor& r) { return pack(log(modulus(r)), argument(r)); }

// The principal square root by half-angle formulas (std::sqrt's): t = sqrt((|a| + |z|) / 2); for
// a >= 0 it is t + i b / 2t, else |b| / 2t + i copysign(t, b). No cancellation either side.
Tensor sqrt_pairs(const Tensor& r) {
  Tensor a = re(r), b = im(r);
  Tensor t = sqrt((abs(a) + modulus(r)) * 0.5);
  Tensor zero = t == 0.0;
  Tensor q = where(zero, 0.0, b / (t * 2.0));
  Tensor aq = where(zero, 0.0, abs(b) / (t * 2.0));
  Tensor pos = a >= 0.0;
  return pack(where(pos, t, aq), where(pos, where(zero, b, q), where(b < 0.0, -t, t)));
}

Tensor from_polar(const Tensor& m, const Tensor& th) {
  // A zero modulus gives 0 (not 0 * cos(inf) = NaN) for finite angles; NaN stays NaN.
  return pack(m * cos(th), m * sin(th));
}

// The structural ops record_complex replays on the pairs.
bool structural(Op op) {
  switch (op) {
    case Op::Reshape:
    case Op::Expand:
    case Op::Slice:
    case Op::Permute:
    case Op::Copy:
    case Op::Cat:
    case Op::Where:
    case Op::Gather:
    case Op::Remap: return true;
    default: return false;
  }
}

[[noreturn]] void not_for_complex(const char* op, std::initializer_list<const Tensor*> args) {
  fail(op, "is not defined for complex tensors (docs/complex.md lists the ops that are)", args);
}

}  // namespace

Tensor pairs(const Tensor& z) {
  const NodePtr& n = z.node();
  if (n->op == Op::ComplexView) return Tensor(n->inputs[0]);
  // A complex `full` made without record (scalar_operand): its value, imaginary part 0.
  if (n->op == Op::Full) {
    const DType part = complex_part(n->dtype);
    return pack_constants(full_like_shape(n->shape, n->attrs.value, part, n->device), full_like_shape(n->shape, 0.0, part, n->device));
  }
  throw std::logic_error(std::string("internal: a complex ") + ir::op_name(n->op) + " node without pairs");
}

Tensor pairs(const Tensor& x, DType part) {
  if (is_complex(x.dtype())) return pairs(cast_to(x, complex_of(part)));
  Tensor r = cast_to(x, part);
  return pack(r, zeros_as(r));
}

Tensor wrap_complex(const Tensor& r, DType d) {
  Shape s(r.shape().begin() + 1, r.shape().end());
  NodePtr w = ir::make_node(Op::ComplexView, d, r.device(), std::move(s));
  w->inputs.push_back(r.node());
  return Tensor(std::move(w));  // the handle counts as one on the pairs too (lf::Tensor's constructor)
}

Tensor record_complex(NodePtr node) {
  const Op op = node->op;
  DType d = node->dtype;
  for (const NodePtr& in : node->inputs)
    if (is_complex(in->dtype)) d = is_complex(d) ? d : in->dtype;
  std::vector<Tensor> args;  // handles for the message and the lifting below
  for (const NodePtr& in : node->inputs) args.emplace_back(in);
  auto fail_args = [&] {
    std::string got;
    for (const Tensor& t : args) got += (got.empty() ? "" : ", ") + describe(t);
    fail(ir::op_name(op), std::string("is not defined for complex tensors (docs/complex.md lists the ops that are)") +
                              (got.empty() ? "" : " (got " + got + ")"));
  };
  if (!is_complex(d) || !(structural(op) || op == Op::Full)) fail_args();
  const DType part = complex_part(d);
  Shape shape = node->shape;
  shape.insert(shape.begin(), 2);
  if (op == Op::Full) {
    return wrap_complex(pack_constants(full_like_shape(node->shape, node->attrs.value, part, node->device),
                             full_like_shape(node->shape, 0.0, part, node->device)), d);
  }
  // A complex operand is its pairs; a real one of the node's shape (an index, a condition) is
  // broadcast along the pair dim. Every dim the op names moves up one, past the pair dim.
  ir::Inputs inputs;
  for (const Tensor& t : args) {
    if (is_complex(t.dtype())) {
      inputs.push_back(pairs(t).node());
    } else {
      Shape s1 = t.shape(), s2 = t.shape();
      s1.insert(s1.begin(), 1);
      s2.insert(s2.begin(), 2);
      inputs.push_back(expand(reshape(t, s1), s2).node());
    }
  }
  ir::Attrs attrs = node->attrs;
  switch (op) {
    case Op::Permute:
      for (int64_t& dd : attrs.dims) ++dd;
      attrs.dims.insert(attrs.dims.begin(), 0);
      break;
    case Op::Slice:
    case Op::Cat:
    case Op::Gather: ++attrs.axis; break;
    case Op::Remap:
      for (int64_t& dd : attrs.dims) ++dd;
      break;
    default: break;
  }
  Tensor r = record_node(ir::make_node(op, part, node->device, std::move(shape), std::move(inputs), std::move(attrs)));
  return wrap_complex(r, d);
}

Tensor complex_cast(const Tensor& x, DType dtype) {
  if (is_complex(x.dtype()) && is_complex(dtype)) return wrap_complex(cast_to(pairs(x), complex_part(dtype)), dtype);
  if (is_complex(dtype)) return wrap_complex(pairs(x, complex_part(dtype)), dtype);
  // Complex to real keeps the real part, as PyTorch (which warns); to bool: z != 0.
  Tensor r = pairs(x);
  if (dtype == DType::Bool) return re(r) != 0.0 || im(r) != 0.0;
  return cast_to(re(r), dtype);
}

Tensor complex_unary(Op op, const Tensor& x) {
  const DType d = x.dtype();
  const Tensor r = pairs(x);
  switch (op) {
    case Op::Neg: return wrap_complex(-r, d);
    case Op::Abs: return modulus(r);
    case Op::Exp: return wrap_complex(exp_pairs(r), d);
    case Op::Log: return wrap_complex(log_pairs(r), d);
    case Op::Sqrt: return wrap_complex(sqrt_pairs(r), d);
    case Op::Square: return wrap_complex(mul_pairs(r, r), d);
    case Op::Reciprocal: {
      Tensor one = pack(full_like_shape({}, 1.0, complex_part(d), x.device()), full_like_shape({}, 0.0, complex_part(d), x.device()));
      return wrap_complex(div_pairs(one, r), d);
    }
    case Op::Sin: {  // sin(a + ib) = sin a cosh b + i cos a sinh b
      Tensor a = re(r), b = im(r);
      return wrap_complex(pack(sin(a) * cosh(b), cos(a) * sinh(b)), d);
    }
    case Op::Cos: {  // cos(a + ib) = cos a cosh b - i sin a sinh b
      Tensor a = re(r), b = im(r);
      return wrap_complex(pack(cos(a) * cosh(b), -(sin(a) * sinh(b))), d);
    }
    case Op::IsNan: return isnan(re(r)) || isnan(im(r));
    case Op::IsInf: return isinf(re(r)) || isinf(im(r));
    case Op::IsFinite: return isfinite(re(r)) && isfinite(im(r));
    default: not_for_complex(ir::op_info(op).name, {&x});
  }
}

Tensor complex_binary(Op op, const Tensor& a, const Tensor& b) {
  const char* name = ir::op_info(op).name;
  check_same_device(name, {&a, &b});
  const DType d = complex_common(a, b);
  const DType part = complex_part(d);
  const bool a_real = !is_complex(a.dtype()), b_real = !is_complex(b.dtype());
  const int64_t rank = std::max(a.dim(), b.dim());
  auto scaled = [&](const Tensor& z, const Tensor& x, bool divide) {  // z's pairs times / over real x
    Tensor r = aligned_pairs(pairs(z, part), rank), f = aligned_real(cast_to(x, part), rank);
    return wrap_complex(divide ? r / f : r * f, d);
  };
  switch (op) {
    case Op::Add:
    case Op::Sub: {
      // A real operand adds to the real part only: its pairs (x, 0) as a select in the kernel.
      auto operand = [&](const Tensor& x, bool real) {
        if (!real) return aligned_pairs(pairs(x, part), rank);
        return where(part_index(rank, x.device()) == 0, aligned_real(cast_to(x, part), rank), 0.0);
      };
      Tensor x = operand(a, a_real), y = operand(b, b_real);
      return wrap_complex(op == Op::Add ? x + y : x - y, d);
    }
    case Op::Mul:
      // A real factor scales both parts: no products of zeros.
      if (b_real) return scaled(a, b, false);
      if (a_real) return scaled(b, a, false);
      return wrap_complex(mul_pairs(pairs(a, part), pairs(b, part)), d);
    case Op::Div:
      if (b_real) return scaled(a, b, true);
      return wrap_complex(div_pairs(pairs(a, part), pairs(b, part)), d);
    case Op::Pow: {
      Tensor ra = pairs(a, part);
      if (b_real) {  // |a|^p (cos p arg a + i sin p arg a): exact for a real base and integer p
        Tensor p = cast_to(b, part);
        return wrap_complex(from_polar(pow(modulus(ra), p), argument(ra) * p), d);
      }
      // exp(b log a); 0^b is 1 for b = 0 and 0 otherwise, as std::pow.
      Tensor rb = pairs(b, part);
      Tensor e = exp_pairs(mul_pairs(rb, log_pairs(ra)));
      Tensor a0 = re(ra) == 0.0 && im(ra) == 0.0;
      Tensor b0 = re(rb) == 0.0 && im(rb) == 0.0;
      Tensor zero_base = pack(where(b0, 1.0, 0.0).to(part), zeros_as(re(rb)));  // 0^b
      Tensor r = aligned_pairs(e, rank);
      return wrap_complex(where(aligned_real(a0, rank), aligned_pairs(zero_base, rank), r), d);
    }
    case Op::Eq:
    case Op::Ne: {
      Tensor ra = pairs(a, part), rb = pairs(b, part);
      Tensor eq = re(ra) == re(rb) && im(ra) == im(rb);
      return op == Op::Eq ? eq : !eq;
    }
    default: not_for_complex(name, {&a, &b});
  }
}

Tensor complex_binary(Op op, const Tensor& a, Scalar s, bool scalar_first) {
  // The number as a 0-D tensor of a's real dtype: complex64 * 2.5 stays complex64, as PyTorch.
  const char* name = ir::op_info(op).name;
  if (s.kind() == Scalar::Kind::Bool && op != Op::Eq && op != Op::Ne) not_for_complex(name, {&a});
  Tensor c = full_like_shape({}, s, complex_part(a.dtype()), a.device());
  return scalar_first ? complex_binary(op, c, a) : complex_binary(op, a, c);
}

Tensor complex_reduce(Op op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  const DType d = x.dtype();
  if (dims.empty()) return x;  // a 0-D tensor: nothing to reduce
  if (op == Op::Sum) {
    std::vector<int64_t> pd = dims;  // past the pair dim
    for (int64_t& v : pd) ++v;
    return wrap_complex(sum(pairs(x), pd, keepdim), d);
  }
  if (op != Op::Prod) not_for_complex(ir::op_info(op).name, {&x});
  // A product tree: the reduced dims moved last and flattened into one of n values, then halves
  // multiplied pairwise (ceil(log2 n) complex products, each one fused kernel).
  const int64_t rank = x.dim();
  std::vector<int64_t> perm;
  Shape kept, out_keep;
  int64_t n = 1;
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t dd : dims) reduced[static_cast<size_t>(dd)] = true;
  for (int64_t i = 0; i < rank; ++i) {
    out_keep.push_back(reduced[i] ? 1 : x.shape()[i]);
    if (!reduced[i]) perm.push_back(i), kept.push_back(x.shape()[i]);
  }
  for (int64_t dd : dims) perm.push_back(dd), n *= x.shape()[dd];
  Shape flat = kept;
  flat.push_back(n);
  const int64_t axis = static_cast<int64_t>(kept.size());
  Tensor z;
  if (n == 0) {
    z = full_like_shape(kept, 1.0, d, x.device());
  } else {
    z = reshape(permute(x, perm), flat);
    while (n > 1) {
      const int64_t h = n / 2;
      Tensor p = complex_binary(Op::Mul, slice(z, axis, 0, h), slice(z, axis, h, 2 * h));
      z = n % 2 ? cat({p, slice(z, axis, 2 * h, n)}, axis) : p;
      n = h + n % 2;
    }
    z = select(z, axis, 0);
  }
  return keepdim ? reshape(z, out_keep) : z;
}

Tensor complex_matmul(const Tensor& a, const Tensor& b) {
  // (A + iB)(C + iD) = (AC - BD) + i(AD + BC): four real products, two with a real operand.
  const DType d = complex_common(a, b);
  const DType part = complex_part(d);
  if (!is_complex(b.dtype())) {
    Tensor ra = pairs(a, part), c = cast_to(b, part);
    return wrap_complex(pack(matmul(re(ra), c), matmul(im(ra), c)), d);
  }
  if (!is_complex(a.dtype())) {
    Tensor rb = pairs(b, part), c = cast_to(a, part);
    return wrap_complex(pack(matmul(c, re(rb)), matmul(c, im(rb))), d);
  }
  Tensor ra = pairs(a, part), rb = pairs(b, part);
  Tensor A = re(ra), B = im(ra), C = re(rb), D = im(rb);
  return wrap_complex(pack(matmul(A, C) - matmul(B, D), matmul(A, D) + matmul(B, C)), d);
}

}  // namespace detail

using detail::pairs;
using detail::wrap_complex;

Tensor complex(const Tensor& real, const Tensor& imag) {
  detail::check_defined("complex", {&real, &imag});
  detail::check_same_device("complex", {&real, &imag});
  const DType a = real.dtype(), b = imag.dtype();
  if (a != b || (a != DType::Float32 && a != DType::Float64))
    detail::fail("complex", "needs real and imag of one dtype, float32 or float64", {&real, &imag});
  return wrap_complex(detail::pack(real, imag), complex_of(a));
}

Tensor polar(const Tensor& abs, const Tensor& angle) {
  detail::check_defined("polar", {&abs, &angle});
  detail::check_same_device("polar", {&abs, &angle});
  const DType a = abs.dtype(), b = angle.dtype();
  if (a != b || (a != DType::Float32 && a != DType::Float64))
    detail::fail("polar", "needs abs and angle of one dtype, float32 or float64", {&abs, &angle});
  return wrap_complex(detail::from_polar(abs, angle), complex_of(a));
}

Tensor view_as_real(const Tensor& z) {
  detail::check_defined("view_as_real", {&z});
  if (!is_complex(z.dtype())) detail::fail("view_as_real", "needs a complex tensor", {&z});
  return pairs(z).movedim(0, -1);  // the planar pairs' view in std::complex's order
}

Tensor view_as_complex(const Tensor& r) {
  detail::check_defined("view_as_complex", {&r});
  if ((r.dtype() != DType::Float32 && r.dtype() != DType::Float64) || r.dim() == 0 || r.shape().back() != 2)
    detail::fail("view_as_complex", "needs a float32 or float64 tensor whose last dim has size 2", {&r});
  return wrap_complex(r.movedim(-1, 0), complex_of(r.dtype()));
}

Tensor real(const Tensor& z) {
  detail::check_defined("real", {&z});
  return is_complex(z.dtype()) ? detail::re(pairs(z)) : z;
}

Tensor imag(const Tensor& z) {
  detail::check_defined("imag", {&z});
  if (!is_complex(z.dtype())) detail::fail("imag", "is not defined for real tensors", {&z});
  return detail::im(pairs(z));
}

Tensor conj(const Tensor& z) {
  detail::check_defined("conj", {&z});
  if (!is_complex(z.dtype())) return z;
  Tensor r = pairs(z);
  return wrap_complex(detail::pack(detail::re(r), -detail::im(r)), z.dtype());
}

Tensor angle(const Tensor& z) {
  detail::check_defined("angle", {&z});
  if (is_complex(z.dtype())) return detail::argument(pairs(z));
  if (z.dtype() == DType::Bool) detail::fail("angle", "is not defined for bool tensors", {&z});
  Tensor x = is_floating(z.dtype()) ? z : z.to(DType::Float32);
  return where(isnan(x), x, where(x < 0.0, full_like(x, M_PI), zeros_like(x)));
}

namespace {
template <typename T>
Tensor from_complex_vector(const std::vector<std::complex<T>>& data, Shape shape) {
  std::vector<T> flat(2 * data.size());
  if (!data.empty()) std::memcpy(flat.data(), data.data(), flat.size() * sizeof(T));  // std::complex is (re, im) in memory
  Shape s = shape;
  s.push_back(2);
  return view_as_complex(from_vector(flat, std::move(s)));
}

}  // namespace

Tensor from_vector(const std::vector<std::complex<float>>& data, Shape shape) { return from_complex_vector(data, std::move(shape)); }
Tensor from_vector(const std::vector<std::complex<double>>& data, Shape shape) { return from_complex_vector(data, std::move(shape)); }

Tensor complex_number(const Tensor& like, std::complex<double> v) {
  detail::check_defined("complex number operand", {&like});
  const DType part = like.dtype() == DType::Float64 || like.dtype() == DType::Complex128 ? DType::Float64 : DType::Float32;
  Tensor r = detail::pack_constants(detail::full_like_shape({}, v.real(), part, like.device()),
                         detail::full_like_shape({}, v.imag(), part, like.device()));
  return wrap_complex(r, complex_of(part));
}

}  // namespace lf
