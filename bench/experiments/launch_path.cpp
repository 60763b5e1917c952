// Where the host time of a launch-bound call goes on a GPU: the chain of the GPU benchmark's
// launch-bound row (8 ops over 4096 floats, one fused kernel a call), taken apart. Prints
// microseconds per call, median of 5 trials of 2000 calls:
//   record only      the 8 ops recorded and dropped (no flush)
//   whole call       recorded, flushed (a replayed flush plan) and launched
//   launch wrapper   cuda::launch of the chain's compiled kernel alone (meta packing + cuLaunchKernel)
//   cuLaunchKernel   the driver call alone, arguments prepared once
// Built by hand against a build tree (it uses internal headers):
//   g++ -std=c++20 -O2 -I. -Iinclude bench/experiments/launch_path.cpp -Lbuild-gpu -llazyfuse \
//       -Wl,-rpath,'$ORIGIN/lib' -ldl -o carry/gpu/launch_path
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/cuda_backend.h"
#include "codegen/fuser.h"
#include "codegen/lower.h"
#include "runtime/cuda_driver.h"

namespace {

double us_per_call(const std::function<void()>& call, int reps = 2000) {
  for (int i = 0; i < 200; ++i) call();
  lf::device_synchronize();
  std::vector<double> trials;
  for (int t = 0; t < 5; ++t) {
    auto s = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) call();
    lf::device_synchronize();
    trials.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s).count() / reps);
  }
  std::sort(trials.begin(), trials.end());
  return trials[2];
}

}  // namespace

int main() {
  if (!lf::cuda_available()) {
    std::printf("no CUDA device\n");
    return 0;
  }
  lf::set_default_device(lf::Device::cuda(0));
  lf::Tensor x = lf::randn({4096});
  lf::sync();
  auto chain = [&] { return lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3; };
  { lf::Tensor y = chain(); lf::sync(); }
  lf::finish_compiles();
  double record = us_per_call([&] { lf::Tensor y = chain(); });
  double whole = us_per_call([&] { lf::Tensor y = chain(); lf::sync(); });

  // The same kernel, launched directly.
  lf::Tensor y = chain();
  std::vector<lf::ir::Node*> roots{y.node().get()};
  auto order = lf::ir::topo_order(roots);
  auto p = lf::fuse::partition(order, [&](const lf::ir::Node& n) { return &n == roots[0]; }, true);
  auto low = lf::lower::lower_group(p.groups.at(0), p, 0, lf::Device::cuda(0));
  lf::cuda::EmitOptions opt = lf::cuda::options_for(low.kernel, low.args, 0);
  auto compiled = lf::cuda::compile(low.kernel, "lf_launch_path", opt, 0);
  if (!compiled.ok()) {
    std::printf("compile failed: %s\n", std::string(compiled.status().message()).c_str());
    return 1;
  }
  double wrapper = us_per_call([&] { lf::cuda::launch(**compiled, low.kernel, low.args, opt, 0); });
  std::vector<int64_t> meta = lf::kir::pack_meta(low.kernel, low.args);
  std::vector<void*> ptrs = low.args.pointers;
  void* scratch[3] = {nullptr, nullptr, nullptr};
  void* params[] = {meta.data(), ptrs.data(), scratch};
  auto& ctx = lf::rt::cu::device_context(0);
  unsigned grid = static_cast<unsigned>((4096 / (opt.vec4 ? 4 : 1) + 255) / 256);
  double driver = us_per_call([&] {
    lf::rt::cu::api().cuLaunchKernel(static_cast<lf::rt::cu::CUfunction>((*compiled)->function), grid, 1, 1, 256, 1, 1,
                                     0, ctx.stream, params, nullptr);
  });
  std::printf("| part | us per call |\n|---|---|\n");
  std::printf("| record only (8 ops) | %.2f |\n| whole call | %.2f |\n| launch wrapper | %.2f |\n| cuLaunchKernel | %.2f |\n",
              record, whole, wrapper, driver);
  return 0;
}
