#include "codegen/reference/reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "codegen/ir/dtype_dispatch.h"
#include "codegen/ir/random.h"
#include "codegen/reference/attention.h"
#include "codegen/reference/nearest.h"
#include "codegen/reference/conv.h"
#include "codegen/reference/indexing.h"
#include "codegen/reference/fft.h"
#include "codegen/reference/linalg.h"
#include "codegen/reference/math.h"

namespace lf::ir {
namespace {

Value alloc_value(DType dtype, const Shape& shape) {
  auto storage = rt::Storage::allocate(Device::cpu(), static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype));
  return Value{std::move(storage), dtype, shape, Layout{contiguous_strides(shape), 0}};
}

// Calls f(linear_position, element_offset) for every element of a strided view, in row-major order.
template <typename F>
void for_each_offset(const Shape& shape, const Layout& layout, F&& f) {
  int64_t n = shape_numel(shape);
  if (n == 0) return;
  size_t rank = shape.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t off = layout.offset;
  for (int64_t i = 0; i < n; ++i) {
    f(i, off);
    for (size_t d = rank; d-- > 0;) {  // odometer increment
      if (++idx[d] < shape[d]) {
        off += layout.strides[d];
        break;
      }
      off -= layout.strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

// A dense row-major array of compute values (std::vector<bool> packs bits, so it will not do).
template <typename C>
class Dense {
 public:
  Dense() = default;
  explicit Dense(size_t n) : data_(new C[n]()), size_(n) {}
  C& operator[](size_t i) { return data_[i]; }
  const C& operator[](size_t i) const { return data_[i]; }
  C* data() { return data_.get(); }
  const C* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<C[]> data_;
  size_t size_ = 0;
};

// Reads a value into a dense row-major array of compute type C.
template <typename C>
Dense<C> gather(const Value& v) {
  Dense<C> out(static_cast<size_t>(shape_numel(v.shape)));
  dispatch(v.dtype, [&](auto tag) {
    using S = typename decltype(tag)::storage_t;
    if constexpr (std::is_same_v<S, bool>) {
      // As bytes, any non-zero one true: memory viewed in place (from_blob, DLPack) may hold 2 or
      // 255 for a bool, which read as a C++ bool is undefined (and converted to int gave 2).
      const auto* p = static_cast<const unsigned char*>(v.storage->data());
      for_each_offset(v.shape, v.layout, [&](int64_t i, int64_t off) { out[i] = from_value<C>(p[off] != 0); });
    } else {
      const S* p = static_cast<const S*>(v.storage->data());
      for_each_offset(v.shape, v.layout, [&](int64_t i, int64_t off) { out[i] = from_value<C>(to_compute(p[off])); });
    }
  });
  return out;
}

// Writes dense compute values into a fresh contiguous value of `dtype`.
template <typename Array>
Value scatter(const Array& data, DType dtype, const Shape& shape) {
  Value out = alloc_value(dtype, shape);
  dispatch(dtype, [&](auto tag) {
    using S = typename decltype(tag)::storage_t;
    S* p = static_cast<S*>(out.storage->data());
    for (size_t i = 0; i < data.size(); ++i) p[i] = from_value<S>(data[i]);
  });
  return out;
}

// ---- elementwise

// Whether an op of dtype rule `r` can see inputs of compute type T at all (the frontend casts
// first); the rest are not instantiated, so bool never meets x * x * x and integers never divide.
template <typename T>
constexpr bool reachable(ir::DTypeRule r) {
  using R = ir::DTypeRule;
  if (r == R::kFloat || r == R::kFloatBinary || r == R::kTrueDiv) return std::is_floating_point_v<T>;
  if (r == R::kBitwise) return std::is_integral_v<T>;
  if (r == R::kShift) return std::is_integral_v<T> && !std::is_same_v<T, bool>;
  if (std::is_same_v<T, bool>) return r == R::kAny || r == R::kPredicate || r == R::kLogical || r == R::kCompare;
  return r != R::kLogical;
}

template <typename T>
auto unary_expr(Op op, T x) {
  switch (op) {
#define LF_UNARY(Name, str, rule, expr, grad)                                \
  case Op::Name:                                                       \
    if constexpr (reachable<T>(ir::DTypeRule::rule)) return static_cast<double>(expr); \
    break;
#include "codegen/ir/ops.inc"
    default: break;
  }
  throw Error(std::string("reference: ") + op_name(op) + " is not defined for this dtype");
}

template <typename T>
auto binary_expr(Op op, T a, T b) {
  switch (op) {
#define LF_BINARY(Name, str, rule, expr, grad_a, grad_b)                               \
  case Op::Name:                                                       \
    if constexpr (reachable<T>(ir::DTypeRule::rule)) return static_cast<double>(expr); \
    break;
#include "codegen/ir/ops.inc"
    default: break;
  }
  throw Error(std::string("reference: ") + op_name(op) + " is not defined for this dtype");
}

// The expressions are evaluated in the input's compute type T; the double they return holds the
// exact result (every compute type embeds in double except int64, handled separately below).
template <typename T>
Value elementwise_typed(const Node& node, const std::vector<Value>& in) {
  Shape shape = node.shape;
  bool bool_out = node.dtype == DType::Bool;
  Dense<T> a = gather<T>(in[0]);
  Dense<T> b;
  if (in.size() > 1) b = gather<T>(in[1]);
  bool unary = op_info(node.op).kind == OpKind::Unary;
  if constexpr (std::is_same_v<T, int64_t>) {
    // int64 does not embed in double: compute in int64 directly for the integer-valued ops.
    if (!bool_out) {
      std::vector<int64_t> out(a.size());
      for (size_t i = 0; i < a.size(); ++i) {
        T x = a[i];
        switch (node.op) {
          case Op::Neg: out[i] = ref::neg(x); break;
          case Op::Abs: out[i] = ref::abs(x); break;
          case Op::Relu: out[i] = ref::relu(x); break;
          case Op::Sign: out[i] = ref::sign(x); break;
          case Op::Square: out[i] = ref::mul(x, x); break;
          case Op::Copy: out[i] = x; break;
          case Op::Add: out[i] = ref::add(x, b[i]); break;
          case Op::Sub: out[i] = ref::sub(x, b[i]); break;
          case Op::Mul: out[i] = ref::mul(x, b[i]); break;
          case Op::Pow: out[i] = ref::pow(x, b[i]); break;
          case Op::Maximum: out[i] = ref::maximum(x, b[i]); break;
          case Op::Minimum: out[i] = ref::minimum(x, b[i]); break;
          case Op::Remainder: out[i] = ref::remainder(x, b[i]); break;
          case Op::Fmod: out[i] = ref::fmod(x, b[i]); break;
          case Op::FloorDivide: out[i] = ref::floor_divide(x, b[i]); break;
          case Op::BitwiseAnd: out[i] = ref::bitwise_and(x, b[i]); break;
          case Op::BitwiseOr: out[i] = ref::bitwise_or(x, b[i]); break;
          case Op::BitwiseXor: out[i] = ref::bitwise_xor(x, b[i]); break;
          case Op::BitwiseLeftShift: out[i] = ref::shift_left(x, b[i]); break;
          case Op::BitwiseRightShift: out[i] = ref::shift_right(x, b[i]); break;
          case Op::BitwiseNot: out[i] = ref::bitwise_not(x); break;
          default: throw Error(std::string("reference: ") + op_name(node.op) + " is not defined on int64");
        }
      }
      return scatter(out, node.dtype, shape);
    }
  }
  std::vector<double> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = unary ? unary_expr<T>(node.op, a[i]) : binary_expr<T>(node.op, a[i], b[i]);
  if (!bool_out && !is_floating(node.dtype)) {
    // Integer results: convert through the exact integer, not through float rounding.
    std::vector<T> exact(out.size());
    for (size_t i = 0; i < out.size(); ++i) exact[i] = static_cast<T>(out[i]);
    return scatter(exact, node.dtype, shape);
  }
  if (is_floating(node.dtype)) {
    // Round to the compute type first (float for float32/16), as the op would.
    std::vector<T> rounded(out.size());
    for (size_t i = 0; i < out.size(); ++i) rounded[i] = static_cast<T>(out[i]);
    return scatter(rounded, node.dtype, shape);
  }
  return scatter(out, node.dtype, shape);
}

Value elementwise(const Node& node, const std::vector<Value>& in) {
  return dispatch(in[0].dtype, [&](auto tag) {
    using C = typename decltype(tag)::compute_t;
    return elementwise_typed<C>(node, in);
  });
}

Value where(const Node& node, const std::vector<Value>& in) {
  Dense<bool> cond = gather<bool>(in[0]);
  return dispatch(node.dtype, [&](auto tag) {
    using C = typename decltype(tag)::compute_t;
    auto a = gather<C>(in[1]);
    auto b = gather<C>(in[2]);
    for (size_t i = 0; i < a.size(); ++i) a[i] = cond[i] ? a[i] : b[i];
    return scatter(a, node.dtype, node.shape);
  });
}

Value cast(const Node& node, const Value& in) {
  return dispatch(in.dtype, [&](auto tag) {
    using C = typename decltype(tag)::compute_t;
    auto a = gather<C>(in);  // exact in the source's compute type; scatter converts once
    return scatter(a, node.dtype, node.shape);
  });
}

// ---- generators

Value generate(const Node& node) {
  ir::note_number_use(node);  // its numbers are in the values: a plan must see them repeat
  int64_t n = node.numel();
  const Attrs& at = node.attrs;
  return dispatch(node.dtype, [&](auto tag) {
    using C = typename decltype(tag)::compute_t;
    using S = typename decltype(tag)::storage_t;
    Value out = alloc_value(node.dtype, node.shape);
    S* p = static_cast<S*>(out.storage->data());
    for (int64_t i = 0; i < n; ++i) {
      switch (node.op) {
        case Op::Full:
          if constexpr (std::is_integral_v<C>) {
            p[i] = from_value<S>(at.ivalue);
          } else {
            p[i] = from_value<S>(static_cast<C>(at.value));
          }
          break;
        case Op::Arange:
          // An integer arange with integral bounds in integer arithmetic (2^53 + 1 is no double;
          // the frontend keeps every value within int64), any other in float64.
          if (is_integral(node.dtype) && ir::arange_is_integral(at)) {
            const uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(at.value)) +
                               static_cast<uint64_t>(i) * static_cast<uint64_t>(static_cast<int64_t>(at.value2));
            p[i] = static_cast<S>(static_cast<int64_t>(v));
          } else {
            p[i] = from_value<S>(at.value + static_cast<double>(i) * at.value2);
          }
          break;
        case Op::Rand: {
          uint64_t h = rng::hash(at.seed, at.counter + static_cast<uint64_t>(i));
          int bits = node.dtype == DType::Float64   ? 53
                     : node.dtype == DType::Float16 ? 11
                     : node.dtype == DType::BFloat16 ? 8
                                                      : 24;
          p[i] = from_value<S>(rng::uniform(h, bits));
          break;
        }
        case Op::Randn: {
          uint64_t h = rng::hash(at.seed, at.counter + static_cast<uint64_t>(i));
          if (node.dtype == DType::Float64) {
            p[i] = from_value<S>(rng::normal_f64(h));
          } else {
            p[i] = from_value<S>(rng::normal_f32(h));
          }
          break;
        }
        default: break;
      }
    }
    return out;
  });
}

// ---- views: strides over the input's storage

Value view(const Node& node, const Value& in) {
  Value out = in;
  out.shape = node.shape;
  const Attrs& at = node.attrs;
  switch (node.op) {
    case Op::Reshape: {
      Value src = is_contiguous(in.shape, in.layout) ? in : to_contiguous(in, in.dtype);
      out = src;
      out.shape = node.shape;
      out.layout.strides = contiguous_strides(node.shape);
      break;
    }
    case Op::Permute:
      for (size_t i = 0; i < at.dims.size(); ++i) out.layout.strides[i] = in.layout.strides[at.dims[i]];
      break;
    case Op::Expand:
      for (size_t i = 0; i < node.shape.size(); ++i) {
        if (in.shape[i] != node.shape[i]) out.layout.strides[i] = 0;
      }
      break;
    case Op::Slice:
      if (node.shape[at.axis] > 0) out.layout.offset += at.start * in.layout.strides[at.axis];
      if (node.shape[at.axis] > 1) out.layout.strides[at.axis] *= at.step;  // as ir::apply_view
      break;
    case Op::Diagonal: {  // the same strides as ir::apply_view's
      size_t d1 = static_cast<size_t>(at.dims[0]), d2 = static_cast<size_t>(at.dims[1]);
      out.layout.strides.clear();
      for (size_t d = 0; d < in.shape.size(); ++d)
        if (d != d1 && d != d2) out.layout.strides.push_back(in.layout.strides[d]);
      out.layout.strides.push_back(in.layout.strides[d1] + in.layout.strides[d2]);
      if (node.shape.back() > 0)
        out.layout.offset += at.start >= 0 ? at.start * in.layout.strides[d2] : -at.start * in.layout.strides[d1];
      break;
    }
    default: break;
  }
  return out;
}

// ---- reductions

// Rearranges `in` so that kept dims come first and reduced dims last, densely: rows of `inner`.
template <typename C>
Dense<C> rows_for_reduce(const Value& in, const std::vector<int64_t>& dims, int64_t& inner) {
  std::vector<int64_t> perm;
  std::vector<bool> reduced(in.shape.size(), false);
  for (int64_t d : dims) reduced[d] = true;
  for (size_t d = 0; d < in.shape.size(); ++d)
    if (!reduced[d]) perm.push_back(static_cast<int64_t>(d));
  inner = 1;
  for (int64_t d : dims) {
    perm.push_back(d);
    inner *= in.shape[d];
  }
  Value p = in;
  for (size_t i = 0; i < perm.size(); ++i) {
    p.shape[i] = in.shape[perm[i]];
    p.layout.strides[i] = in.layout.strides[perm[i]];
  }
  return gather<C>(p);
}

template <typename C, typename Acc>
Value reduce_typed(const Node& node, const Value& in) {
  int64_t inner = 1;
  Dense<C> data = rows_for_reduce<C>(in, node.attrs.dims, inner);
  int64_t outer = node.numel();
  bool arg = node.op == Op::ArgMax || node.op == Op::ArgMin;
  if (arg) {
    std::vector<int64_t> out(static_cast<size_t>(outer));
    for (int64_t r = 0; r < outer; ++r) {
      const C* row = data.data() + r * inner;
      int64_t best = 0;
      for (int64_t j = 1; j < inner; ++j) {
        C cur = row[best];
        if (ref::isnan(cur)) break;  // the first NaN wins, like PyTorch
        bool better = ref::isnan(row[j]) || (node.op == Op::ArgMax ? row[j] > cur : row[j] < cur);
        if (better) best = j;
      }
      out[r] = best;
    }
    return scatter(out, node.dtype, node.shape);
  }
  std::vector<Acc> out(static_cast<size_t>(outer));
  for (int64_t r = 0; r < outer; ++r) {
    const C* row = data.data() + r * inner;
    Acc acc;
    switch (node.op) {
      case Op::Sum:
        acc = Acc(0);
        for (int64_t j = 0; j < inner; ++j) acc = ref::add(acc, static_cast<Acc>(row[j]));
        break;
      case Op::Prod:
        acc = Acc(1);
        for (int64_t j = 0; j < inner; ++j) acc = ref::mul(acc, static_cast<Acc>(row[j]));
        break;
      case Op::Max:
      case Op::Min:
        acc = static_cast<Acc>(row[0]);
        for (int64_t j = 1; j < inner; ++j)
          acc = node.op == Op::Max ? ref::maximum(acc, static_cast<Acc>(row[j])) : ref::minimum(acc, static_cast<Acc>(row[j]));
        break;
      default: acc = Acc(0);
    }
    out[r] = acc;
  }
  return scatter(out, node.dtype, node.shape);
}

Value reduce(const Node& node, const Value& in) {
  return dispatch(in.dtype, [&](auto tag) {
    using C = typename decltype(tag)::compute_t;
    // Floats accumulate in double: the oracle should be more accurate than what it judges.
    // Integers (and Bool, summed as int64) accumulate in int64, wrapping.
    if constexpr (std::is_floating_point_v<C>) {
      if (node.op == Op::Max || node.op == Op::Min || node.op == Op::ArgMax || node.op == Op::ArgMin)
        return reduce_typed<C, C>(node, in);
      return reduce_typed<C, double>(node, in);
    } else if constexpr (std::is_same_v<C, bool>) {
      if (node.op == Op::Max || node.op == Op::Min || node.op == Op::ArgMax || node.op == Op::ArgMin)
        return reduce_typed<C, bool>(node, in);
      return reduce_typed<C, int64_t>(node, in);
    } else {
      if (node.op == Op::Max || node.op == Op::Min || node.op == Op::ArgMax || node.op == Op::ArgMin)
        return reduce_typed<C, C>(node, in);
      return reduce_typed<C, int64_t>(node, in);
    }
  });
}

// ---- matmul and cat

Value matmul(const Node& node, const Value& a, const Value& b) {
  int64_t rank = node.rank();
  int64_t m = a.shape[rank - 2], k = a.shape[rank - 1], n = b.shape[rank - 1];
  int64_t batch = shape_numel(Shape(node.shape.begin(), node.shape.end() - 2));
  return dispatch(node.dtype, [&](auto tag) {
    using C = typename decltype(tag)::compute_t;
    using Acc = std::conditional_t<std::is_floating_point_v<C>, double, int64_t>;
    auto A = gather<C>(a);
    auto B = gather<C>(b);
    std::vector<Acc> out(static_cast<size_t>(batch * m * n));
    for (int64_t bi = 0; bi < batch; ++bi)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          Acc acc = 0;
          for (int64_t p = 0; p < k; ++p) {
            Acc x = static_cast<Acc>(A[(bi * m + i) * k + p]);
            Acc y = static_cast<Acc>(B[(bi * k + p) * n + j]);
            acc = ref::add(acc, ref::mul(x, y));
          }
          out[(bi * m + i) * n + j] = acc;
        }
    return scatter(out, node.dtype, node.shape);
  });
}

Value cat(const Node& node, const std::vector<Value>& in) {
  Value out = alloc_value(node.dtype, node.shape);
  int64_t axis = node.attrs.axis;
  int64_t at = 0;
  size_t esize = dtype_size(node.dtype);
  for (const Value& v : in) {
    Value src = to_contiguous(v, node.dtype);
    // View of the output slab this input fills, then copy element by element.
    Layout dst = out.layout;
    dst.offset += at * out.layout.strides[axis];
    const char* sp = static_cast<const char*>(src.storage->data());
    char* dp = static_cast<char*>(out.storage->data());
    for_each_offset(v.shape, dst, [&](int64_t i, int64_t off) { std::memcpy(dp + off * esize, sp + i * esize, esize); });
    at += v.shape[axis];
  }
  return out;
}

}  // namespace

Value value_of(const Node& n) {
  // The reference executor runs on the host: device data comes over whole, so that the node's
  // strides and offset still apply.
  return Value{rt::host_view(n.storage), n.dtype, n.shape, n.layout};
}

Value to_contiguous(const Value& v, DType dtype) {
  // (A bool value is always converted: gather() makes its bytes 0/1.)
  if (dtype == v.dtype && dtype != DType::Bool && is_contiguous(v.shape, v.layout) && v.layout.offset == 0) return v;
  return dispatch(v.dtype, [&](auto tag) {
    using C = typename decltype(tag)::compute_t;
    return scatter(gather<C>(v), dtype, v.shape);
  });
}

Value reference_op(const Node& node, const std::vector<Value>& in) {
  switch (op_info(node.op).kind) {
    case OpKind::Generator: return generate(node);
    case OpKind::Unary:
    case OpKind::Binary: return elementwise(node, in);
    case OpKind::Reduce: return reduce(node, in[0]);
    case OpKind::View: return view(node, in[0]);
    case OpKind::Special: break;
  }
  switch (node.op) {
    case Op::Buffer: return value_of(node);
    case Op::Where: return where(node, in);
    case Op::Cast: return cast(node, in[0]);
    case Op::Cat: return cat(node, in);
    case Op::Matmul: return matmul(node, in[0], in[1]);
    case Op::Conv2d: return reference_conv2d(node, in[0], in[1]);
    case Op::Pool2d: return reference_pool2d(node, in[0]);
    case Op::Gather: return gather_ref(node, in);
    case Op::Remap: return remap_ref(node, in);
    case Op::ScatterAdd: return scatter_add_ref(node, in);
    case Op::Scatter: return scatter_ref(node, in);
    case Op::CumSum:
    case Op::CumProd:
    case Op::LogCumSumExp: return scan_ref(node, in[0]);
    case Op::CumMax:
    case Op::CumMin: return cum_extreme_ref(node, in[0]);
    case Op::ArgSort: return argsort_ref(node, in[0]);
    case Op::TopK: return argsort_ref(node, in[0]);
    case Op::Attention: return reference_attention(node, in);
    case Op::Nearest: return reference_nearest(node, in);
    case Op::Linalg: return reference_linalg(node, in);
    case Op::Fft: return reference_fft(node, in);
    default: break;
  }
  throw Error(std::string("reference executor: no implementation of op ") + op_name(node.op));
}

void run_reference(const std::vector<Node*>& order, const std::function<bool(const Node&)>& wanted,
                   const std::function<void(Node&, Value)>& emit) {
  std::unordered_map<const Node*, int64_t> uses;
  for (Node* n : order)
    for (const NodePtr& in : n->inputs) ++uses[in.get()];
  std::unordered_map<const Node*, Value> values;
  std::vector<Value> args;
  for (Node* n : order) {
    args.clear();
    for (const NodePtr& in : n->inputs) {
      auto it = values.find(in.get());
      args.push_back(it != values.end() ? it->second : value_of(*in));
    }
    Value v = reference_op(*n, args);
    for (const NodePtr& in : n->inputs) {
      if (--uses[in.get()] == 0) values.erase(in.get());
    }
    if (wanted(*n)) emit(*n, v);
    if (uses[n] > 0) values.emplace(n, std::move(v));
  }
}

Value reference_eval(Node* root) {
  if (root->realized()) return value_of(*root);
  Value result;
  run_reference(topo_order({root}), [root](const Node& n) { return &n == root; },
                [&](Node&, Value v) { result = std::move(v); });
  return result;
}

}  // namespace lf::ir
