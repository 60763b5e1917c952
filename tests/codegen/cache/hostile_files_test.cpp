// The persistent cache under hostile files (issue 25): special files named like entries or hit
// counts (a FIFO, symlinks to /dev/zero and /dev/urandom, a dangling symlink, an empty file) are
// never followed, blocked on or read without bound; they are reported, recompiled and replaced. A
// full disk (a real tmpfs when the test may mount one, and the injected ENOSPC) leaves no empty
// bookkeeping file. A `clear` while a program runs does not stop that program from storing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "codegen/cache/disk_cache.h"
#include "codegen/cache/disk_usage.h"
#include "codegen/cache/kernel_cache.h"
#include "codegen/cache/cache_dir_fixture.h"
#include "codegen/test_util.h"
#include "runtime/config.h"

namespace {
namespace fs = std::filesystem;
using lf::cache::disk::decode;
using lf::cache::disk::read_file;

// A hang must fail the test, not the whole CI job: SIGALRM's default action ends the process.
struct Deadline {
  explicit Deadline(unsigned seconds) { alarm(seconds); }
  ~Deadline() { alarm(0); }
};

class HostileCacheFiles : public lf::test::CacheDirTest {
 protected:
  void TearDown() override {
    lf::cache::disk::global_disk_cache().before_rename_for_testing({});
    if (mounted_) umount2(mount_.c_str(), MNT_DETACH);
    CacheDirTest::TearDown();
  }

  // No file of the cache is empty or a leftover temporary, and every entry and hit count decodes.
  void expect_whole_files() const {
    std::error_code ec;
    for (auto& e : fs::directory_iterator(dir_, ec)) {
      std::string name = e.path().filename().string();
      EXPECT_NE(name.rfind(".tmp-", 0), 0u) << "left over: " << name;
      EXPECT_GT(fs::file_size(e.path()), 0u) << "an empty file: " << name;
      std::string why;
      auto bytes = read_file(e.path().string(), &why);
      ASSERT_TRUE(bytes) << name << ": " << why;
      if (e.path().extension() == ".lfk") EXPECT_TRUE(decode(*bytes, &why)) << name << ": " << why;
      if (e.path().extension() == ".hits") EXPECT_TRUE(lf::cache::disk::decode_hits(*bytes, &why)) << name << ": " << why;
      if (name == "programs.txt") EXPECT_TRUE(lf::cache::disk::decode_programs(*bytes, &why)) << why;
    }
  }

  std::string mount_;
  bool mounted_ = false;
};

lf::Tensor input(float start) { return lf::from_vector(lf::test::iota_floats(6 * 70, start, 0.011f), {6, 70}); }
lf::Tensor pointwise() { return lf::relu(input(-2) * input(1) + 0.5) - lf::sinh(input(0.3)); }
lf::Tensor reduction() { return lf::sum(lf::exp(input(-1)) * input(2), {-1}); }
lf::Tensor third() { return lf::cos(input(0.1)) * input(1) - 2.0; }

struct Counts {
  uint64_t compiled, disk_hits;
};
Counts run_checked(const std::function<lf::Tensor()>& make) {
  lf::CacheStats before = lf::cache_stats();
  lf::Tensor t = make();
  lf::test::Values ref = lf::test::reference_values(t);
  lf::test::Values got = lf::test::fused_values(t);
  EXPECT_EQ(lf::test::compare(ref, got, lf::test::default_tolerance(lf::DType::Float32, 70)), "");
  lf::CacheStats after = lf::cache_stats();
  return {after.kernels_compiled - before.kernels_compiled, after.disk_hits - before.disk_hits};
}

TEST_F(HostileCacheFiles, SpecialFilesNamedLikeEntriesAreReplacedNeverFollowed) {
  Deadline deadline(120);
  run_checked(pointwise);
  ASSERT_EQ(files(".lfk").size(), 1u);
  const fs::path entry = files(".lfk")[0];
  const fs::path hits = fs::path(entry).replace_extension(".hits");
  fs::copy_file(entry, root_ + "/elsewhere.lfk");
  struct Case {
    const char* what;
    std::function<void()> make;
  };
  const std::vector<Case> cases = {
      {"a FIFO", [&] { ASSERT_EQ(mkfifo(entry.c_str(), 0644), 0); }},
      {"a symlink to /dev/zero", [&] { fs::create_symlink("/dev/zero", entry); }},
      {"a symlink to /dev/urandom", [&] { fs::create_symlink("/dev/urandom", entry); }},
      {"a dangling symlink", [&] { fs::create_symlink(root_ + "/nothing", entry); }},
      {"a symlink to a good entry", [&] { fs::create_symlink(root_ + "/elsewhere.lfk", entry); }},
      {"an empty file", [&] { std::ofstream(entry.string(), std::ios::trunc); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    fs::remove(entry);
    c.make();
    lf::cache::global_cache().clear();
    testing::internal::CaptureStderr();
    Counts n = run_checked(pointwise);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(n.compiled, 1u);
    EXPECT_EQ(n.disk_hits, 0u);
    EXPECT_NE(err.find("is unusable"), std::string::npos) << err;
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(entry))) << "replaced by a regular file";
    // The next run loads it, and its hit count goes through a FIFO or symlink the same way.
    fs::remove(hits);
    if (c.what[2] == 'F') ASSERT_EQ(mkfifo(hits.c_str(), 0644), 0);
    else fs::create_symlink("/dev/zero", hits);
    lf::cache::global_cache().clear();
    EXPECT_EQ(run_checked(pointwise).disk_hits, 1u);
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(hits)));
    auto bytes = read_file(hits.string());
    ASSERT_TRUE(bytes);
    EXPECT_EQ(lf::cache::disk::decode_hits(*bytes), std::optional<uint64_t>(1));
  }
  EXPECT_TRUE(fs::is_character_file("/dev/zero"));
  expect_whole_files();
}

TEST_F(HostileCacheFiles, ReadsAreBounded) {
  fs::create_directories(dir_);
  std::string path = dir_ + "/big";
  { std::ofstream(path) << std::string(4096, 'x'); }
  std::string why;
  EXPECT_FALSE(read_file(path, &why, 1000));
  EXPECT_NE(why.find("larger than 1000 bytes"), std::string::npos) << why;
  EXPECT_EQ(read_file(path, &why, 4096)->size(), 4096u);
  EXPECT_FALSE(read_file("/dev/zero", &why));
  EXPECT_NE(why.find("not a regular file (a character device)"), std::string::npos) << why;
  ASSERT_EQ(mkfifo((dir_ + "/fifo").c_str(), 0644), 0);
  EXPECT_FALSE(read_file(dir_ + "/fifo", &why));
  EXPECT_NE(why.find("a FIFO"), std::string::npos) << why;
  fs::create_symlink(path, dir_ + "/link");
  EXPECT_FALSE(read_file(dir_ + "/link", &why));
  EXPECT_NE(why.find("symbolic link"), std::string::npos) << why;
  EXPECT_FALSE(lf::cache::disk::read_book(dir_ + "/fifo"));
  EXPECT_FALSE(lf::cache::disk::read_book(dir_ + "/big"));  // larger than two slots
}

// The injected full disk: a hit count or programs record that does not exist yet is not left
// behind as an empty file when its first write fails (verify would call it bad until a later run
// had room).
TEST_F(HostileCacheFiles, FailedFirstBookkeepingWriteLeavesNoFile) {
  run_checked(pointwise);
  fs::remove(dir_ + "/programs.txt");
  lf::cache::global_cache().clear();
  lf::cache::disk::global_disk_cache().fail_writes_for_testing(ENOSPC);
  EXPECT_EQ(run_checked(pointwise).disk_hits, 1u);
  EXPECT_TRUE(files(".hits").empty());
  EXPECT_FALSE(fs::exists(dir_ + "/programs.txt"));
  expect_whole_files();
  lf::cache::disk::global_disk_cache().fail_writes_for_testing(0);
  lf::cache::global_cache().clear();
  EXPECT_EQ(run_checked(pointwise).disk_hits, 1u);
  ASSERT_EQ(files(".hits").size(), 1u);
  expect_whole_files();
}

// A real full disk: a tiny tmpfs, filled up.
TEST_F(HostileCacheFiles, FullTmpfsLeavesNoPartialFile) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
  mount_ = root_ + "/mnt";
  fs::create_directories(mount_);
  if (mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=2m") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  mounted_ = true;
  dir_ = mount_ + "/cache";
  lf::rt::mutable_config().cache_dir = dir_;
  run_checked(pointwise);
  ASSERT_EQ(files(".lfk").size(), 1u);
  fs::remove(dir_ + "/programs.txt");
  // Fill the disk to the last page.
  {
    int fd = open((mount_ + "/ballast").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    std::string page(4096, 'b');
    while (write(fd, page.data(), page.size()) > 0) {
    }
    char byte = 'b';
    while (write(fd, &byte, 1) > 0) {
    }
    close(fd);
  }
  lf::cache::global_cache().clear();
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_checked(pointwise).disk_hits, 1u);  // its hit count and the record cannot be written
  Counts a = run_checked(reduction);                // its entry cannot be written: one warning
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(a.compiled, 1u);
  EXPECT_NE(err.find(std::strerror(ENOSPC)), std::string::npos) << err;
  EXPECT_EQ(files(".lfk").size(), 1u);
  expect_whole_files();
  // Storing is off for the rest of this process (README: memory-only after a failed write); what
  // it left is whole, so verify passes without waiting for a later run that has room.
}

// `lazyfuse-cache clear` removes entries, counts and temporary files while programs run. A store
// whose temporary file it removed before the rename, and stores after the directory itself was
// removed, go on: no warning, and the entries are there.
TEST_F(HostileCacheFiles, ClearDuringUseKeepsStoring) {
  run_checked(pointwise);
  auto clear_like_the_tool = [this] {
    std::error_code ec;
    for (auto& e : fs::directory_iterator(dir_, ec)) fs::remove(e.path(), ec);
  };
  bool cleared = false;
  lf::cache::disk::global_disk_cache().before_rename_for_testing([&] {
    if (!cleared) clear_like_the_tool();
    cleared = true;
  });
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_checked(reduction).compiled, 1u);
  lf::cache::disk::global_disk_cache().before_rename_for_testing({});
  EXPECT_EQ(files(".lfk").size(), 1u) << "the entry whose temporary file was removed is stored";
  fs::remove_all(dir_);  // rm -r of the whole cache
  EXPECT_EQ(run_checked(third).compiled, 1u);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(cleared);
  EXPECT_EQ(err.find("cannot write the kernel cache"), std::string::npos) << err;
  ASSERT_EQ(files(".lfk").size(), 1u) << "the kernel stored after the directory was removed";
  lf::cache::global_cache().clear();
  EXPECT_EQ(run_checked(third).disk_hits, 1u);
  clear_like_the_tool();
  lf::cache::global_cache().clear();
  EXPECT_EQ(run_checked(reduction).compiled, 1u);
  EXPECT_EQ(files(".lfk").size(), 1u) << "stored after a clear";
  expect_whole_files();
}

}  // namespace
