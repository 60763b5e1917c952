// A/B of streaming stores on the CPU (cpu::EmitOptions::stream_stores): each workload's kernel compiled
// twice, with plain and with streaming stores, launched alternately on the same data, median time
// of each. Built by hand against the build tree (it uses internal headers):
//   g++ -std=c++20 -O2 -I. -Iinclude bench/experiments/streaming_ab.cpp -Lbuild -llazyfuse \
//       -Wl,-rpath,$PWD/build -o /tmp/streaming_ab && /tmp/streaming_ab
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/cpu/backend.h"
#include "codegen/fuse/fuser.h"
#include "codegen/fuse/lower.h"

namespace {

lf::lower::Lowered lowered(const lf::Tensor& t) {
  std::vector<lf::ir::Node*> roots{t.node().get()};
  auto order = lf::ir::topo_order(roots);
  auto p = lf::fuse::partition(order, [&](const lf::ir::Node& n) { return &n == roots[0]; }, true);
  return lf::lower::lower_group(p.groups[0], p, 0, lf::Device::cpu());
}

double median_ms(const std::function<void()>& f, std::vector<double>& times) {
  auto s = std::chrono::steady_clock::now();
  f();
  times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
  std::vector<double> t = times;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main() {
  lf::set_default_device(lf::Device::cpu());
  lf::manual_seed(1);
  const int64_t n = int64_t{1} << 24;
  lf::Tensor x = lf::randn({n}), m = lf::randn({4096, 4096}), r = lf::randn({4096, 4096}), b = lf::randn({4096});
  lf::sync();
  std::vector<std::pair<std::string, lf::Tensor>> work = {
      {"x*2, 2^24", x * 2},
      {"chain, 2^24", lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3},
      {"gelu(x + b), 4096^2", lf::gelu(m + b)},
      {"layer_norm(x + r), 4096^2", lf::layer_norm(m + r, 1)},
      {"(x - mean) / (std + eps), 4096^2", (m - lf::mean(m, {1}, true)) / (lf::std(m, {1}, true) + 1e-5f)},
  };
  for (auto& [name, t] : work) {
    lf::lower::Lowered low = lowered(t);
    std::vector<std::shared_ptr<lf::cpu::CompiledKernel>> k;
    for (bool stream : {false, true}) {
      auto c = lf::cpu::compile(low.kernel, std::string("ab") + (stream ? "s" : "p") + std::to_string(k.size() + 100 * (&t - &work[0].second)),
                                 lf::cpu::EmitOptions{.stream_stores = stream});
      if (!c.ok()) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), std::string(c.status().message()).c_str());
        return 1;
      }
      k.push_back(*c);
    }
    std::vector<double> times[2];
    double med[2] = {0, 0};
    for (int rep = 0; rep < 21; ++rep)
      for (int v = 0; v < 2; ++v) {
        med[v] = median_ms([&] { lf::cpu::launch(*k[static_cast<size_t>(v)], low.kernel, low.args, lf::cpu::EmitOptions{.stream_stores = v == 1}); }, times[v]);
      }
    std::printf("%-36s plain %7.3f ms   streaming %7.3f ms   %.2fx\n", name.c_str(), med[0], med[1], med[0] / med[1]);
  }
}
