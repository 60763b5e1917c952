// Linked into every test binary: the suites never read or write the user's persistent kernel
// cache, however they are started (ctest or by hand); the disk cache tests set their own directory.
#include "runtime/config.h"

namespace {
struct NoDiskCache {
  NoDiskCache() { lf::rt::mutable_config().cache_dir.clear(); }
} no_disk_cache;
}  // namespace
