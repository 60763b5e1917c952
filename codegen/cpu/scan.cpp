// Scans (cumsum, cumprod, logcumsumexp, cummax / cummin positions) on the CPU over the thread pool.
// Many lines: blocks of up to 64 lines side by side (adjacent along `inner`, so a scan along a
// leading dim reads rows contiguously), each line accumulated in order exactly as the reference
// executor does. Few long lines: a two-pass scan over fixed chunks of a line (each chunk's total,
// then each chunk scanned from the running total of those before it). Chunks do not depend on the
// thread count, so results do not either. Accumulation in the compute type (float for the 16-bit
// floats), rounded on store.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "codegen/backend/scan_scatter.h"
#include "codegen/cpu/backend.h"
#include "codegen/ir/dtype_dispatch.h"
#include "codegen/reference/math.h"
#include "runtime/thread_pool.h"

namespace lf::cpu {
namespace {

constexpr int64_t kLinesPerItem = 64;         // lines scanned side by side in one work item
constexpr int64_t kChunk = int64_t{1} << 14;  // elements of a long line per chunk of the two-pass scan
constexpr int64_t kLongLinesMax = 16;         // at most this many lines: each line split into chunks

// A scan as a monoid over states: id(), lift(value, position), combine(earlier, later), and the
// stored result of a state. The line path steps combine(state, lift(x, j)), as the reference.
template <typename S, typename C>
struct Sum {
  using State = C;
  using Out = S;
  static State id() { return C(0); }
  static State lift(C x, int64_t) { return x; }
  static State combine(State a, State b) { return ref::add(a, b); }
  static Out out(State s) { return from_value<S>(s); }
};
template <typename S, typename C>
struct Prod : Sum<S, C> {
  static C id() { return C(1); }
  static C combine(C a, C b) { return ref::mul(a, b); }
};
template <typename S, typename C>
struct LogSumExp : Sum<S, C> {
  static C id() { return -std::numeric_limits<C>::infinity(); }
  static C combine(C a, C b) { return ref::logaddexp(a, b); }
};
// The latest position of the running extreme; NaN wins and stays (the latest NaN's position).
template <typename C, bool Max>
struct Extreme {
  struct State {
    C v;
    int64_t at;  // -1: empty
  };
  using Out = int64_t;
  static bool nan(C v) {
    if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
    else return false;
  }
  static State id() { return {C{}, -1}; }
  static State lift(C x, int64_t j) { return {x, j}; }
  static State combine(State a, State b) {
    if (b.at < 0) return a;
    if (a.at < 0 || nan(b.v)) return b;
    if (nan(a.v)) return a;
    return (Max ? b.v >= a.v : b.v <= a.v) ? b : a;
  }
  static Out out(State s) { return s.at; }
};

template <typename Op, typename S>
void scan_lines(const backend::ScanLines& call, typename Op::Out* out) {
  using State = typename Op::State;
  const S* x = static_cast<const S*>(call.data) + call.offset;
  if (call.inner == 1) {
    // Lines along the last dim: 8 neighbouring lines stepped together, so that their additions
    // overlap instead of each waiting for the one before.
    constexpr int64_t kTogether = 8;
    int64_t items = (call.outer + kTogether - 1) / kTogether;
    int64_t chunks = std::min<int64_t>(items, 8 * rt::num_cpu_threads());
    rt::parallel_for(chunks, [&](int64_t c) {
      State acc[kTogether];
      for (int64_t item = items * c / chunks; item < items * (c + 1) / chunks; ++item) {
        int64_t o0 = item * kTogether, width = std::min(kTogether, call.outer - o0);
        std::fill(acc, acc + width, Op::id());
        const S* lines = x + o0 * call.so;
        auto* dst = out + o0 * call.n;
        for (int64_t j = 0; j < call.n; ++j)
          for (int64_t l = 0; l < width; ++l) {
            acc[l] = Op::combine(acc[l], Op::lift(to_compute(lines[l * call.so + j * call.sn]), j));
            dst[l * call.n + j] = Op::out(acc[l]);
          }
      }
    });
    return;
  }
  int64_t blocks = (call.inner + kLinesPerItem - 1) / kLinesPerItem;
  int64_t items = call.outer * blocks;
  int64_t chunks = std::min<int64_t>(items, 8 * rt::num_cpu_threads());
  rt::parallel_for(chunks, [&](int64_t c) {
    State acc[kLinesPerItem];
    for (int64_t item = items * c / chunks; item < items * (c + 1) / chunks; ++item) {
      int64_t o = item / blocks, k0 = item % blocks * kLinesPerItem;
      int64_t width = std::min(kLinesPerItem, call.inner - k0);
      std::fill(acc, acc + width, Op::id());
      const S* line = x + o * call.so + k0 * call.si;
      auto* dst = out + o * call.n * call.inner + k0;
      for (int64_t j = 0; j < call.n; ++j, line += call.sn, dst += call.inner)
        for (int64_t k = 0; k < width; ++k) {
          acc[k] = Op::combine(acc[k], Op::lift(to_compute(line[k * call.si]), j));
          dst[k] = Op::out(acc[k]);
        }
    }
  });
}

template <typename Op, typename S>
void scan_long_lines(const backend::ScanLines& call, typename Op::Out* out) {
  using State = typename Op::State;
  const S* x = static_cast<const S*>(call.data) + call.offset;
  int64_t chunks = (call.n + kChunk - 1) / kChunk;
  std::vector<State> totals(static_cast<size_t>(chunks));
  for (int64_t o = 0; o < call.outer; ++o)
    for (int64_t k = 0; k < call.inner; ++k) {
      const S* line = x + o * call.so + k * call.si;
      auto* dst = out + o * call.n * call.inner + k;
      rt::parallel_for(chunks, [&](int64_t c) {
        State acc = Op::id();
        for (int64_t j = c * kChunk; j < std::min(call.n, (c + 1) * kChunk); ++j)
          acc = Op::combine(acc, Op::lift(to_compute(line[j * call.sn]), j));
        totals[static_cast<size_t>(c)] = acc;
      });
      State run = Op::id();  // totals become each chunk's starting state
      for (State& t : totals) {
        State total = t;
        t = run;
        run = Op::combine(run, total);
      }
      rt::parallel_for(chunks, [&](int64_t c) {
        State acc = totals[static_cast<size_t>(c)];
        for (int64_t j = c * kChunk; j < std::min(call.n, (c + 1) * kChunk); ++j) {
          acc = Op::combine(acc, Op::lift(to_compute(line[j * call.sn]), j));
          dst[j * call.inner] = Op::out(acc);
        }
      });
    }
}

template <typename Op, typename S>
void scan_with(const backend::ScanLines& call, void* out, bool long_lines) {
  auto* o = static_cast<typename Op::Out*>(out);
  long_lines ? scan_long_lines<Op, S>(call, o) : scan_lines<Op, S>(call, o);
}

bool takes_long_lines(const backend::ScanLines& call) { return call.lines() <= kLongLinesMax && call.n >= 2 * kChunk; }

// The scan of `call`'s lines into `out` (contiguous, of the output's dtype).
void scan(const backend::ScanLines& call, void* o) {
  if (call.numel() == 0) return;
  const bool long_lines = takes_long_lines(call);
  dispatch(call.in_dtype, [&](auto tag) {
    using S = typename decltype(tag)::storage_t;
    using C = typename decltype(tag)::compute_t;
    switch (call.op) {
      case ir::Op::CumMax: return scan_with<Extreme<C, true>, S>(call, o, long_lines);
      case ir::Op::CumMin: return scan_with<Extreme<C, false>, S>(call, o, long_lines);
      default: break;
    }
    // The frontend records sums and products of bool and integers as int64, logcumsumexp of floats.
    if constexpr (!std::is_same_v<S, bool>) {
      if (call.op == ir::Op::CumSum) return scan_with<Sum<S, C>, S>(call, o, long_lines);
      if (call.op == ir::Op::CumProd) return scan_with<Prod<S, C>, S>(call, o, long_lines);
      if constexpr (std::is_floating_point_v<C>)
        if (call.op == ir::Op::LogCumSumExp) return scan_with<LogSumExp<S, C>, S>(call, o, long_lines);
    }
    throw Error(std::string("cpu scan: no ") + ir::op_name(call.op) + " of " + dtype_name(call.in_dtype) +
                " (internal error)");
  });
}

}  // namespace

void run_scan(backend::ScanCall& call) {
  ir::Node* y = call.node();
  auto out = rt::Storage::allocate(y->device, static_cast<size_t>(call.numel()) * dtype_size(call.dtype));
  scan(call, out->data());
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += static_cast<uint64_t>(call.numel()) * (dtype_size(call.in_dtype) + dtype_size(call.dtype));
  if (call.record) {  // for a flush plan: the input's buffer, the output
    call.record->outputs.emplace_back(y, out);
    call.record->addresses = {call.data, out->data()};
    call.record->replay = [lines = static_cast<const backend::ScanLines&>(call)](void* const* p) mutable {
      lines.data = p[0];
      scan(lines, p[1]);
    };
  }
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  call.log(takes_long_lines(call) ? "two-pass scan of each line in chunks of 16384 on the thread pool"
                                  : "lines side by side on the thread pool");
}

}  // namespace lf::cpu
