// A temporary persistent-cache directory in the config for a test's lifetime, the CPU as default
// device, and an empty in-memory cache at both ends (the disk cache tests' common fixture).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/cache/disk_cache.h"
#include "codegen/cache/kernel_cache.h"
#include "runtime/config.h"

namespace lf::test {

class CacheDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/lf-cache-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/cache";
    saved_ = lf::rt::config();
    lf::rt::mutable_config().cache_dir = dir_;
    saved_device_ = lf::default_device();
    lf::set_default_device(lf::Device::cpu());
    lf::cache::global_cache().clear();
  }
  void TearDown() override {
    lf::cache::disk::global_disk_cache().fail_writes_for_testing(0);
    lf::cache::global_cache().clear();
    lf::rt::mutable_config() = saved_;
    lf::set_default_device(saved_device_);
    std::error_code ec;
    std::filesystem::permissions(root_, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(root_, ec);
  }

  // The cache's files ending in `ext` (".lfk": the entries), sorted.
  std::vector<std::filesystem::path> files(const std::string& ext) const {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    for (auto& e : std::filesystem::directory_iterator(dir_, ec))
      if (e.path().extension() == ext) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string root_, dir_;
  lf::rt::Config saved_;
  lf::Device saved_device_ = lf::Device::cpu();
};

}  // namespace lf::test
