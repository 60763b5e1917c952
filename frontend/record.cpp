#include "frontend/record.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "frontend/complex.h"
#include "frontend/trace.h"
#include "runtime/checked.h"

namespace lf::detail {

namespace {

// Every recorded node's shape meets rt::shape_problem's rule (its element count, strides and byte
// size fit int64), so nothing downstream (views, lowering, allocation) can overflow. The common
// case is a few multiplications; only a bad shape builds a message.
bool shape_fits(const ir::Node& n) {
  int64_t bytes = static_cast<int64_t>(dtype_size(n.dtype));
  for (int64_t s : n.shape)
    if (s < 0 || (s > 0 && __builtin_mul_overflow(bytes, s, &bytes))) return false;
  return true;
}

void check_node_shape(const ir::Node& n) {
  if (shape_fits(n)) return;
  const char* op = ir::op_name(n.op);
  const char* user = user_op(op);
  std::string msg = std::string("lf::") + user + ": result " + rt::shape_problem(n.shape, dtype_size(n.dtype)) +
                    " (dtype " + dtype_name(n.dtype) + ")";
  if (std::strcmp(user, op) != 0) msg += std::string(" (in lf::") + op + ")";
  if (!n.inputs.empty()) {
    msg += " (got ";
    for (size_t i = 0; i < n.inputs.size(); ++i)
      msg += (i ? ", " : "") + std::string(dtype_name(n.inputs[i]->dtype)) + shape_str(n.inputs[i]->shape);
    msg += ")";
  }
  throw Error(msg);
}

}  // namespace

int& keep_graph_depth() {
  thread_local int depth = 0;
  return depth;
}

Tensor record_node(NodePtr node) {
  if (involves_complex(*node)) [[unlikely]]
    return record_complex(std::move(node));
  check_node_shape(*node);
  node->keep_history = keep_graph_depth() > 0;
  node->user_op = current_user_op();
  Tensor t(std::move(node));  // held before trace_append, which may flush: a flush computes held nodes
  trace_append(t.node());
  return t;
}

Tensor record(Op op, DType dtype, Device device, const Shape& shape, std::initializer_list<const Tensor*> inputs,
              Attrs attrs) {
  NodePtr node = ir::make_node(op, dtype, device, ir::recycled_shape(shape));
  node->attrs = std::move(attrs);
  for (const Tensor* t : inputs) node->inputs.push_back(t->node());
  return record_node(std::move(node));  // checks the shape
}

std::string describe(const Tensor& t) {
  if (!t.defined()) return "<empty Tensor>";
  return std::string(dtype_name(t.dtype())) + shape_str(t.shape());
}

namespace {
thread_local const char* t_user_op = nullptr;
}  // namespace

UserOp::UserOp(const char* name) : saved_(t_user_op) {
  if (!t_user_op) t_user_op = name;
}
UserOp::~UserOp() { t_user_op = saved_; }

const char* user_op(const char* op) { return t_user_op ? t_user_op : op; }
const char* current_user_op() { return t_user_op; }

void fail(const char* op, const std::string& message, std::initializer_list<const Tensor*> args) {
  const char* user = user_op(op);
  std::string msg = std::string("lf::") + user + ": " + message;
  if (std::strcmp(user, op) != 0) msg += std::string(" (in lf::") + op + ")";
  if (args.size() > 0) {
    msg += " (got ";
    bool first = true;
    for (const Tensor* t : args) {
      msg += (first ? "" : ", ") + describe(*t);
      first = false;
    }
    msg += ")";
  }
  throw Error(msg);
}

namespace {
// The ops that take complex tensors (docs/complex.md): frontend/complex.cpp computes them, or they
// are made of views, copies, cat, where, gather and remap, which record_complex replays on the
// pairs. Any other op raises at the line that called it, before it could read a complex tensor's
// dtype as a real one (an implicit cast to a real dtype would drop the imaginary part).
bool takes_complex(const char* op) {
  static const std::unordered_set<std::string_view> ops = {
      // elementwise, reductions, products
      "add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "square", "reciprocal", "sin", "cos",
      "isnan", "isinf", "isfinite", "pow", "eq", "ne", "where", "sum", "prod", "mean", "matmul", "linear",
      // complex.h
      "complex", "polar", "real", "imag", "conj", "angle", "view_as_real", "view_as_complex", "complex number operand",
      // views and shape ops
      "reshape", "flatten", "permute", "transpose", "slice", "expand", "squeeze", "unsqueeze", "contiguous", "cat",
      "stack", "select", "narrow", "chunk", "split", "unbind", "flip", "roll", "movedim", "repeat", "tile", "pad",
      "index", "index_select", "take", "take_along_dim", "gather", "masked_fill",
      // reads, casts, files
      "cast", "to", "print", "save", "savez"};
  return ops.contains(op);
}
}  // namespace

void check_defined(const char* op, std::initializer_list<const Tensor*> args) {
  for (const Tensor* t : args) {
    if (!t->defined()) fail(op, "an argument is an empty Tensor (default-constructed, never assigned)");
    if (is_complex(t->node()->dtype)) [[unlikely]]
      if (!takes_complex(op)) fail(op, "is not defined for complex tensors (docs/complex.md lists the ops that are)", args);
  }
}

void check_same_device(const char* op, std::initializer_list<const Tensor*> args) {
  const Tensor* first = *args.begin();
  for (const Tensor* t : args) {
    if (t->device() != first->device()) {
      fail(op, "tensors are on different devices (" + first->device().str() + " and " + t->device().str() +
                   "); move one with .to(device)",
           args);
    }
  }
}

void check_shape(const char* op, const Shape& shape, DType dtype) {
  std::string why = rt::shape_problem(shape, dtype_size(dtype));
  if (!why.empty()) fail(op, why + " (dtype " + dtype_name(dtype) + ")");
}

int64_t normalize_dim(const char* op, int64_t dim, int64_t rank, const Tensor& x) {
  int64_t lo = -std::max<int64_t>(rank, 1), hi = std::max<int64_t>(rank, 1) - 1;
  if (dim < lo || dim > hi) {
    fail(op, "dim " + std::to_string(dim) + " is out of range for a tensor of rank " + std::to_string(rank) +
                 " (expected [" + std::to_string(lo) + ", " + std::to_string(hi) + "])",
         {&x});
  }
  return dim < 0 ? dim + std::max<int64_t>(rank, 1) : dim;
}

namespace {
int category(DType d) { return d == DType::Bool ? 0 : is_integral(d) ? 1 : is_complex(d) ? 3 : 2; }
}  // namespace

DType promote(DType a, DType b) {
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  // Complex with a float keeps the wider precision (complex64 with float64: complex128, as PyTorch).
  if (ca == 3 && cb == 2) return complex_of(promote(complex_part(a), b));
  if (cb == 3 && ca == 2) return complex_of(promote(a, complex_part(b)));
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 1) return DType::Int64;  // int32 with int64
  if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
    return DType::Float32;
  return dtype_size(a) >= dtype_size(b) ? a : b;
}

DType promote_scalar(DType t, Scalar::Kind kind) {
  int cs = kind == Scalar::Kind::Bool ? 0 : kind == Scalar::Kind::Int ? 1 : 2;
  if (cs <= category(t)) return t;
  return cs == 1 ? DType::Int64 : DType::Float32;
}

Shape broadcast_shapes(const char* op, const Shape& x, const Shape& y, std::initializer_list<const Tensor*> args) {
  size_t rank = std::max(x.size(), y.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t dx = i < rank - x.size() ? 1 : x[i - (rank - x.size())];
    int64_t dy = i < rank - y.size() ? 1 : y[i - (rank - y.size())];
    if (dx != dy && dx != 1 && dy != 1) {
      fail(op, "cannot broadcast shapes " + shape_str(x) + " and " + shape_str(y) + " (dim " + std::to_string(i) +
                   ": " + std::to_string(dx) + " vs " + std::to_string(dy) + ")",
           args);
    }
    out[i] = dx == 1 ? dy : dx;
  }
  // Named here, as the op the user called, rather than by the expand nodes that broadcast_to records.
  size_t elem = 0;
  for (const Tensor* t : args) elem = std::max(elem, t->defined() ? dtype_size(t->dtype()) : 0);
  std::string why = rt::shape_problem(out, elem);
  if (!why.empty()) fail(op, "the broadcast " + why, args);
  return out;
}

Tensor coord(const Shape& shape, size_t d, Device device) {
  ir::Attrs a;
  a.value = 0;
  a.value2 = 1;
  Tensor r = record(Op::Arange, DType::Int64, device, {shape[d]}, {}, a);
  Shape along(shape.size(), 1);
  along[d] = shape[d];
  if (along != r.shape()) r = record(Op::Reshape, DType::Int64, device, along, {&r});
  return broadcast_to(r, shape);
}

Tensor cast_to(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  if (is_complex(x.dtype()) || is_complex(dtype)) return complex_cast(x, dtype);
  return record(Op::Cast, dtype, x.device(), x.shape(), {&x});
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  Tensor cur = x;
  if (x.shape().size() < shape.size()) {
    Shape padded(shape.size() - x.shape().size(), 1);
    padded.insert(padded.end(), x.shape().begin(), x.shape().end());
    cur = record(Op::Reshape, x.dtype(), x.device(), padded, {&x});
  }
  if (cur.shape() == shape) return cur;
  return record(Op::Expand, x.dtype(), x.device(), shape, {&cur});
}

namespace {

// The integer a `full` node of `dtype` holds for `value` (Attrs::ivalue). Scalar::to_int() casts a
// float number straight to int64, undefined for NaN, inf and |v| >= 2^63; saturate instead (NaN to
// 0) like the casts do. Only integer dtypes read ivalue.
int64_t full_ivalue(Scalar value, DType dtype) {
  if (dtype == DType::Bool) return value.to_double() != 0;
  if (value.kind() != Scalar::Kind::Float) return value.to_int();
  double v = value.to_double();
  return v != v ? 0 : v >= 0x1p63 ? INT64_MAX : v <= -0x1p63 ? INT64_MIN : static_cast<int64_t>(v);
}

Attrs full_attrs(Scalar value, DType dtype) {
  Attrs a;
  a.value = value.to_double();
  a.ivalue = full_ivalue(value, dtype);
  return a;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }  // NaN, -0.0

// Shape equality without a memcmp call: shapes have a few dims.
bool same_shape(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

}  // namespace

Tensor full_like_shape(const Shape& shape, Scalar value, DType dtype, Device device) {
  return record(Op::Full, dtype, device, shape, {}, full_attrs(value, dtype));
}

const NodePtr& scalar_operand(const Shape& shape, Scalar value, DType dtype, Device device) {
  // A few recent operands, replaced round-robin. Only pending nodes are shared: a `full` node is
  // a generator, computed inside each kernel that reads it; one that a flush materialized (a
  // handle held it then) would make kernels read memory instead, and would hold that memory.
  struct Recent {
    std::array<NodePtr, 4> nodes;
    size_t next = 0;
  };
  thread_local Recent recent;
  // Called on every `x + 1`: compare the cheap fields first and build the attributes only on a miss.
  const double v = value.to_double();
  const int64_t iv = full_ivalue(value, dtype);
  for (NodePtr& n : recent.nodes) {
    if (n && n->dtype == dtype && n->device == device && same_bits(n->attrs.value, v) && n->attrs.ivalue == iv &&
        same_shape(n->shape, shape) && n->op == Op::Full && !n->realized())
      return n;
  }
  Attrs a;
  a.value = v;
  a.ivalue = iv;
  NodePtr& slot = recent.nodes[recent.next++ % recent.nodes.size()];
  slot = ir::make_node(Op::Full, dtype, device, ir::recycled_shape(shape), {}, std::move(a));
  return slot;
}

}  // namespace lf::detail
