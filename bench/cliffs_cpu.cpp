// Issue 51's CPU cliffs: four programs far slower than the same work written another way
// (argmax against max, a GEMV against a multiply and row sum, a column sum against a row sum, one
// top-k round over a single long row), each fused and unfused, medians after a warm-up. Public API
// only. numpy's figures for the same programs: bench/cliffs_cpu.py.
//
//   lazyfuse-bench-cliffs [--reps N]   (default 21)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

using Clock = std::chrono::steady_clock;
int g_reps = 21;

// The median of g_reps runs of fn after two warm-ups (the first compiles, the second records the
// flush plan).
double median_ms(const std::function<void()>& fn) {
  fn();
  fn();
  std::vector<double> t;
  for (int i = 0; i < g_reps; ++i) {
    auto s = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

lf::Tensor materialized(lf::Tensor t) {
  lf::sync();
  return t;
}

struct Row {
  std::string name;
  std::function<void()> run;  // records the program and syncs its results
};

void report(const Row& r) {
  lf::set_fusion_enabled(true);
  double fused = median_ms(r.run);
  lf::set_fusion_enabled(false);
  double unfused = median_ms(r.run);
  lf::set_fusion_enabled(true);
  std::printf("%-44s %9.3f %9.3f\n", r.name.c_str(), fused, unfused);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) g_reps = std::max(1, std::atoi(argv[++i]));
  lf::set_default_device(lf::Device::cpu());
  lf::manual_seed(1);
  lf::Tensor x = materialized(lf::rand({4096, 1000}));
  lf::Tensor g = materialized(lf::rand({4096, 1}));
  lf::Tensor a = materialized(lf::rand({32768, 64}));
  lf::Tensor v = materialized(lf::rand({64, 1}));
  const int64_t n = int64_t{1} << 20;
  lf::Tensor xs = materialized(lf::rand({n}));
  lf::Tensor idx = materialized(lf::arange(0, static_cast<double>(n), 1, lf::DType::Int64));
  const double ninf = -std::numeric_limits<double>::infinity();

  std::printf("median of %d runs, ms                        %9s %9s\n", g_reps, "fused", "unfused");
  std::vector<Row> rows = {
      {"argmax({1}) of 4096x1000", [&] { x.argmax({1}).to_vector<int64_t>(); }},
      {"  peer: max({1}) of 4096x1000", [&] { x.max({1}).to_vector<float>(); }},
      {"matmul(a 32768x64, v 64x1)", [&] { lf::matmul(a, v).to_vector<float>(); }},
      {"  peer: sum(a * v^T, {1})", [&] { lf::sum(a * lf::transpose(v, 0, 1), {1}).to_vector<float>(); }},
      {"sum(x * g, {0}), x 4096x1000, g 4096x1", [&] { lf::sum(x * g, {0}).to_vector<float>(); }},
      {"  peer: sum(x * 2, {1})", [&] { lf::sum(x * 2, {1}).to_vector<float>(); }},
      {"top-k round on 2^20 (max, argmax, where)",
       [&] {
         lf::Tensor m = lf::max(xs);
         lf::Tensor at = lf::argmax(xs);
         lf::Tensor next = lf::where(idx == at, ninf, xs);
         lf::sync();
         (void)m.item<float>();
         (void)next;
       }},
  };
  for (const Row& r : rows) report(r);
  return 0;
}
