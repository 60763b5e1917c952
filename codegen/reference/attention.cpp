#include "codegen/reference/attention.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "codegen/ir/attention.h"

namespace lf::ir {

namespace {

std::vector<double> dense(const Value& v) {
  Value c = to_contiguous(v, DType::Float64);
  size_t n = static_cast<size_t>(shape_numel(v.shape));
  std::vector<double> out(n);
  if (n) std::memcpy(out.data(), c.storage->data(), n * sizeof(double));
  return out;
}

}  // namespace

Value reference_attention(const Node& node, const std::vector<Value>& in) {
  const AttentionParams p = AttentionParams::of(node);
  const Shape& qs = in[0].shape;
  const size_t r = qs.size();
  const int64_t tq = qs[r - 2], d = qs[r - 1], tk = in[1].shape[r - 2], dv = in[2].shape[r - 1];
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) batch *= qs[i];
  // Output row (b, i) goes to ((b / h) * tq + i) * h + b % h: h = 1 is [batch..., Tq, Dv], else the
  // last batch dim (of size h) and Tq swapped.
  const int64_t h = p.heads_last ? qs[r - 3] : 1;
  std::vector<double> q = dense(in[0]), k = dense(in[1]), v = dense(in[2]), m;
  if (p.has_mask()) m = dense(in[3]);  // the mask input is over [..., Tq, Tk] (views broadcast it)
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> out(static_cast<size_t>(batch * tq * dv)), x(static_cast<size_t>(tk));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < tq; ++i) {
      double mx = -inf;
      bool nan = false;
      for (int64_t j = 0; j < tk; ++j) {
        double s = 0;
        for (int64_t c = 0; c < d; ++c) s += q[(b * tq + i) * d + c] * k[(b * tk + j) * d + c];
        s *= p.scale;
        double mv = p.has_mask() ? m[(b * tq + i) * tk + j] : 0;
        if (p.mask == AttentionParams::kAdd) s += mv;
        if ((p.mask == AttentionParams::kKeep && mv == 0) || (p.mask == AttentionParams::kDrop && mv != 0)) s = -inf;
        if (p.causal && j > i) s = -inf;
        s *= p.post_scale;
        x[static_cast<size_t>(j)] = s;
        nan |= std::isnan(s);
        mx = std::max(mx, s);
      }
      if (nan) mx = std::numeric_limits<double>::quiet_NaN();  // max propagates NaN, as the unfused max does
      double sum = 0;
      for (int64_t j = 0; j < tk; ++j) sum += (x[static_cast<size_t>(j)] = std::exp(x[static_cast<size_t>(j)] - mx));
      for (int64_t c = 0; c < dv; ++c) {
        double o = 0;
        for (int64_t j = 0; j < tk; ++j) o += x[static_cast<size_t>(j)] / sum * v[(b * tk + j) * dv + c];
        out[static_cast<size_t>((((b / h) * tq + i) * h + b % h) * dv + c)] = o;
      }
    }
  Shape os = qs;
  os[r - 1] = dv;
  if (p.heads_last) std::swap(os[r - 3], os[r - 2]);
  auto storage = rt::Storage::allocate(Device::cpu(), out.size() * sizeof(double));
  if (!out.empty()) std::memcpy(storage->data(), out.data(), out.size() * sizeof(double));
  return to_contiguous(Value{storage, DType::Float64, os, Layout{contiguous_strides(os), 0}}, node.dtype);
}

}  // namespace lf::ir
