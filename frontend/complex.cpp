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

Tensor re(const Tensor& r) { return select(r, -1, 0); }
Tensor im(const Tensor& r) { return select(r, -1, 1); }
// (a, b) as pairs, broadcast. A stack (a cat), which the fuser reads through: the cat's index
// math pushes down into a and b's own ops, so a complex product is one kernel with them (a
// where over a broadcast last dim made the fuser cut at the broadcast of a pending value).
Tensor pack(const Tensor& a, const Tensor& b) {
  if (a.shape() == b.shape()) return stack({a, b}, -1);
  Shape s = broadcast_shapes("complex", a, b);
  return stack({broadcast_to(a, s), broadcast_to(b, s)}, -1);
}
// The same for values made of generators only (numbers, `full`): where(k == 0, a, b) over a last
// dim k of 2, computed inside every kernel that reads it.
Tensor pack_constants(const Tensor& a, const Tensor& b) {
  Tensor first = coord({2}, 0, a.device()) == 0;
  return where(first, unsqueeze(a, -1), unsqueeze(b, -1));
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
  Shape s = r.shape();
  s.pop_back();
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
  shape.push_back(2);
  if (op == Op::Full) {
    return wrap_complex(pack_constants(full_like_shape(node->shape, node->attrs.value, part, node->device),
                             full_like_shape(node->shape, 0.0, part, node->device)), d);
  }
  // A complex operand is its pairs; a real one of the node's shape (an index, a condition) is
  // broadcast along the pair dim.
  ir::Inputs inputs;
  for (const Tensor& t : args) {
    if (is_complex(t.dtype())) {
      inputs.push_back(pairs(t).node());
    } else {
      Shape s1 = t.shape(), s2 = t.shape();
      s1.push_back(1);
      s2.push_back(2);
      inputs.push_back(expand(reshape(t, s1), s2).node());
    }
  }
  ir::Attrs attrs = node->attrs;
  if (op == Op::Permute) attrs.dims.push_back(static_cast<int64_t>(node->shape.size()));
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
  switch (op) {
    case Op::Add:
    case Op::Sub: {
      // A real operand adds to the real part only: its pairs (x, 0) as a select in the kernel.
      auto real_pairs = [&](const Tensor& x) {
        Tensor first = coord({2}, 0, x.device()) == 0;
        return where(first, unsqueeze(cast_to(x, part), -1), 0.0);
      };
      Tensor x = a_real ? real_pairs(a) : pairs(a, part), y = b_real ? real_pairs(b) : pairs(b, part);
      return wrap_complex(op == Op::Add ? x + y : x - y, d);
    }
    case Op::Mul:
      // A real factor scales both parts: no products of zeros.
      if (b_real) return wrap_complex(pairs(a, part) * unsqueeze(cast_to(b, part), -1), d);
      if (a_real) return wrap_complex(unsqueeze(cast_to(a, part), -1) * pairs(b, part), d);
      return wrap_complex(mul_pairs(pairs(a, part), pairs(b, part)), d);
    case Op::Div:
      if (b_real) return wrap_complex(pairs(a, part) / unsqueeze(cast_to(b, part), -1), d);
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
      Tensor a0 = unsqueeze(re(ra) == 0.0 && im(ra) == 0.0, -1);
      Tensor b0 = re(rb) == 0.0 && im(rb) == 0.0;
      Tensor one = pack(where(b0, 1.0, 0.0).to(part), zeros_as(re(rb)));
      Shape s = e.shape();
      return wrap_complex(where(broadcast_to(a0, s), broadcast_to(one, s), e), d);
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
  if (op == Op::Sum) return wrap_complex(sum(pairs(x), dims, keepdim), d);
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
  Tensor r = reshape(permute(pairs(x), [&] {
                       std::vector<int64_t> p = perm;
                       p.push_back(rank);
                       return p;
                     }()),
                     [&] {
                       Shape s = flat;
                       s.push_back(2);
                       return s;
                     }());
  const int64_t axis = static_cast<int64_t>(kept.size());
  if (n == 0) {
    r = pack_constants(full_like_shape(kept, 1.0, complex_part(d), x.device()), full_like_shape(kept, 0.0, complex_part(d), x.device()));
  } else {
    while (n > 1) {
      const int64_t h = n / 2;
      Tensor p = mul_pairs(slice(r, axis, 0, h), slice(r, axis, h, 2 * h));
      r = n % 2 ? cat({p, slice(r, axis, 2 * h, n)}, axis) : p;
      n = h + n % 2;
    }
    r = select(r, axis, 0);
  }
  Tensor z = wrap_complex(r, d);
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
  return pairs(z);
}

Tensor view_as_complex(const Tensor& r) {
  detail::check_defined("view_as_complex", {&r});
  if ((r.dtype() != DType::Float32 && r.dtype() != DType::Float64) || r.dim() == 0 || r.shape().back() != 2)
    detail::fail("view_as_complex", "needs a float32 or float64 tensor whose last dim has size 2", {&r});
  return wrap_complex(r, complex_of(r.dtype()));
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
  std::memcpy(flat.data(), data.data(), flat.size() * sizeof(T));  // std::complex is (re, im) in memory
  Shape s = shape;
  s.push_back(2);
  Tensor r = from_vector(flat, std::move(s));
  return wrap_complex(r, complex_of(r.dtype()));
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
