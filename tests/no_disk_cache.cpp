// Linked into every test binary: the suites never read or write the user's persistent kernel
// cache, however they are started (ctest or by hand); the disk cache tests set their own directory.
// Under AddressSanitizer it also runs LeakSanitizer's check when the last test is done, while the
// library's threads (the thread pool, the kernel cache's upgrade worker) sit idle: at exit the
// check's tracer stops every thread of the process, and a thread caught in the middle of exiting
// (joined by a static destructor, or torn down by libgomp) made it crash ("Tracer caught signal
// 11") after every test had passed, under load, in CI and on this machine.
#include <gtest/gtest.h>

#include "runtime/config.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace {
struct NoDiskCache {
  NoDiskCache() { lf::rt::mutable_config().cache_dir.clear(); }
} no_disk_cache;

#if defined(__SANITIZE_ADDRESS__)
// The leak check once every test has run (and no end-of-process check after it).
class LeakCheckAfterTheTests : public testing::Environment {
 public:
  void TearDown() override { __lsan_do_leak_check(); }
};
const testing::Environment* const leak_check = testing::AddGlobalTestEnvironment(new LeakCheckAfterTheTests);
#endif
}  // namespace
