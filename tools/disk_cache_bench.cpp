// Times one kernel's first flush three ways: compiled (persistent cache off), compiled and stored
// (cache on, empty), and loaded from the persistent cache (a fresh in-memory cache, as in a second
// run of a program); then the same flush with the kernel already in memory, so that the difference
// is what loading costs, and the cache's bookkeeping of one load (hit count and programs record)
// on its own. Not installed; bench/demo_first_kernel.py times the demo's first kernel.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "codegen/cache/disk_cache.h"
#include "codegen/cache/kernel_cache.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"

namespace {

using Make = std::function<lf::Tensor(const lf::Tensor&, const lf::Tensor&)>;

double flush_ms(const Make& make, const lf::Tensor& x, const lf::Tensor& y, bool fresh_memory_cache = true) {
  if (fresh_memory_cache) lf::cache::global_cache().clear();
  auto start = std::chrono::steady_clock::now();
  lf::Tensor t = make(x, y);
  lf::sync();
  lf::device_synchronize(x.device());
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  bool gpu = argc > 1 && std::string(argv[1]) == "cuda";
  lf::Device dev = gpu ? lf::Device::cuda(0) : lf::Device::cpu();
  lf::set_default_device(dev);
  lf::rt::mutable_config().cache_dir = "";  // never the user's cache
  char tmpl[] = "/tmp/lf-disk-bench-XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  std::string dir = tmpl;
  lf::Tensor x = lf::rand({256, 1024}), y = lf::rand({256, 1024});
  lf::sync();
  std::vector<Make> kernels = {
      [](auto& a, auto& b) { return lf::relu(a * b + 1.0); },
      [](auto& a, auto& b) { return lf::exp(a) - lf::tanh(b); },
      [](auto& a, auto& b) { return lf::sum(a * b, {-1}); },
      [](auto& a, auto& b) { return lf::softmax(a + b, -1); },
      [](auto& a, auto& b) { return lf::sum(lf::exp(a - b) * 0.5, {-1}); },
      [](auto& a, auto& b) { return lf::sin(a) * lf::cos(b) + a; },
  };
  std::vector<double> off, store, load, hit;
  auto& cfg = lf::rt::mutable_config();
  for (const Make& k : kernels) {
    lf::reset_stats();
    cfg.cache_dir = "";
    off.push_back(flush_ms(k, x, y));
    cfg.cache_dir = dir;
    store.push_back(flush_ms(k, x, y));
    uint64_t compiled = lf::cache_stats().kernels_compiled;
    std::vector<double> loads, hits;
    for (int i = 0; i < 5; ++i) loads.push_back(flush_ms(k, x, y));
    for (int i = 0; i < 5; ++i) hits.push_back(flush_ms(k, x, y, false));
    load.push_back(median(loads));
    hit.push_back(median(hits));
    if (lf::cache_stats().kernels_compiled != compiled) std::fprintf(stderr, "warning: a load compiled\n");
  }
  std::printf("%s, %zu kernels, first flush of each (median over kernels):\n", gpu ? "CUDA" : "CPU", kernels.size());
  std::printf("  compile, cache off:        %8.3f ms\n", median(off));
  std::printf("  compile + store on disk:   %8.3f ms\n", median(store));
  std::printf("  load from the disk cache:  %8.3f ms  (%.0fx sooner)\n", median(load), median(off) / median(load));
  std::printf("  kernel already in memory:  %8.3f ms\n", median(hit));
  std::vector<double> load_cost;
  for (size_t i = 0; i < kernels.size(); ++i) load_cost.push_back(load[i] - hit[i]);
  std::printf("  loading alone (load - in memory): %.3f ms\n", median(load_cost));
  for (size_t i = 0; i < kernels.size(); ++i)
    std::printf("    kernel %zu: %.3f / %.3f / %.3f / %.3f ms\n", i, off[i], store[i], load[i], hit[i]);
  // The bookkeeping of one load, timed on its own: a made-up key, so only its hit count and the
  // programs record are written.
  constexpr int kRecords = 200;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRecords; ++i) lf::cache::disk::global_disk_cache().record_use("cpu|bench|bench|key", true);
  double record_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  std::printf("  bookkeeping of one load (hit count + programs record): %.1f us\n", record_us / kRecords);
  std::filesystem::remove_all(dir);
  return 0;
}
