// Scans (cumsum, cumprod) on the CPU over the thread pool. Many lines: blocks of up to 64 lines
// side by side (adjacent along `inner`, so a scan along a leading dim reads rows contiguously),
// each line accumulated in order exactly as the reference executor does. Few long lines: a
// two-pass scan over fixed chunks of a line (each chunk's total, then each chunk scanned from the
// running total of those before it). Chunks do not depend on the thread count, so results do not
// either. Accumulation in the compute type (float for the 16-bit floats), rounded on store.
#include <algorithm>
#include <vector>

#include "codegen/backend/scan_scatter.h"
#include "codegen/cpu/backend.h"
#include "codegen/ir/dtype_dispatch.h"
#include "codegen/reference/math.h"
#include "runtime/thread_pool.h"

namespace lf::cpu {
namespace {

constexpr int64_t kLinesPerItem = 64;      // lines scanned side by side in one work item
constexpr int64_t kChunk = int64_t{1} << 14;  // elements of a long line per chunk of the two-pass scan
constexpr int64_t kLongLinesMax = 16;      // at most this many lines: each line split into chunks

template <typename C, bool Sum>
C combine(C a, C b) {
  return Sum ? ref::add(a, b) : ref::mul(a, b);
}

template <typename S, typename C, bool Sum>
void scan_lines(const backend::ScanCall& call, S* out) {
  const S* x = static_cast<const S*>(call.data) + call.offset;
  int64_t blocks = (call.inner + kLinesPerItem - 1) / kLinesPerItem;
  int64_t items = call.outer * blocks;
  int64_t chunks = std::min<int64_t>(items, 8 * rt::num_cpu_threads());
  rt::parallel_for(chunks, [&](int64_t c) {
    C acc[kLinesPerItem];
    for (int64_t item = items * c / chunks; item < items * (c + 1) / chunks; ++item) {
      int64_t o = item / blocks, k0 = item % blocks * kLinesPerItem;
      int64_t width = std::min(kLinesPerItem, call.inner - k0);
      std::fill(acc, acc + width, Sum ? C(0) : C(1));
      const S* line = x + o * call.so + k0 * call.si;
      S* dst = out + o * call.n * call.inner + k0;
      for (int64_t j = 0; j < call.n; ++j, line += call.sn, dst += call.inner)
        for (int64_t k = 0; k < width; ++k) {
          acc[k] = combine<C, Sum>(acc[k], to_compute(line[k * call.si]));
          dst[k] = from_value<S>(acc[k]);
        }
    }
  });
}

template <typename S, typename C, bool Sum>
void scan_long_lines(const backend::ScanCall& call, S* out) {
  const S* x = static_cast<const S*>(call.data) + call.offset;
  int64_t chunks = (call.n + kChunk - 1) / kChunk;
  std::vector<C> totals(static_cast<size_t>(chunks));
  for (int64_t o = 0; o < call.outer; ++o)
    for (int64_t k = 0; k < call.inner; ++k) {
      const S* line = x + o * call.so + k * call.si;
      S* dst = out + o * call.n * call.inner + k;
      rt::parallel_for(chunks, [&](int64_t c) {
        C acc = Sum ? C(0) : C(1);
        for (int64_t j = c * kChunk; j < std::min(call.n, (c + 1) * kChunk); ++j)
          acc = combine<C, Sum>(acc, to_compute(line[j * call.sn]));
        totals[static_cast<size_t>(c)] = acc;
      });
      C run = Sum ? C(0) : C(1);  // totals become each chunk's starting value
      for (C& t : totals) {
        C total = t;
        t = run;
        run = combine<C, Sum>(run, total);
      }
      rt::parallel_for(chunks, [&](int64_t c) {
        C acc = totals[static_cast<size_t>(c)];
        for (int64_t j = c * kChunk; j < std::min(call.n, (c + 1) * kChunk); ++j) {
          acc = combine<C, Sum>(acc, to_compute(line[j * call.sn]));
          dst[j * call.inner] = from_value<S>(acc);
        }
      });
    }
}

}  // namespace

void run_scan(backend::ScanCall& call) {
  ir::Node* y = call.node();
  auto out = rt::Storage::allocate(y->device, static_cast<size_t>(call.numel()) * dtype_size(call.dtype));
  bool sum = call.op == ir::Op::CumSum;
  bool long_lines = call.lines() <= kLongLinesMax && call.n >= 2 * kChunk;
  if (call.numel() > 0) {
    dispatch(call.dtype, [&](auto tag) {
      using S = typename decltype(tag)::storage_t;
      using C = typename decltype(tag)::compute_t;
      S* o = static_cast<S*>(out->data());
      if constexpr (std::is_same_v<S, bool>) return;  // the frontend never records bool (cast, or refused)
      else       if (long_lines) sum ? scan_long_lines<S, C, true>(call, o) : scan_long_lines<S, C, false>(call, o);
      else sum ? scan_lines<S, C, true>(call, o) : scan_lines<S, C, false>(call, o);
    });
  }
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += 2 * static_cast<uint64_t>(call.numel()) * dtype_size(call.dtype);
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  call.log(long_lines ? "two-pass scan of each line in chunks of 16384 on the thread pool"
                      : "lines side by side on the thread pool");
}

}  // namespace lf::cpu
