// k-means' assignment on the CPU (ir::Op::Nearest): rows of points spread over the thread pool,
// each point's distance to every center computed as the ops it replaces round it (the difference
// and its square in the dtype, the sum in double rounded to the dtype: the reference's own
// order and roundings, so the indices are the reference's), the first minimum kept, a NaN
// distance first of all.
#include <algorithm>
#include <cmath>
#include <vector>

#include "codegen/backend/kernel.h"
#include "codegen/cpu/backend.h"
#include "codegen/ir/dtype_dispatch.h"
#include "runtime/thread_pool.h"

namespace lf::cpu {
namespace {

// What the computation reads of a call (a flush plan's replay keeps it, not the call's buffers).
struct Geometry {
  DType dtype;
  int64_t n, k, d;
  int64_t xo, xs0, xs1, co, cs0, cs1;  // offsets and strides in elements
  explicit Geometry(const backend::NearestCall& c)
      : dtype(c.dtype), n(c.n), k(c.k), d(c.d), xo(c.x.offset), xs0(c.x.strides[0]), xs1(c.x.strides[1]),
        co(c.c.offset), cs0(c.c.strides[0]), cs1(c.c.strides[1]) {}
};

// The indices of rows [begin, end) of x into out. The centers come transposed, [D][K] in the
// compute type (ct), so that a point's distances to kBlock centers side by side are one vector
// loop; each distance still sums its D terms in order, in double, as the reference does.
constexpr int64_t kBlock = 8;

template <typename S, typename C>
void nearest_rows(const Geometry& g, const char* x, const C* ct, int64_t* out, int64_t begin, int64_t end) {
  const int64_t k = g.k, d = g.d, xs0 = g.xs0, xs1 = g.xs1;
  const S* xp = reinterpret_cast<const S*>(x) + g.xo;
  auto round = [](C v) { return static_cast<C>(static_cast<S>(v)); };  // to the dtype and back
  std::vector<C> xr(static_cast<size_t>(d));
  for (int64_t i = begin; i < end; ++i) {
    for (int64_t e = 0; e < d; ++e) xr[static_cast<size_t>(e)] = static_cast<C>(xp[i * xs0 + e * xs1]);
    int64_t best = 0;
    C best_v = 0;
    bool done = false;
    for (int64_t j0 = 0; j0 < k && !done; j0 += kBlock) {
      double acc[kBlock] = {};
      for (int64_t e = 0; e < d; ++e) {
        const C xv = xr[static_cast<size_t>(e)];
        const C* row = ct + e * ((k + kBlock - 1) / kBlock * kBlock) + j0;
        for (int64_t t = 0; t < kBlock; ++t) {
          const C diff = round(xv - row[t]);
          acc[t] += static_cast<double>(round(diff * diff));
        }
      }
      for (int64_t t = 0; t < kBlock && j0 + t < k; ++t) {
        const int64_t j = j0 + t;
        const C v = static_cast<C>(static_cast<S>(static_cast<C>(acc[t])));  // as the reference stores its sum
        if (j == 0 || std::isnan(v) || v < best_v) {
          best = j;
          best_v = v;
        }
        if (std::isnan(best_v)) {  // the first NaN wins, as argmin
          done = true;
          break;
        }
      }
    }
    out[i] = best;
  }
}

void compute(const Geometry& call, const void* x, const void* c, void* out) {
  constexpr int64_t kRows = 256;  // a chunk of the pool
  const int64_t chunks = (call.n + kRows - 1) / kRows;
  dispatch(call.dtype, [&](auto tag) {
    using S = typename decltype(tag)::storage_t;
    using C = typename decltype(tag)::compute_t;
    if constexpr (std::is_floating_point_v<C>) {
      // The centers transposed to [D][K rounded up to kBlock] (the padding's distances unused).
      const int64_t kp = (call.k + kBlock - 1) / kBlock * kBlock;
      std::vector<C> ct(static_cast<size_t>(call.d * kp), C(0));
      const S* cp = static_cast<const S*>(c) + call.co;
      for (int64_t j = 0; j < call.k; ++j)
        for (int64_t e = 0; e < call.d; ++e)
          ct[static_cast<size_t>(e * kp + j)] = static_cast<C>(cp[j * call.cs0 + e * call.cs1]);
      rt::parallel_for(chunks, [&](int64_t chunk) {
        nearest_rows<S, C>(call, static_cast<const char*>(x), ct.data(), static_cast<int64_t*>(out), chunk * kRows,
                           std::min(call.n, (chunk + 1) * kRows));
      });
    }
  });
}

}  // namespace

void run_nearest(backend::NearestCall& call) {
  ir::Node* y = call.node();
  if (!is_floating(call.dtype)) return backend::run_nearest_on_reference(call, "not a floating dtype");
  auto out = rt::Storage::allocate(y->device, static_cast<size_t>(y->numel()) * sizeof(int64_t));
  const Geometry g(call);
  compute(g, call.x.data, call.c.data, out->data());
  call.finish(out, [g](void* const* p) { compute(g, p[0], p[1], p[2]); },
              "a thread pool over rows of 256 points, each center's distance summed in double");
}

}  // namespace lf::cpu
