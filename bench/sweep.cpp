// Issue 51's sweep: points generated over shapes, not picked by hand, each timed fused and unfused
// and set against its floor, so that the worst cases show themselves. Public API only; numpy on
// the same points (read from this CSV) and the report of the worst: bench/sweep_numpy.py.
//
//   lazyfuse-bench-sweep [--device cpu|cuda] [--quick] [--csv FILE] [--reps N] [--list]
//     --quick: a coarser grid (totals 2^12, 2^18, 2^22 for rank 2; 2^20, 2^22 for the rest),
//              totals <= 2^22 elements (else a full grid to 2^24: tens of thousands of points, hours)
//     --reps:  timed runs a point, fused and unfused in turn, after two warm-ups of each (default
//              7, 5 with --quick); a point whose run takes over 100 ms gets 3
//     --list:  print the points and exit
//
// Points: reductions (sum, mean, max, argmax, argmin, var, logsumexp) over every dim and every pair
// of dims (argmax and argmin take one dim, as PyTorch's) of 2-D, 3-D and 4-D float32 inputs that
// are contiguous, transposed (last two dims), sliced (step 2 along the last dim) or broadcast
// (dim 0 expanded from 1); a point is (rows, row length): the product of the kept dims and of the
// reduced dims, on a log grid. Elementwise a*b+c and exp with every broadcast pattern of 2-D and
// 3-D operands; matmul with M, N or K in {1, 2, 4, 8, 16} against large other dims, and square;
// softmax and layer_norm over a non-last dim.
//
// Floor: bytes that must move (each input's storage read once + the output written) / the
// bandwidth of a memcpy moving as many bytes, measured in this run (see measure_copies; the floor
// from a DRAM-sized copy is the last column); for matmul the larger of that and FLOPs / the peak
// measured in this run (a square matmul). ratio = ms / floor_ms.
#include <lazyfuse/lazyfuse.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using Fn = std::function<lf::Tensor()>;

double ms_since(Clock::time_point s) { return std::chrono::duration<double, std::milli>(Clock::now() - s).count(); }

struct Point {
  std::string op, family;  // family: reduce, elementwise, matmul, norm (the heat maps' grouping)
  std::string dims;        // "1", "0;2" (';' keeps the CSV plain); empty where none
  std::string layout;      // reduce: contiguous|transposed|sliced|broadcast; elementwise: "b=10;c=11"
  lf::Shape shape;         // the logical input shape; matmul: {M, K, N}
  int64_t rows = 1, len = 1;
  double bytes = 0, flops = 0;
};

std::string join(const lf::Shape& s, const char* sep) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? sep : "") + std::to_string(s[i]);
  return r;
}

// ---- The grid. Exponents of two: (rows, row length) pairs under the total cap.
struct Grid {
  std::vector<std::pair<int, int>> rl;       // reductions of rank 2
  std::vector<std::pair<int, int>> rl_wide;  // of ranks 3 and 4, elementwise, norms (coarser with --quick)
  int cap = 24;
};

Grid make_grid(bool quick) {
  Grid g;
  if (quick) {
    g.cap = 22;
    for (int r = 0; r <= 20; r += 2)
      for (int l = 0; l <= 22; l += 2)
        if (r + l == 12 || r + l == 18 || r + l == 22) g.rl.push_back({r, l});
    for (int r = 0; r <= 20; r += 4)
      for (int l = 0; l <= 20; l += 4)
        if (r + l == 20) g.rl_wide.push_back({r, l});
    g.rl_wide.push_back({0, 22});
    return g;
  }
  for (int r = 0; r <= 20; r += 2)
    for (int l = 0; l <= 24; l += 2)
      if (r + l <= g.cap) g.rl.push_back({r, l});
  g.rl_wide = g.rl;
  return g;
}

// Splits 2^e over n dims as evenly as powers of two allow (the first dims get the larger share).
std::vector<int64_t> split(int e, size_t n) {
  std::vector<int64_t> out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    int share = (e + static_cast<int>(n - i) - 1) / static_cast<int>(n - i);
    out[i] = int64_t{1} << share;
    e -= share;
  }
  return out;
}

// The shape of a rank-`rank` input whose reduced dims multiply to 2^le and kept dims to 2^re.
lf::Shape shape_for(int rank, const std::vector<int64_t>& reduced, int re, int le) {
  std::vector<int64_t> kept_dims, red_dims;
  for (int d = 0; d < rank; ++d)
    (std::find(reduced.begin(), reduced.end(), d) != reduced.end() ? red_dims : kept_dims).push_back(d);
  if (kept_dims.empty() && re > 0) return {};
  lf::Shape s(static_cast<size_t>(rank), 1);
  std::vector<int64_t> rk = split(re, kept_dims.size()), rd = split(le, red_dims.size());
  for (size_t i = 0; i < kept_dims.size(); ++i) s[static_cast<size_t>(kept_dims[i])] = rk[i];
  for (size_t i = 0; i < red_dims.size(); ++i) s[static_cast<size_t>(red_dims[i])] = rd[i];
  return s;
}

int64_t numel(const lf::Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Storage elements of a reduction's input in `layout` (a slice keeps every other element of its
// base, a broadcast input is its dim-0 row).
int64_t storage(const lf::Shape& s, const std::string& layout) {
  if (layout == "sliced") return 2 * numel(s);
  if (layout == "broadcast") return numel(s) / s[0];
  return numel(s);
}

const char* const kReductions[] = {"sum", "mean", "max", "argmax", "argmin", "var", "logsumexp"};

void add_reductions(const Grid& g, std::vector<Point>& pts) {
  const char* const layouts[] = {"contiguous", "transposed", "sliced", "broadcast"};
  for (int rank = 2; rank <= 4; ++rank) {
    std::vector<std::vector<int64_t>> dim_sets;
    for (int a = 0; a < rank; ++a) dim_sets.push_back({a});
    for (int a = 0; a < rank; ++a)
      for (int b = a + 1; b < rank; ++b) dim_sets.push_back({a, b});
    const auto& grid = rank == 2 ? g.rl : g.rl_wide;
    for (const char* layout : layouts) {
      for (const char* op : kReductions) {
        const bool arg = std::strncmp(op, "arg", 3) == 0;
        for (const auto& dims : dim_sets) {
          if (arg && dims.size() > 1) continue;
          for (auto [re, le] : grid) {
            lf::Shape s = shape_for(rank, dims, re, le);
            if (s.empty()) continue;
            if (std::strcmp(layout, "broadcast") == 0 && s[0] == 1) continue;  // the same as contiguous
            Point p{op, "reduce", join(dims, ";"), layout, s, int64_t{1} << re, int64_t{1} << le};
            p.bytes = 4.0 * static_cast<double>(storage(s, layout)) + (arg ? 8.0 : 4.0) * static_cast<double>(p.rows);
            pts.push_back(p);
          }
        }
      }
    }
  }
}

// Masks over dims: bit d set = the operand is full along d, else 1 there (broadcast).
lf::Shape masked(const lf::Shape& s, unsigned mask) {
  lf::Shape m = s;
  for (size_t d = 0; d < s.size(); ++d)
    if (!(mask >> d & 1)) m[d] = 1;
  return m;
}

std::string mask_str(unsigned mask, size_t rank) {
  std::string r;
  for (size_t d = 0; d < rank; ++d) r += (mask >> d & 1) ? '1' : '0';
  return r;
}

void add_elementwise(const Grid& g, bool quick, std::vector<Point>& pts) {
  for (int rank = 2; rank <= 3; ++rank) {
    const unsigned full = (1u << rank) - 1;
    for (auto [re, le] : g.rl_wide) {
      lf::Shape s = shape_for(rank, {rank - 1}, re, le);  // rows: the leading dims, length: the last
      auto add = [&](const std::string& op, const std::string& layout, double in_elems) {
        Point p{op, "elementwise", "", layout, s, int64_t{1} << re, int64_t{1} << le};
        p.bytes = 4.0 * (in_elems + static_cast<double>(numel(s)));
        pts.push_back(p);
      };
      for (unsigned mx = 0; mx <= full; ++mx)
        add("exp", "x=" + mask_str(mx, s.size()), static_cast<double>(numel(masked(s, mx))));
      // a full; b and c over every pattern (--quick: b and c share one).
      for (unsigned mb = 0; mb <= full; ++mb)
        for (unsigned mc = 0; mc <= full; ++mc) {
          if (quick && mb != mc) continue;
          add("a*b+c", "b=" + mask_str(mb, s.size()) + ";c=" + mask_str(mc, s.size()),
              static_cast<double>(numel(s) + numel(masked(s, mb)) + numel(masked(s, mc))));
        }
    }
  }
}

void add_matmuls(bool quick, std::vector<Point>& pts) {
  const std::vector<int64_t> bigs = quick ? std::vector<int64_t>{2048} : std::vector<int64_t>{1024, 4096};
  auto add = [&](const std::string& layout, int64_t m, int64_t k, int64_t n) {
    Point p{"matmul", "matmul", "", layout, {m, k, n}, std::min({m, k, n}), std::max({m, k, n})};
    p.bytes = 4.0 * static_cast<double>(m * k + k * n + m * n);
    p.flops = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
    pts.push_back(p);
  };
  for (int64_t big : bigs)
    for (int64_t small : {1, 2, 4, 8, 16}) {
      add("small-M", small, big, big);
      add("small-N", big, big, small);
      add("small-K", big, small, big);
    }
  for (int64_t sq : quick ? std::vector<int64_t>{512, 1024} : std::vector<int64_t>{512, 1024, 2048})
    add("square", sq, sq, sq);
}

void add_norms(const Grid& g, std::vector<Point>& pts) {
  for (const char* op : {"softmax", "layer_norm"})
    for (int rank = 2; rank <= 3; ++rank)
      for (int64_t dim = 0; dim < rank - 1; ++dim)
        for (auto [re, le] : g.rl_wide) {
          lf::Shape s = shape_for(rank, {dim}, re, le);
          Point p{op, "norm", std::to_string(dim), "contiguous", s, int64_t{1} << re, int64_t{1} << le};
          p.bytes = 8.0 * static_cast<double>(numel(s));
          pts.push_back(p);
        }
}

// ---- Programs.
lf::Tensor materialized(lf::Tensor t) {
  lf::sync();
  return t;
}

// The input of a reduction point: its base is materialized once; the view is recorded per call
// (a view held across a sync could be materialized into a copy).
struct Input {
  lf::Tensor base;
  std::string layout;
  lf::Shape shape;
  lf::Tensor view() const {
    if (layout == "transposed") return lf::transpose(base, -1, -2);
    if (layout == "sliced") return lf::slice(base, -1, 0, 2 * shape.back(), 2);
    if (layout == "broadcast") return lf::expand(base, shape);
    return base;
  }
};

Input make_input(const lf::Shape& s, const std::string& layout) {
  lf::Shape b = s;
  if (layout == "transposed") std::swap(b[b.size() - 1], b[b.size() - 2]);
  if (layout == "sliced") b.back() *= 2;
  if (layout == "broadcast") b[0] = 1;
  return {materialized(lf::rand(b)), layout, s};
}

std::vector<int64_t> parse_dims(const std::string& d) {
  std::vector<int64_t> r;
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i] != ';') r.push_back(d[i] - '0');
  return r;
}

lf::Tensor reduce(const std::string& op, const lf::Tensor& x, const std::vector<int64_t>& d) {
  if (op == "sum") return lf::sum(x, d);
  if (op == "mean") return lf::mean(x, d);
  if (op == "max") return lf::max(x, d);
  if (op == "argmax") return lf::argmax(x, d);
  if (op == "argmin") return lf::argmin(x, d);
  if (op == "var") return lf::var(x, d);
  return lf::logsumexp(x, d);
}

// Masks back from "x=10" / "b=10;c=11": the i-th mask string of the layout.
unsigned mask_at(const std::string& layout, int i) {
  size_t at = 0;
  for (int k = 0; k <= i; ++k) at = layout.find('=', at) + 1;
  unsigned m = 0;
  for (size_t d = 0; at + d < layout.size() && (layout[at + d] == '0' || layout[at + d] == '1'); ++d)
    if (layout[at + d] == '1') m |= 1u << d;
  return m;
}

Fn program(const Point& p) {
  if (p.family == "reduce") {
    Input in = make_input(p.shape, p.layout);
    std::vector<int64_t> d = parse_dims(p.dims);
    return [in, d, op = p.op] { return reduce(op, in.view(), d); };
  }
  if (p.family == "elementwise") {
    if (p.op == "exp") {
      lf::Tensor x = materialized(lf::rand(masked(p.shape, mask_at(p.layout, 0))));
      return [x, s = p.shape] { return lf::exp(lf::expand(x, s)); };
    }
    lf::Tensor a = materialized(lf::rand(p.shape));
    lf::Tensor b = materialized(lf::rand(masked(p.shape, mask_at(p.layout, 0))));
    lf::Tensor c = materialized(lf::rand(masked(p.shape, mask_at(p.layout, 1))));
    return [a, b, c] { return a * b + c; };
  }
  if (p.family == "matmul") {
    lf::Tensor a = materialized(lf::rand({p.shape[0], p.shape[1]}));
    lf::Tensor b = materialized(lf::rand({p.shape[1], p.shape[2]}));
    return [a, b] { return lf::matmul(a, b); };
  }
  lf::Tensor x = materialized(lf::rand(p.shape));
  const int64_t dim = std::stoll(p.dims);
  if (p.op == "softmax") return [x, dim] { return lf::softmax(x, dim); };
  return [x, dim] { return lf::transpose(lf::layer_norm(lf::transpose(x, dim, -1), 1), dim, -1); };
}

bool g_cuda = false;

double run_once(const Fn& f) {
  auto s = Clock::now();
  lf::Tensor r = f();
  lf::sync();
  if (g_cuda) lf::device_synchronize();
  return ms_since(s);
}

// Medians of `reps` runs fused and unfused, in turn (fused, unfused, ...: a loaded machine's drift
// falls on both; the flush plans are kept apart by the fusion flag), after two warm-ups of each (the
// first compiles, the second records the flush plan).
std::pair<double, double> medians_ms(const Fn& f, int reps) {
  double slowest = 0;
  for (bool fused : {true, false}) {
    lf::set_fusion_enabled(fused);
    run_once(f);
    slowest = std::max(slowest, run_once(f));
  }
  if (slowest > 100) reps = std::min(reps, 3);
  std::vector<double> t[2];
  for (int i = 0; i < reps; ++i)
    for (int fused = 1; fused >= 0; --fused) {
      lf::set_fusion_enabled(fused == 1);
      t[fused].push_back(run_once(f));
    }
  lf::set_fusion_enabled(true);
  for (auto& v : t) std::sort(v.begin(), v.end());
  return {t[1][t[1].size() / 2], t[0][t[0].size() / 2]};
}

// Copy bandwidth, bytes read + written, of memcpys of 2^10 .. 2^28 bytes: a point's inputs and
// output of at most 2^24 floats sit in this machine's caches across its runs, so the floor of a
// point is the copy that moves as many bytes (bw_at), not a copy from DRAM, which sweeps under it.
// Below 4 MiB one thread copies (as a small kernel runs on one); from 4 MiB every core, each
// looping over its share (one thread start per batch, not per copy). The fastest batch of 3, since
// another process on the machine can only slow a copy down.
std::vector<double> g_bw;  // GB/s by log2 of the bytes copied

double copy_batch_gbps(size_t bytes, std::vector<char>& a, std::vector<char>& b) {
  const unsigned threads = bytes >= (size_t{1} << 22) ? std::max(1u, std::thread::hardware_concurrency()) : 1u;
  const int iters = static_cast<int>(std::max<size_t>(4, (size_t{1} << 27) / bytes));
  double best = 1e30;
  for (int batch = 0; batch < 4; ++batch) {  // the first batch faults pages in and is not counted
    auto s = Clock::now();
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t) {
      size_t lo = bytes * t / threads, hi = bytes * (t + 1) / threads;
      auto copy = [&, lo, hi] {
        for (int i = 0; i < iters; ++i) {
          std::memcpy(b.data() + lo, a.data() + lo, hi - lo);
          asm volatile("" ::: "memory");  // keeps the copies from being merged
        }
      };
      if (threads == 1)
        copy();
      else
        ts.emplace_back(copy);
    }
    for (auto& th : ts) th.join();
    if (batch > 0) best = std::min(best, ms_since(s) / iters);
  }
  return 2.0 * static_cast<double>(bytes) / (best * 1e6);
}

void measure_copies() {
  std::vector<char> a(size_t{1} << 28, 1), b(size_t{1} << 28, 0);
  for (int e = 0; e <= 28; ++e) g_bw.push_back(e < 10 ? 0.0 : copy_batch_gbps(size_t{1} << e, a, b));
  for (int e = 0; e < 10; ++e) g_bw[static_cast<size_t>(e)] = g_bw[10];
}

// The bandwidth of the copy of `traffic` bytes (half read, half written): the next power of two up.
double bw_at(double traffic) {
  int e = static_cast<int>(std::ceil(std::log2(std::max(1.0, traffic / 2))));
  return g_bw[static_cast<size_t>(std::clamp(e, 0, 28))];
}

// An lf copy (-x) of 2^26 floats, printed beside the memcpys; on a GPU it is the bandwidth.
double lf_copy_gbps() {
  const int64_t n = int64_t{1} << 26;
  lf::Tensor x = materialized(lf::rand({n}));
  double ms = 1e30;
  for (int rep = 0; rep < 12; ++rep) {
    double t = run_once([&] { return -x; });
    if (rep > 0) ms = std::min(ms, t);
  }
  return 8.0 * static_cast<double>(n) / (ms * 1e6);
}

// Peak FLOP/s: the fastest of 5 fused square matmuls (2048; 1024 with --quick).
double peak_gflops(bool quick) {
  const int64_t n = quick ? 1024 : 2048;
  lf::Tensor a = materialized(lf::rand({n, n})), b = materialized(lf::rand({n, n}));
  double ms = 1e30;
  for (int rep = 0; rep < 6; ++rep) {
    double t = run_once([&] { return lf::matmul(a, b); });
    if (rep > 0) ms = std::min(ms, t);
  }
  return 2.0 * static_cast<double>(n * n * n) / (ms * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, list = false;
  int reps = 0;
  std::string csv_path, device = "cpu";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick")
      quick = true;
    else if (a == "--list")
      list = true;
    else if (a == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--csv" && i + 1 < argc)
      csv_path = argv[++i];
    else if (a == "--device" && i + 1 < argc)
      device = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--device cpu|cuda] [--quick] [--csv FILE] [--reps N] [--list]\n", argv[0]);
      return 2;
    }
  }
  if (reps == 0) reps = quick ? 5 : 7;
  g_cuda = device == "cuda";
  lf::set_default_device(g_cuda ? lf::Device::cuda(0) : lf::Device::cpu());
  lf::manual_seed(1);

  const Grid g = make_grid(quick);
  std::vector<Point> pts;
  add_reductions(g, pts);
  add_elementwise(g, quick, pts);
  add_matmuls(quick, pts);
  add_norms(g, pts);
  if (list) {
    for (const Point& p : pts)
      std::printf("%s %s [%s] %s %s\n", p.op.c_str(), p.dims.c_str(), p.layout.c_str(), join(p.shape, "x").c_str(),
                  p.family.c_str());
    std::printf("%zu points\n", pts.size());
    return 0;
  }

  const double lf_bw = lf_copy_gbps(), peak = peak_gflops(quick);
  measure_copies();
  if (g_cuda) std::fill(g_bw.begin(), g_bw.end(), lf_bw);
  const double bw = g_bw[28];  // from DRAM: the dram_floor_ms column
  std::printf("# %s, %zu points, reps %d, matmul peak %.1f GFLOP/s, lf copy (-x, 2^26 floats) %.1f GB/s\n",
              device.c_str(), pts.size(), reps, peak, lf_bw);
  std::printf("# memcpy GB/s (read + write) by bytes copied:");
  for (int e = 10; e <= 28; e += 2) std::printf(" 2^%d %.1f", e, g_bw[static_cast<size_t>(e)]);
  std::printf("\n");
  FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  const char* header =
      "op,family,dims,layout,shape,rows,row_len,bytes,flops,fused_ms,unfused_ms,floor_ms,ratio_fused,ratio_unfused,"
      "dram_floor_ms\n";
  if (csv)
    std::fprintf(csv, "# dram_copy_gbps=%.3f lf_copy_gbps=%.3f peak_gflops=%.3f device=%s\n%s", bw, lf_bw, peak,
                 device.c_str(), header);
  std::printf("%s", header);
  const auto start = Clock::now();
  for (const Point& p : pts) {
    double fused = NAN, unfused = NAN;
    try {
      std::tie(fused, unfused) = medians_ms(program(p), reps);
    } catch (const std::exception& e) {
      lf::set_fusion_enabled(true);
      std::fprintf(stderr, "%s %s %s %s: %s\n", p.op.c_str(), p.dims.c_str(), p.layout.c_str(),
                   join(p.shape, "x").c_str(), e.what());
    }
    double floor_ms = p.bytes / (bw_at(p.bytes) * 1e6);
    if (p.flops > 0) floor_ms = std::max(floor_ms, p.flops / (peak * 1e6));
    char line[512];
    std::snprintf(line, sizeof line, "%s,%s,%s,%s,%s,%lld,%lld,%.0f,%.0f,%.6g,%.6g,%.6g,%.4g,%.4g,%.6g\n", p.op.c_str(),
                  p.family.c_str(), p.dims.c_str(), p.layout.c_str(), join(p.shape, "x").c_str(),
                  static_cast<long long>(p.rows), static_cast<long long>(p.len), p.bytes, p.flops, fused, unfused,
                  floor_ms, fused / floor_ms, unfused / floor_ms, p.bytes / (bw * 1e6));
    std::printf("%s", line);
    std::fflush(stdout);
    if (csv) {
      std::fputs(line, csv);
      std::fflush(csv);
    }
  }
  std::printf("# %zu points in %.1f s\n", pts.size(), ms_since(start) / 1e3);
  if (csv) std::fclose(csv);
  return 0;
}
