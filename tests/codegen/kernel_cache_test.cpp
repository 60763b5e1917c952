// The in-memory kernel cache: single flight, hits, separate keys, failed compiles; and the
// executor's fallback to the reference executor when a group's kernel failed to compile.
#include "codegen/kernel_cache.h"
#include "codegen/executor.h"
#include "codegen/fingerprint.h"
#include "codegen/cpu_backend.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>
#include <vector>

#include "codegen/lower.h"
#include "codegen/test_util.h"
#include "runtime/config.h"

namespace {

using lf::cache::KernelCache;
using lf::CompiledKernel;

std::shared_ptr<CompiledKernel> fake_kernel(const std::string& name) {
  auto k = std::make_shared<CompiledKernel>();
  k->name = name;
  return k;
}

TEST(KernelCache, EightThreadsCompileOnce) {
  KernelCache cache;
  std::atomic<int> calls{0}, hits{0};
  std::atomic<bool> go{false};
  std::vector<std::shared_ptr<const lf::cache::Entry>> got(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      bool hit = false;
      got[static_cast<size_t>(t)] = cache.get_or_compile(
          "key-a",
          [&]() -> lf::StatusOr<std::shared_ptr<CompiledKernel>> {
            ++calls;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));  // others arrive meanwhile
            return fake_kernel("a");
          },
          &hit);
      if (hit) ++hits;
    });
  }
  go = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(hits.load(), 7);
  for (const auto& e : got) {
    ASSERT_NE(e, nullptr);
    ASSERT_TRUE(e->status.ok());
    EXPECT_EQ(e->kernel, got[0]->kernel) << "every thread gets the one compiled kernel";
  }
  EXPECT_EQ(cache.size(), 1u);
}

TEST(KernelCache, HitsAndDistinctKeys) {
  KernelCache cache;
  int calls = 0;
  auto compile = [&](const std::string& name) {
    return [&, name]() -> lf::StatusOr<std::shared_ptr<CompiledKernel>> {
      ++calls;
      return fake_kernel(name);
    };
  };
  bool hit = true;
  auto a = cache.get_or_compile("a", compile("a"), &hit);
  EXPECT_FALSE(hit);
  auto b = cache.get_or_compile("b", compile("b"), &hit);
  EXPECT_FALSE(hit);
  auto a2 = cache.get_or_compile("a", compile("a-again"), &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(a2->kernel->name, "a");
  EXPECT_EQ(b->kernel->name, "b");
  // Keys that differ anywhere are different kernels (the full string is compared, not a hash).
  std::string long_key(4096, 'x');
  auto l1 = cache.get_or_compile(long_key + "1", compile("l1"), &hit);
  auto l2 = cache.get_or_compile(long_key + "2", compile("l2"), &hit);
  EXPECT_FALSE(hit);
  EXPECT_NE(l1->kernel, l2->kernel);
  EXPECT_EQ(cache.size(), 4u);
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  cache.get_or_compile("a", compile("a3"), &hit);
  EXPECT_FALSE(hit);
}

// Failing compiles throw here: the test binary does not link abseil (the library links it
// privately), so it cannot construct a non-ok lf::Status itself; the cache turns an exception into
// an InternalError entry, the same not-ok entry a failing StatusOr gives.
TEST(KernelCache, FailedCompileIsCachedAsNotOk) {
  KernelCache cache;
  int calls = 0;
  bool hit = true;
  auto failing = [&]() -> lf::StatusOr<std::shared_ptr<CompiledKernel>> {
    ++calls;
    throw std::runtime_error("llvm said no");
  };
  auto e = cache.get_or_compile("bad", failing, &hit);
  EXPECT_FALSE(hit);
  EXPECT_FALSE(e->status.ok());
  EXPECT_EQ(e->kernel, nullptr);
  EXPECT_NE(std::string(e->status.message()).find("llvm said no"), std::string::npos);
  auto again = cache.get_or_compile("bad", failing, &hit);
  EXPECT_TRUE(hit);
  EXPECT_FALSE(again->status.ok());
  EXPECT_EQ(calls, 1) << "a failure is remembered, not retried at every flush";
}

TEST(KernelCache, ThreadsWaitingOnAFailedCompileSeeTheFailure) {
  KernelCache cache;
  std::atomic<int> calls{0};
  std::vector<std::thread> threads;
  std::atomic<int> not_ok{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      bool hit = false;
      auto e = cache.get_or_compile(
          "bad",
          [&]() -> lf::StatusOr<std::shared_ptr<CompiledKernel>> {
            ++calls;
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
            throw std::runtime_error("no");
          },
          &hit);
      if (!e->status.ok() && !e->kernel) ++not_ok;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(not_ok.load(), 8);
}

// End to end: the executor keys the global cache with "cpu|<target>|<kernel IR key>". Planting a
// failed entry under the key of a group makes the flush take the fallback path without touching
// the library; the values must still be right and no kernel is launched for that group.
TEST(KernelCache, ExecutorFallsBackWhenCompileFailed) {
  // The planted key is the CPU backend's: run this test's tensors on the CPU.
  struct CpuDefault {
    lf::Device saved = lf::default_device();
    CpuDefault() { lf::set_default_device(lf::Device::cpu()); }
    ~CpuDefault() { lf::set_default_device(saved); }
  } cpu_default;
  auto make = [] {
    lf::Tensor x = lf::from_vector(lf::test::iota_floats(6 * 70, -3.0f, 0.017f), {6, 70});
    // An unusual chain, so that no other test compiled this kernel first.
    return lf::atan(lf::cosh(x * 0.25) - lf::expm1(x * 0.125)) * 7.0 + lf::erf(x);
  };
  lf::Tensor y = make();
  std::vector<lf::ir::Node*> roots{y.node().get()};
  auto order = lf::ir::topo_order(roots);
  auto p = lf::fuse::partition(
      order, [](const lf::ir::Node& n) { return n.user_refs.load() > 0; }, true);
  ASSERT_EQ(p.groups.size(), 1u);
  auto low = lf::lower::lower_group(p.groups[0], p, 0, lf::Device::cpu());
  std::string key = lf::exec::cpu_cache_key(low.kernel);
  bool hit = false;
  auto planted = lf::cache::global_cache().get_or_compile(
      key, []() -> lf::StatusOr<std::shared_ptr<CompiledKernel>> { throw std::runtime_error("planted failure"); },
      &hit);
  if (hit) GTEST_SKIP() << "this kernel was already compiled by an earlier test";
  ASSERT_FALSE(planted->status.ok());

  lf::test::Values ref = lf::test::reference_values(y);
  lf::test::StatsDelta d;
  testing::internal::CaptureStderr();
  lf::test::Values got = lf::test::fused_values(y);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(d.launched(), 0u);
  EXPECT_EQ(d.hits(), 1u);
  EXPECT_TRUE(y.is_materialized());
  EXPECT_NE(err.find("failed to compile"), std::string::npos) << err;
  EXPECT_NE(err.find("planted failure"), std::string::npos) << err;
  EXPECT_NE(err.find("lazyfuse-failed-"), std::string::npos) << "the warning says where the source is: " << err;
  EXPECT_EQ(lf::test::compare(ref, got, lf::test::default_tolerance(lf::DType::Float32)), "");

  // Reported once per key: a second flush of the same group falls back silently.
  lf::Tensor y2 = make();
  lf::test::Values ref2 = lf::test::reference_values(y2);
  testing::internal::CaptureStderr();
  lf::test::Values got2 = lf::test::fused_values(y2);
  std::string err2 = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err2.find("failed to compile"), std::string::npos) << err2;
  EXPECT_EQ(lf::test::compare(ref2, got2, lf::test::default_tolerance(lf::DType::Float32)), "");
}

}  // namespace

namespace {

// LAZYFUSE_DUMP_DIR writes the source of every newly compiled kernel.
TEST(KernelDump, NewKernelsAreWrittenToTheDumpDir) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("lazyfuse-dump-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  auto& cfg = lf::rt::mutable_config();
  std::string saved = cfg.dump_dir;
  cfg.dump_dir = dir.string();
  lf::Tensor x = lf::from_vector(lf::test::iota_floats(40, -2.0f, 0.1f), {40});
  // An unusual chain, so that the kernel is new to this process.
  lf::Tensor y = lf::atan2(lf::sinh(x * 0.375), lf::cosh(x) + 2.5) - lf::log1p(lf::abs(x) * 3.0);
  lf::test::StatsDelta d;
  y.to_vector<float>();
  cfg.dump_dir = saved;
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++files;
    std::ifstream in(e.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("atan2"), std::string::npos) << e.path();
  }
  EXPECT_EQ(files, d.compiled());
  EXPECT_GE(files, 1u);
  std::filesystem::remove_all(dir);
}

}  // namespace
