// Where the host time of a launch-bound call goes on a GPU: the chain of the GPU benchmark's
// launch-bound row (8 ops over 4096 floats, one fused kernel a call), taken apart. Prints
// microseconds per call, median of 5 trials of 2000 calls:
//   record only      the 8 ops recorded and dropped (no flush)
//   whole call       recorded, flushed (a replayed flush plan) and launched
//   launch wrapper   cuda::launch of the chain's compiled kernel alone (meta packing + cuLaunchKernel)
//   cuLaunchKernel   the driver call alone, arguments prepared once
// Back to back, a call's time is the larger of its host time and the GPU's time per kernel. The
// "behind a spin" lines tell the two apart: a spin kernel holds the stream for a few milliseconds
// while the host queues a batch of calls (their host time alone), and events around the batch then
// time the GPU running the queued kernels back to back (its time per kernel alone).
// Built by hand against a build tree (it uses internal headers):
//   g++ -std=c++20 -O2 -I. -Iinclude bench/experiments/launch_path.cpp -Lbuild-gpu -llazyfuse \
//       -Wl,-rpath,'$ORIGIN/lib' -o carry/gpu/launch_path
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/cuda/backend.h"
#include "codegen/fuse/fuser.h"
#include "codegen/fuse/lower.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"

namespace {

namespace cu = lf::rt::cu;

// Hand-written PTX (loaded through the driver's JIT): a kernel that spins for `cycles` clock
// ticks, and an empty kernel.
const char* kPtx = R"(.version 7.8
.target sm_80
.address_size 64
.visible .entry spin(.param .u64 cycles) {
  .reg .u64 %rd<5>;
  .reg .pred %p;
  ld.param.u64 %rd1, [cycles];
  mov.u64 %rd2, %clock64;
LOOP:
  mov.u64 %rd3, %clock64;
  sub.u64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p, %rd4, %rd1;
  @%p bra LOOP;
  ret;
}
.visible .entry empty() {
  ret;
}
)";

struct Split {
  double host_us = 0, gpu_us = 0;
};

// Host and GPU time per call of `call` (which queues one kernel), told apart behind a spin kernel.
// Median of 5 trials of `batch` calls.
Split behind_spin(const std::function<void()>& call, cu::CUfunction spin, int batch = 256) {
  const cu::Api& api = cu::api();
  auto& ctx = cu::device_context(0);
  cu::CUevent e0, e1;
  LF_CU_CHECK(api.cuEventCreate(&e0, 0));
  LF_CU_CHECK(api.cuEventCreate(&e1, 0));
  std::vector<double> host, gpu;
  for (int t = 0; t < 6; ++t) {
    unsigned long long cycles = 20'000'000;  // about 10 ms at 2 GHz: longer than the batch's host time
    void* sp[] = {&cycles};
    LF_CU_CHECK(api.cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, ctx.stream, sp, nullptr));
    LF_CU_CHECK(api.cuEventRecord(e0, ctx.stream));
    auto s = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) call();
    double h = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s).count() / batch;
    LF_CU_CHECK(api.cuEventRecord(e1, ctx.stream));
    LF_CU_CHECK(api.cuEventSynchronize(e1));
    float ms = 0;
    LF_CU_CHECK(api.cuEventElapsedTime(&ms, e0, e1));
    if (t == 0) continue;  // warm-up
    host.push_back(h);
    gpu.push_back(ms * 1000.0 / batch);
  }
  std::sort(host.begin(), host.end());
  std::sort(gpu.begin(), gpu.end());
  return {host[2], gpu[2]};
}

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
  // As bench/gpu_bench.cpp times its launch-bound row: a few warm-up calls, then the trials.
  // Each trial: us a call in all, and us a call to queue them (the host's share).
  auto as_the_benchmark = [&] {
    auto call = [&] { lf::Tensor y = chain(); lf::sync(); };
    for (int i = 0; i < 3; ++i) call();
    lf::device_synchronize();
    std::vector<std::pair<double, double>> trials;
    for (int t = 0; t < 5; ++t) {
      auto s = std::chrono::steady_clock::now();
      for (int i = 0; i < 2000; ++i) call();
      auto queued = std::chrono::steady_clock::now();
      lf::device_synchronize();
      auto e = std::chrono::steady_clock::now();
      trials.emplace_back(std::chrono::duration<double, std::micro>(e - s).count() / 2000,
                          std::chrono::duration<double, std::micro>(queued - s).count() / 2000);
    }
    return trials;
  };
  auto first = as_the_benchmark();
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

  // Behind a spin: host time and GPU time apart.
  cu::CUmodule mod;
  LF_CU_CHECK(lf::rt::cu::api().cuModuleLoadData(&mod, kPtx));
  cu::CUfunction spin, empty;
  LF_CU_CHECK(lf::rt::cu::api().cuModuleGetFunction(&spin, mod, "spin"));
  LF_CU_CHECK(lf::rt::cu::api().cuModuleGetFunction(&empty, mod, "empty"));
  auto line = [](const char* what, Split s) { std::printf("| %s | %.2f | %.2f |\n", what, s.host_us, s.gpu_us); };
  std::printf("\n| behind a spin (batch of 256) | host us a call | GPU us a kernel |\n|---|---|---|\n");
  line("whole call", behind_spin([&] { lf::Tensor y = chain(); lf::sync(); }, spin));
  line("cuLaunchKernel, the chain's kernel", behind_spin([&] {
         lf::rt::cu::api().cuLaunchKernel(static_cast<cu::CUfunction>((*compiled)->function), grid, 1, 1, 256, 1, 1, 0,
                                          ctx.stream, params, nullptr);
       }, spin));
  // The same, its parameters as one packed buffer (CU_LAUNCH_PARAM_BUFFER_POINTER) instead of an
  // array of pointers the driver copies from one by one.
  size_t nm = std::max<size_t>(meta.size(), 1), np = std::max<size_t>(ptrs.size(), 1);
  std::vector<char> buf((nm + np + 3) * 8);
  std::memcpy(buf.data(), meta.data(), meta.size() * 8);
  std::memcpy(buf.data() + nm * 8, ptrs.data(), ptrs.size() * 8);
  size_t buf_size = buf.size();
  void* extra[] = {reinterpret_cast<void*>(1), buf.data(), reinterpret_cast<void*>(2), &buf_size, nullptr};
  line("cuLaunchKernel, packed parameters", behind_spin([&] {
         lf::rt::cu::api().cuLaunchKernel(static_cast<cu::CUfunction>((*compiled)->function), grid, 1, 1, 256, 1, 1, 0,
                                          ctx.stream, nullptr, extra);
       }, spin));
  line("cuLaunchKernel, an empty kernel", behind_spin([&] {
         lf::rt::cu::api().cuLaunchKernel(empty, grid, 1, 1, 256, 1, 1, 0, ctx.stream, nullptr, nullptr);
       }, spin));
  // The same kernel as a one-node CUDA graph, launched with cuGraphLaunch.
  const cu::Api& api = cu::api();
  if (api.graphs) {
    cu::CUgraph g = nullptr;
    cu::CUgraphNode node = nullptr;
    cu::CUgraphExec exec = nullptr;
    cu::KernelNodeParams np{static_cast<cu::CUfunction>((*compiled)->function), grid, 1, 1, 256, 1, 1, 0, params, nullptr};
    LF_CU_CHECK(api.cuGraphCreate(&g, 0));
    LF_CU_CHECK(api.cuGraphAddKernelNode(&node, g, nullptr, 0, &np));
    LF_CU_CHECK(api.cuGraphInstantiateWithFlags(&exec, g, 0));
    line("cuGraphLaunch, a one-kernel graph", behind_spin([&] { api.cuGraphLaunch(exec, ctx.stream); }, spin));
    // Its output pointer changed before each launch (two buffers in turn), set on the executable graph.
    std::vector<void*> ptrs2 = ptrs;
    lf::Tensor other = lf::randn({4096});
    lf::sync();
    int turn = 0;
    line("cuGraphExecKernelNodeSetParams + cuGraphLaunch", behind_spin([&] {
           ptrs2[0] = (turn ^= 1) ? other.node()->storage->data() : ptrs[0];
           void* p2[] = {meta.data(), ptrs2.data(), scratch};
           cu::KernelNodeParams np2 = np;
           np2.params = p2;
           api.cuGraphExecKernelNodeSetParams(exec, node, &np2);
           api.cuGraphLaunch(exec, ctx.stream);
         }, spin));
    std::vector<double> inst_us;
    for (int i = 0; i < 20; ++i) {
      cu::CUgraphExec e2 = nullptr;
      auto s0 = std::chrono::steady_clock::now();
      LF_CU_CHECK(api.cuGraphInstantiateWithFlags(&e2, g, 0));
      inst_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s0).count());
    }
    std::sort(inst_us.begin(), inst_us.end());
    std::printf("| cuGraphInstantiate (median of 20) | %.2f | |\n", inst_us[10]);
  } else {
    std::printf("this driver has no CUDA graphs\n");
  }
  line("record only", behind_spin([&] { lf::Tensor y = chain(); }, spin));
  line("whole call (batch of 64)", behind_spin([&] { lf::Tensor y = chain(); lf::sync(); }, spin, 64));
  auto last = as_the_benchmark();
  // The same with every graph launch made on the flushing thread (LAZYFUSE_LAUNCH_THREAD=0).
  lf::rt::mutable_config().launch_thread = false;
  auto here = as_the_benchmark();
  lf::rt::mutable_config().launch_thread = true;
  auto again = as_the_benchmark();
  std::printf("\nas the benchmark times it (5 trials of 2000 calls: us a call in all / to queue them):\n");
  auto trials = [](const char* what, const std::vector<std::pair<double, double>>& t) {
    std::printf("  %-32s", what);
    for (auto [all, queue] : t) std::printf(" %.2f/%.2f", all, queue);
    std::printf("\n");
  };
  trials("first:", first);
  trials("last:", last);
  trials("launch thread off:", here);
  trials("launch thread on again:", again);
  std::printf("graph launches queued on the launch thread: %llu\n",
              static_cast<unsigned long long>(lf::cache_stats().queued_launches));
  return 0;
}
