// Issue 51's CPU cliffs: four programs far slower than the same work written another way
// (argmax against max, a GEMV against a multiply and row sum, a column sum against a row sum, one
// top-k round over a single long row), then reductions whose rows' layout in memory is not their
// logical one (a transposed input), each fused and unfused, medians after a warm-up. Public API
// only. numpy's figures for the same programs: bench/cliffs_cpu.py.
//
//   lazyfuse-bench-cliffs [--reps N] [--only SUBSTRING]   (default 21 runs; --only: the rows whose
//                                                           name holds SUBSTRING)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

using Clock = std::chrono::steady_clock;
int g_reps = 21;

// Medians of g_reps runs of a and of b, run in turn (a, b, a, b, ...: a loaded machine's drift
// falls on both), after two warm-ups of each (the first compiles, the second records the flush
// plan).
std::pair<double, double> medians_ms(const std::function<void()>& a, const std::function<void()>& b) {
  for (int w = 0; w < 2; ++w) {
    a();
    if (b) b();
  }
  std::vector<double> ta, tb;
  for (int i = 0; i < g_reps; ++i) {
    auto s = Clock::now();
    a();
    ta.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
    if (!b) continue;
    s = Clock::now();
    b();
    tb.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
  }
  std::sort(ta.begin(), ta.end());
  std::sort(tb.begin(), tb.end());
  return {ta[ta.size() / 2], tb.empty() ? 0.0 : tb[tb.size() / 2]};
}

lf::Tensor materialized(lf::Tensor t) {
  lf::sync();
  return t;
}

// A program and the same work written another way (its peer; none for the top-k round).
struct Row {
  std::string name, peer_name;
  std::function<void()> run, peer;  // each records its program and syncs its results
};

void report(const Row& r) {
  lf::set_fusion_enabled(true);
  auto [fused, peer_fused] = medians_ms(r.run, r.peer);
  lf::set_fusion_enabled(false);
  auto [unfused, peer_unfused] = medians_ms(r.run, r.peer);
  lf::set_fusion_enabled(true);
  std::printf("%-44s %9.3f %9.3f\n", r.name.c_str(), fused, unfused);
  if (r.peer) std::printf("  peer: %-38s %9.3f %9.3f\n", r.peer_name.c_str(), peer_fused, peer_unfused);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) g_reps = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
  }
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
  // Transposed views: wide.t() is 4096 x 1024 with rows along its logical last dim strided in
  // memory; tall.t() is 1024 x 4096 with columns (logical dim 0) contiguous in memory.
  lf::Tensor wide = materialized(lf::rand({1024, 4096}));
  lf::Tensor tall = materialized(lf::rand({4096, 1024}));
  lf::Tensor sq = materialized(lf::rand({1024, 1024}));

  std::printf("median of %d runs (program and peer in turn), ms %9s %9s\n", g_reps, "fused", "unfused");
  std::vector<Row> rows = {
      {"argmax({1}) of 4096x1000", "max({1}) of 4096x1000", [&] { x.argmax({1}).to_vector<int64_t>(); },
       [&] { x.max({1}).to_vector<float>(); }},
      {"matmul(a 32768x64, v 64x1)", "sum(a * v^T, {1})", [&] { lf::matmul(a, v).to_vector<float>(); },
       [&] { lf::sum(a * lf::transpose(v, 0, 1), {1}).to_vector<float>(); }},
      {"sum(x * g, {0}), x 4096x1000, g 4096x1", "sum(x * 2, {1})", [&] { lf::sum(x * g, {0}).to_vector<float>(); },
       [&] { lf::sum(x * 2, {1}).to_vector<float>(); }},
      {"top-k round on 2^20 (max, argmax, where)", "",
       [&] {
         lf::Tensor m = lf::max(xs);
         lf::Tensor at = lf::argmax(xs);
         lf::Tensor next = lf::where(idx == at, ninf, xs);
         lf::sync();
         (void)m.item<float>();
         (void)next;
       },
       nullptr},
      {"logsumexp(wide.t(), {1}), wide 1024x4096", "logsumexp(tall, {0})",
       [&] { lf::logsumexp(lf::transpose(wide, 0, 1), {1}).to_vector<float>(); },
       [&] { lf::logsumexp(tall, {0}).to_vector<float>(); }},
      {"softmax(wide.t(), 1)", "softmax(tall, 0)", [&] { (void)lf::softmax(lf::transpose(wide, 0, 1), 1).sum().item<float>(); },
       [&] { (void)lf::softmax(tall, 0).sum().item<float>(); }},
      {"var(wide.t(), {1})", "var(tall, {0})", [&] { lf::var(lf::transpose(wide, 0, 1), {1}).to_vector<float>(); },
       [&] { lf::var(tall, {0}).to_vector<float>(); }},
      {"logsumexp(tall.t(), {0}) (contiguous rows)", "logsumexp(wide, {1})",
       [&] { lf::logsumexp(lf::transpose(tall, 0, 1), {0}).to_vector<float>(); },
       [&] { lf::logsumexp(wide, {1}).to_vector<float>(); }},
      {"max(sq.t()[None], {0}), sq 1024x1024 (size-1 rows)", "max(sq[None], {0})",
       [&] { (void)lf::max(lf::unsqueeze(lf::transpose(sq, 0, 1), 0), {0}).sum().item<float>(); },
       [&] { (void)lf::max(lf::unsqueeze(sq, 0), {0}).sum().item<float>(); }},
      {"sum(tall.t()) (full)", "sum(tall)", [&] { (void)lf::sum(lf::transpose(tall, 0, 1)).item<float>(); },
       [&] { (void)lf::sum(tall).item<float>(); }},
      {"max(tall.t()) (full)", "max(tall)", [&] { (void)lf::max(lf::transpose(tall, 0, 1)).item<float>(); },
       [&] { (void)lf::max(tall).item<float>(); }},
      {"var(tall.t()) (full)", "var(tall)", [&] { (void)lf::var(lf::transpose(tall, 0, 1)).item<float>(); },
       [&] { (void)lf::var(tall).item<float>(); }},
  };
  for (const Row& r : rows)
    if (only.empty() || r.name.find(only) != std::string::npos) report(r);
  return 0;
}
