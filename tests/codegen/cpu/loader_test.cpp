// The CPU kernel loaders (codegen/cpu/loader.h): the choice LAZYFUSE_CPU_LOADER makes, the same
// kernels giving the same bits through the ELF loader and LLVM ORC, persistent-cache entries one
// loader stored loaded by the other, and ORC's errors on objects it must refuse.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/cache/cache_dir_fixture.h"
#include "codegen/cache/kernel_cache.h"
#include "codegen/cpu/loader.h"
#include "codegen/test_util.h"
#include "runtime/config.h"

namespace {

using lf::cpu::Loader;

std::vector<lf::Tensor> programs() {
  lf::Tensor x = lf::from_vector(lf::test::iota_floats(6 * 70, -1, 0.013f), {6, 70});
  lf::Tensor tall = lf::from_vector(lf::test::iota_floats(4096 * 8, -2, 0.0007f), {4096, 8});
  lf::Tensor y = lf::from_vector(lf::test::iota_floats(1 << 17, -3, 0.00003f), {1 << 17});
  return {lf::relu(x * 2 + 1) - lf::sinh(x), lf::softmax(x, 1), lf::sum(lf::exp(y) * y),
          lf::sum(tall, {0}), lf::argmax(y)};
}

// Each program's values, compiled afresh (and so loaded) with `loader`.
std::vector<lf::test::Values> run_all(const char* loader) {
  lf::rt::mutable_config().cpu_loader = loader;
  lf::cache::global_cache().clear();
  std::vector<lf::test::Values> out;
  for (const lf::Tensor& t : programs()) out.push_back(lf::test::fused_values(t));
  return out;
}

class CpuLoader : public lf::test::CacheDirTest {};

TEST_F(CpuLoader, ChoiceFollowsTheConfig) {
  lf::rt::mutable_config().cpu_loader = "orc";
  EXPECT_EQ(lf::cpu::choose_loader()->loader, Loader::Orc);
  lf::rt::mutable_config().cpu_loader = "auto";
  auto automatic = lf::cpu::choose_loader();
  ASSERT_TRUE(automatic.ok());
  EXPECT_EQ(automatic->loader, lf::cpu::elf_loader_knows_target() ? Loader::Elf : Loader::Orc);
  EXPECT_NE(automatic->why.find("auto"), std::string::npos);
  lf::rt::mutable_config().cpu_loader = "elf";
  EXPECT_EQ(lf::cpu::choose_loader().ok(), lf::cpu::elf_loader_knows_target());
}

TEST_F(CpuLoader, BothLoadersGiveTheSameBits) {
  if (!lf::cpu::elf_loader_knows_target()) GTEST_SKIP() << "no ELF loader on this target";
  lf::rt::mutable_config().cache_dir.clear();
  auto elf = run_all("elf");
  auto orc = run_all("orc");
  ASSERT_EQ(elf.size(), orc.size());
  for (size_t i = 0; i < elf.size(); ++i) EXPECT_EQ(lf::test::compare(elf[i], orc[i], {}), "") << "program " << i;
}

// The disk cache's entries are the loader's input: stored by one, loaded by the other, both ways.
TEST_F(CpuLoader, EntriesStoredByOneLoaderLoadWithTheOther) {
  if (!lf::cpu::elf_loader_knows_target()) GTEST_SKIP() << "no ELF loader on this target";
  for (auto [store, load] : {std::pair{"elf", "orc"}, std::pair{"orc", "elf"}}) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    auto stored = run_all(store);
    lf::CacheStats before = lf::cache_stats();
    auto loaded = run_all(load);
    lf::CacheStats after = lf::cache_stats();
    EXPECT_EQ(after.kernels_compiled, before.kernels_compiled) << store << " -> " << load;
    EXPECT_GT(after.disk_hits, before.disk_hits) << store << " -> " << load;
    for (size_t i = 0; i < stored.size(); ++i)
      EXPECT_EQ(lf::test::compare(stored[i], loaded[i], {}), "") << store << " -> " << load << ", program " << i;
  }
}

TEST_F(CpuLoader, OrcRefusesWhatItCannotLoad) {
  EXPECT_FALSE(lf::cpu::load_image("not an object file", Loader::Orc).ok());
  EXPECT_FALSE(lf::cpu::load_image("", Loader::Orc).ok());
}

}  // namespace
