// Elementwise ops: dtype rules from the op table, broadcasting, and recording.
#include <cmath>
#include <cstdint>
#include <string>

#include "frontend/complex.h"
#include "frontend/record.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace {

using detail::fail;
using detail::record;
using ir::DTypeRule;
using ir::Op;
using ir::op_info;

Tensor unary(Op op, const Tensor& x) {
  const char* name = op_info(op).name;
  detail::check_defined(name, {&x});
  DType d = x.dtype();
  if (is_complex(d)) return detail::complex_unary(op, x);
  DTypeRule rule = op_info(op).rule;
  switch (rule) {
    case DTypeRule::kNumeric:
    case DTypeRule::kFloat:
    case DTypeRule::kRounding:
      if (d == DType::Bool) fail(name, "is not defined for bool tensors", {&x});
      if (rule == DTypeRule::kRounding && is_integral(d)) return x;  // already integral
      if (rule == DTypeRule::kFloat && is_integral(d)) return unary(op, detail::cast_to(x, DType::Float32));
      return record(op, d, x.device(), x.shape(), {&x});
    case DTypeRule::kPredicate:
      if (!is_floating(d)) {  // integers are never NaN or inf
        return detail::full_like_shape(x.shape(), op == Op::IsFinite, DType::Bool, x.device());
      }
      return record(op, DType::Bool, x.device(), x.shape(), {&x});
    case DTypeRule::kLogical:
      if (d != DType::Bool) fail(name, "needs a bool tensor; compare first (x != 0)", {&x});
      return record(op, DType::Bool, x.device(), x.shape(), {&x});
    case DTypeRule::kBitwise:
      if (is_floating(d)) fail(name, "is only defined for bool and integer tensors", {&x});
      return record(op, d, x.device(), x.shape(), {&x});
    default: return record(op, d, x.device(), x.shape(), {&x});
  }
}

// The dtype both operands are computed in, and the dtype of the result.
std::pair<DType, DType> binary_dtypes(Op op, DType common, const Tensor& a, const Tensor& b) {
  const char* name = op_info(op).name;
  switch (op_info(op).rule) {
    case DTypeRule::kArith:
      if (common == DType::Bool) fail(name, "is not defined for two bool operands; use || and &&", {&a, &b});
      return {common, common};
    case DTypeRule::kTrueDiv:
    case DTypeRule::kFloatBinary:
      if (!is_floating(common)) common = DType::Float32;
      return {common, common};
    case DTypeRule::kCompare: return {common, DType::Bool};
    case DTypeRule::kLogical:
      if (a.dtype() != DType::Bool || b.dtype() != DType::Bool) fail(name, "needs bool operands", {&a, &b});
      return {DType::Bool, DType::Bool};
    case DTypeRule::kBitwise:
      if (is_floating(common)) fail(name, "is only defined for bool and integer operands", {&a, &b});
      return {common, common};
    case DTypeRule::kShift:
      if (!is_integral(common) || common == DType::Bool) fail(name, "is only defined for integer operands", {&a, &b});
      return {common, common};
    default: return {common, common};
  }
}

Tensor binary(Op op, const Tensor& a, const Tensor& b) {
  const char* name = op_info(op).name;
  detail::check_defined(name, {&a, &b});
  detail::check_same_device(name, {&a, &b});
  if (is_complex(a.dtype()) || is_complex(b.dtype())) return detail::complex_binary(op, a, b);
  auto [compute, out] = binary_dtypes(op, detail::promote(a.dtype(), b.dtype()), a, b);
  // The common case needs neither a cast nor a broadcast: no temporary handles or shapes.
  if (a.dtype() == compute && b.dtype() == compute && a.shape() == b.shape())
    return record(op, out, a.device(), a.shape(), {&a, &b});
  Shape shape = detail::broadcast_shapes(name, a, b);
  Tensor x = detail::broadcast_to(detail::cast_to(a, compute), shape);
  Tensor y = detail::broadcast_to(detail::cast_to(b, compute), shape);
  return record(op, out, a.device(), std::move(shape), {&x, &y});
}

// A C++ integer kept in an int32 result (int32 tensor + 2) must fit int32, as PyTorch checks.
void check_scalar_fits(const char* name, Scalar s, DType dtype, const Tensor& t) {
  if (dtype != DType::Int32 || s.kind() != Scalar::Kind::Int) return;
  int64_t v = s.to_int();
  if (v < INT32_MIN || v > INT32_MAX)
    fail(name, "the number " + std::to_string(v) + " does not fit the tensor's dtype int32", {&t});
}

// Records `op` over `a` and the number's `full` node of a's dtype and shape (no cast, no broadcast).
Tensor record_with_number(Op op, DType out, const Tensor& a, const ir::NodePtr& number, bool scalar_first) {
  const ir::NodePtr& an = a.node();
  ir::NodePtr node = ir::make_node(op, out, an->device, ir::recycled_shape(an->shape));
  node->inputs.push_back(scalar_first ? number : an);
  node->inputs.push_back(scalar_first ? an : number);
  return detail::record_node(std::move(node));
}

// A C++ number operand becomes a `full` node of the tensor's shape; its value is data, not code,
// so a loop that changes the number reuses the same kernel.
Tensor binary(Op op, const Tensor& a, Scalar s, bool scalar_first) {
  const ir::OpInfo& info = op_info(op);
  if (!a.defined()) fail(info.name, "an argument is an empty Tensor (default-constructed, never assigned)");
  const ir::Node& an = *a.node();
  if (is_complex(an.dtype)) return detail::complex_binary(op, a, s, scalar_first);
  DType common = detail::promote_scalar(an.dtype, s.kind());
  // The common case, first and with no temporaries (it is most of a loop like `y = y * 2 + 1`):
  // arithmetic whose number keeps the tensor's dtype, which is neither bool nor a 16-bit float.
  if (info.rule == DTypeRule::kArith && common == an.dtype && common != DType::Bool && common != DType::Float16 &&
      common != DType::BFloat16 && (common != DType::Int32 || s.kind() != Scalar::Kind::Int)) {
    return record_with_number(op, common, a, detail::scalar_operand(an.shape, s, common, an.device), scalar_first);
  }
  const char* name = info.name;
  DTypeRule rule = info.rule;
  if (rule == DTypeRule::kArith && an.dtype == DType::Bool && s.kind() == Scalar::Kind::Bool)
    fail(name, "is not defined for two bool operands; use || and &&", {&a});
  check_scalar_fits(name, s, common, a);
  if ((common == DType::Float16 || common == DType::BFloat16) &&
      (rule == DTypeRule::kArith || rule == DTypeRule::kTrueDiv || rule == DTypeRule::kFloatBinary)) {
    // Like PyTorch, a 16-bit float tensor with a number computes in float32 and rounds once, so the
    // number is not first rounded to the 16-bit type (x * 1e-8 must not flush to 0 in float16).
    Tensor wide = detail::cast_to(a, DType::Float32);
    Tensor c(detail::scalar_operand(a.shape(), s, DType::Float32, a.device()));
    return detail::cast_to(scalar_first ? binary(op, c, wide) : binary(op, wide, c), common);
  }
  const ir::NodePtr& number = detail::scalar_operand(a.shape(), s, common, a.device());
  if (common == a.dtype()) {
    // The number's node has a's dtype and shape; nothing to cast or broadcast.
    auto [compute, out] = binary_dtypes(op, common, a, a);
    if (compute == common) return record_with_number(op, out, a, number, scalar_first);
  }
  Tensor c(number);
  return scalar_first ? binary(op, c, a) : binary(op, a, c);
}

}  // namespace

Tensor operator+(const Tensor& a, const Tensor& b) { return binary(Op::Add, a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return binary(Op::Sub, a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return binary(Op::Mul, a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return binary(Op::Div, a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return binary(Op::Add, a, b, false); }
Tensor operator-(const Tensor& a, Scalar b) { return binary(Op::Sub, a, b, false); }
Tensor operator*(const Tensor& a, Scalar b) { return binary(Op::Mul, a, b, false); }
Tensor operator/(const Tensor& a, Scalar b) { return binary(Op::Div, a, b, false); }
Tensor operator+(Scalar a, const Tensor& b) { return binary(Op::Add, b, a, true); }
Tensor operator-(Scalar a, const Tensor& b) { return binary(Op::Sub, b, a, true); }
Tensor operator*(Scalar a, const Tensor& b) { return binary(Op::Mul, b, a, true); }
Tensor operator/(Scalar a, const Tensor& b) { return binary(Op::Div, b, a, true); }
Tensor operator-(const Tensor& a) { return unary(Op::Neg, a); }

Tensor operator==(const Tensor& a, const Tensor& b) { return binary(Op::Eq, a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return binary(Op::Ne, a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return binary(Op::Lt, a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return binary(Op::Le, a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return binary(Op::Gt, a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return binary(Op::Ge, a, b); }
Tensor operator==(const Tensor& a, Scalar b) { return binary(Op::Eq, a, b, false); }
Tensor operator!=(const Tensor& a, Scalar b) { return binary(Op::Ne, a, b, false); }
Tensor operator<(const Tensor& a, Scalar b) { return binary(Op::Lt, a, b, false); }
Tensor operator<=(const Tensor& a, Scalar b) { return binary(Op::Le, a, b, false); }
Tensor operator>(const Tensor& a, Scalar b) { return binary(Op::Gt, a, b, false); }
Tensor operator>=(const Tensor& a, Scalar b) { return binary(Op::Ge, a, b, false); }

Tensor operator&&(const Tensor& a, const Tensor& b) { return binary(Op::LogicalAnd, a, b); }
Tensor operator||(const Tensor& a, const Tensor& b) { return binary(Op::LogicalOr, a, b); }
Tensor operator!(const Tensor& a) { return unary(Op::LogicalNot, a); }

Tensor abs(const Tensor& x) { return unary(Op::Abs, x); }
Tensor neg(const Tensor& x) { return unary(Op::Neg, x); }
Tensor exp(const Tensor& x) { return unary(Op::Exp, x); }
Tensor exp2(const Tensor& x) { return unary(Op::Exp2, x); }
Tensor log(const Tensor& x) { return unary(Op::Log, x); }
Tensor log2(const Tensor& x) { return unary(Op::Log2, x); }
Tensor log1p(const Tensor& x) { return unary(Op::Log1p, x); }
Tensor expm1(const Tensor& x) { return unary(Op::Expm1, x); }
Tensor sqrt(const Tensor& x) { return unary(Op::Sqrt, x); }
Tensor rsqrt(const Tensor& x) { return unary(Op::Rsqrt, x); }
Tensor sin(const Tensor& x) { return unary(Op::Sin, x); }
Tensor cos(const Tensor& x) { return unary(Op::Cos, x); }
Tensor tan(const Tensor& x) { return unary(Op::Tan, x); }
Tensor asin(const Tensor& x) { return unary(Op::Asin, x); }
Tensor acos(const Tensor& x) { return unary(Op::Acos, x); }
Tensor atan(const Tensor& x) { return unary(Op::Atan, x); }
Tensor atan2(const Tensor& y, const Tensor& x) { return binary(Op::Atan2, y, x); }
Tensor sinh(const Tensor& x) { return unary(Op::Sinh, x); }
Tensor cosh(const Tensor& x) { return unary(Op::Cosh, x); }
Tensor tanh(const Tensor& x) { return unary(Op::Tanh, x); }
Tensor sigmoid(const Tensor& x) { return unary(Op::Sigmoid, x); }
Tensor relu(const Tensor& x) { return unary(Op::Relu, x); }
Tensor gelu(const Tensor& x, bool tanh_approx) { return unary(tanh_approx ? Op::GeluTanh : Op::Gelu, x); }
Tensor silu(const Tensor& x) { return unary(Op::Silu, x); }
Tensor hardswish(const Tensor& x) { return unary(Op::HardSwish, x); }
Tensor logit(const Tensor& x) { return unary(Op::Logit, x); }
Tensor logit(const Tensor& x, double eps) { return unary(Op::Logit, clamp(x, eps, 1.0 - eps)); }
Tensor erf(const Tensor& x) { return unary(Op::Erf, x); }
Tensor floor(const Tensor& x) { return unary(Op::Floor, x); }
Tensor ceil(const Tensor& x) { return unary(Op::Ceil, x); }
Tensor round(const Tensor& x) { return unary(Op::Round, x); }
Tensor sign(const Tensor& x) { return unary(Op::Sign, x); }
Tensor reciprocal(const Tensor& x) { return unary(Op::Reciprocal, x); }
Tensor square(const Tensor& x) { return unary(Op::Square, x); }
Tensor pow(const Tensor& x, const Tensor& e) { return binary(Op::Pow, x, e); }
Tensor pow(const Tensor& x, Scalar e) {
  detail::check_defined("pow", {&x});
  if (!is_floating(x.dtype()) && e.kind() == Scalar::Kind::Int && e.to_int() < 0)
    fail("pow", "integers to negative integer powers are not allowed; use a float exponent (" +
                    std::to_string(e.to_int()) + ".0)", {&x});
  return binary(Op::Pow, x, e, false);
}
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(Op::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(Op::Minimum, a, b); }
Tensor isnan(const Tensor& x) { return unary(Op::IsNan, x); }
Tensor isinf(const Tensor& x) { return unary(Op::IsInf, x); }
Tensor isfinite(const Tensor& x) { return unary(Op::IsFinite, x); }

Tensor clamp(const Tensor& x, Scalar lo, Scalar hi) {
  detail::check_defined("clamp", {&x});
  if (x.dtype() == DType::Bool) fail("clamp", "is not defined for bool tensors", {&x});
  if (std::isnan(lo.to_double()) || std::isnan(hi.to_double())) fail("clamp", "bounds must not be NaN", {&x});
  return binary(Op::Minimum, binary(Op::Maximum, x, lo, false), hi, false);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  detail::check_defined("where", {&cond, &a, &b});
  detail::check_same_device("where", {&cond, &a, &b});
  if (cond.dtype() != DType::Bool) fail("where", "condition must be a bool tensor", {&cond, &a, &b});
  Shape shape = detail::broadcast_shapes("where", cond.shape(), a.shape(), {&cond, &a, &b});
  shape = detail::broadcast_shapes("where", shape, b.shape(), {&cond, &a, &b});
  DType d = detail::promote(a.dtype(), b.dtype());
  Tensor c = detail::broadcast_to(cond, shape);
  Tensor x = detail::broadcast_to(detail::cast_to(a, d), shape);
  Tensor y = detail::broadcast_to(detail::cast_to(b, d), shape);
  return record(Op::Where, d, a.device(), std::move(shape), {&c, &x, &y});
}

Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  detail::check_defined("where", {&cond, &a});
  DType d = detail::promote_scalar(a.dtype(), b.kind());
  check_scalar_fits("where", b, d, a);
  return where(cond, a, Tensor(detail::scalar_operand({}, b, d, a.device())));
}

Tensor where(const Tensor& cond, Scalar a, const Tensor& b) {
  detail::check_defined("where", {&cond, &b});
  DType d = detail::promote_scalar(b.dtype(), a.kind());
  check_scalar_fits("where", a, d, b);
  return where(cond, Tensor(detail::scalar_operand({}, a, d, b.device())), b);
}

// ---- Division family and bitwise ops (issue 23).
Tensor remainder(const Tensor& a, const Tensor& b) { return binary(Op::Remainder, a, b); }
Tensor remainder(const Tensor& a, Scalar b) { return binary(Op::Remainder, a, b, false); }
Tensor remainder(Scalar a, const Tensor& b) { return binary(Op::Remainder, b, a, true); }
Tensor fmod(const Tensor& a, const Tensor& b) { return binary(Op::Fmod, a, b); }
Tensor fmod(const Tensor& a, Scalar b) { return binary(Op::Fmod, a, b, false); }
Tensor floor_divide(const Tensor& a, const Tensor& b) { return binary(Op::FloorDivide, a, b); }
Tensor floor_divide(const Tensor& a, Scalar b) { return binary(Op::FloorDivide, a, b, false); }
Tensor operator%(const Tensor& a, const Tensor& b) { return binary(Op::Remainder, a, b); }
Tensor operator%(const Tensor& a, Scalar b) { return binary(Op::Remainder, a, b, false); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return binary(Op::BitwiseAnd, a, b); }
Tensor bitwise_and(const Tensor& a, Scalar b) { return binary(Op::BitwiseAnd, a, b, false); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return binary(Op::BitwiseOr, a, b); }
Tensor bitwise_or(const Tensor& a, Scalar b) { return binary(Op::BitwiseOr, a, b, false); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return binary(Op::BitwiseXor, a, b); }
Tensor bitwise_xor(const Tensor& a, Scalar b) { return binary(Op::BitwiseXor, a, b, false); }
Tensor bitwise_not(const Tensor& x) { return unary(Op::BitwiseNot, x); }
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b) { return binary(Op::BitwiseLeftShift, a, b); }
Tensor bitwise_left_shift(const Tensor& a, Scalar b) { return binary(Op::BitwiseLeftShift, a, b, false); }
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b) { return binary(Op::BitwiseRightShift, a, b); }
Tensor bitwise_right_shift(const Tensor& a, Scalar b) { return binary(Op::BitwiseRightShift, a, b, false); }
Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
Tensor operator&(const Tensor& a, Scalar b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, Scalar b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, Scalar b) { return bitwise_xor(a, b); }
Tensor operator~(const Tensor& x) { return bitwise_not(x); }
Tensor operator<<(const Tensor& a, const Tensor& b) { return bitwise_left_shift(a, b); }
Tensor operator>>(const Tensor& a, const Tensor& b) { return bitwise_right_shift(a, b); }
Tensor operator<<(const Tensor& a, Scalar b) { return bitwise_left_shift(a, b); }
Tensor operator>>(const Tensor& a, Scalar b) { return bitwise_right_shift(a, b); }

Tensor cast(const Tensor& x, DType dtype) {
  detail::check_defined("cast", {&x});
  return detail::cast_to(x, dtype);
}

}  // namespace lf
