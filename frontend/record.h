// Helpers shared by the op functions: recording nodes, checking arguments, broadcasting, promotion.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "codegen/ir/indexing.h"
#include "codegen/ir/node.h"
#include "lazyfuse/tensor.h"

namespace lf::detail {

using ir::Attrs;
using ir::NodePtr;
using ir::Op;

// Records a pending node in this thread's trace (flushing first when the trace is too long).
Tensor record(Op op, DType dtype, Device device, const Shape& shape, std::initializer_list<const Tensor*> inputs,
              Attrs attrs = {});
// Records `node`, made by ir::make_node and not yet in the trace.
Tensor record_node(NodePtr node);
// How many lf::KeepGraph scopes this thread is in: while above 0, recorded nodes keep their
// history when realized (ir::Node::history).
int& keep_graph_depth();

// "float32[2, 3]"
std::string describe(const Tensor& t);

// Throws lf::Error "lf::<op>: <message> (got float32[2, 3], int64[3])". Inside a UserOp scope of
// another name: "lf::<user op>: <message> (in lf::<op>) (got ...)".
[[noreturn]] void fail(const char* op, const std::string& message, std::initializer_list<const Tensor*> args = {});

// The op the user called, for the length of a composite's body: an error one of the ops it is
// made of raises names the user's op first (conv1d's, not the conv2d it records), and the inner op
// after it. Nested scopes keep the outermost name (the user's call).
class UserOp {
 public:
  explicit UserOp(const char* name);
  ~UserOp();
  UserOp(const UserOp&) = delete;
  UserOp& operator=(const UserOp&) = delete;

 private:
  const char* saved_;
};
// The op an error names: the outermost UserOp's, else `op`.
const char* user_op(const char* op);
// The outermost UserOp's name, or null outside every scope (a node records it: Node::user_op).
const char* current_user_op();

// Throws if `t` is an empty handle.
void check_defined(const char* op, std::initializer_list<const Tensor*> args);
void check_same_device(const char* op, std::initializer_list<const Tensor*> args);
// A shape a new tensor of `dtype` may have (runtime/checked.h): no negative size, its element count
// and byte size fit int64. record() checks every node's shape this way too; ops check first to
// name themselves as the user called them (lf::zeros rather than lf::full).
void check_shape(const char* op, const Shape& shape, DType dtype);

int64_t normalize_dim(const char* op, int64_t dim, int64_t rank, const Tensor& x);

// The gather primitive (frontend/ops_index.cpp): `src` has the result's sizes except along `axis`,
// `index` the result's shape; `op` is the user-facing op its index errors name.
Tensor record_gather(const Tensor& src, int64_t axis, const Tensor& index, ir::GatherOp op);

// The coordinate along dim d of every element of `shape`: int64, an arange viewed along d.
Tensor coord(const Shape& shape, size_t d, Device device);

DType promote(DType a, DType b);
DType promote_scalar(DType t, Scalar::Kind kind);
Shape broadcast_shapes(const char* op, const Shape& x, const Shape& y, std::initializer_list<const Tensor*> args);
inline Shape broadcast_shapes(const char* op, const Tensor& a, const Tensor& b) {
  return broadcast_shapes(op, a.shape(), b.shape(), {&a, &b});
}

Tensor cast_to(const Tensor& x, DType dtype);           // no node when the dtype already matches
Tensor broadcast_to(const Tensor& x, const Shape& shape);  // reshape + expand; no node when equal
Tensor full_like_shape(const Shape& shape, Scalar value, DType dtype, Device device);
// A C++ number used as an operand (x + 1): a `full` node like full_like_shape's, but a pending one
// this thread made recently for the same shape, dtype, device and value is shared instead of
// making another (a loop of `y = y * 2 + 1` records one node per op, not two). The node is not in
// the trace (no handle ever holds it, so it is never a sync root). The reference stays valid until
// this thread's next call.
const NodePtr& scalar_operand(const Shape& shape, Scalar value, DType dtype, Device device);

// The centered values and the sum of their squares over `dims` (sorted, non-negative) of a float
// tensor, for var, std and the norms, by the corrected two-pass algorithm: c = x - mean(x), then
// e = mean(c), the mean's rounding error to first order, centered = c - e and sum_sq = sum(c^2)
// - n e^2 (at least 0). The rounded mean of equal values need not be that value (n v / n rounds
// twice), and for values above about 3e4 in float32 that step outweighs a norm's eps: x - mean(x)
// alone made layer_norm give rounding noise times its weight where PyTorch's Welford statistics
// give exactly its bias (the fuzzer's seed 1607135). Here every c of such a slab is the same
// small multiple of the value's rounding step, so its sums are exact, e is exactly it, and
// centered and sum_sq are exactly 0. (Beyond about 1e25 in float32 that step's square overflows:
// sum_sq is inf there, so var is inf where PyTorch gives 0, and a norm still gives exactly its
// bias.) sum(c) and sum(c^2) are reductions of one level, in the same pass or block exchange,
// so the kernel makes no more passes than x - mean(x) did. A clamp of the mean to the slab's
// [min, max] was exact everywhere but cost two more reductions in the first level: the
// embedding + layer_norm program 0.029 -> 0.041 ms on the H200. `mean`, if given, receives
// mean(x) + e.
struct Moments {
  Tensor centered, sum_sq;
  int64_t n;  // the values in each slab
};
Moments moments(const Tensor& x, const std::vector<int64_t>& dims, Tensor* mean = nullptr);

}  // namespace lf::detail
