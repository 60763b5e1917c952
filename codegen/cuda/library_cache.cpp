#include "codegen/cuda/library_cache.h"

#include <chrono>
#include <ctime>

#include "codegen/cache/disk_cache.h"
#include "codegen/cuda/nvrtc.h"
#include "runtime/cuda_driver.h"

namespace lf::cuda {

lf::StatusOr<std::vector<char>> library_cubin(const std::string& source, const std::string& entry,
                                              const std::string& arch, std::string* log, bool* from_disk) {
  if (from_disk) *from_disk = false;
  cache::disk::DiskCache& disk = cache::disk::global_disk_cache();
  if (!disk.enabled()) return nvrtc_compile(source, entry, arch, /*quick=*/false, log);
  // The whole source is in the key: an entry is used for exactly the code it was compiled from.
  const std::string target =
      arch + "/nvrtc" + nvrtc_version() + "/driver" + std::to_string(rt::cuda_status().driver_version);
  const std::string key = "cuda|library|" + target + "|" + entry + "|" + source;
  if (auto r = disk.load(key); r && r->backend == "cuda" && r->target == target && !r->binary.empty()) {
    *log = r->log;
    disk.record_use(key, /*loaded=*/true);
    if (from_disk) *from_disk = true;
    return std::vector<char>(r->binary.begin(), r->binary.end());
  }
  const auto start = std::chrono::steady_clock::now();
  auto cubin = nvrtc_compile(source, entry, arch, /*quick=*/false, log);
  if (!cubin.ok()) return cubin;
  cache::disk::Record r;
  r.key = key;
  r.backend = "cuda";
  r.target = target;
  r.name = "lf_" + cache::disk::key_hash(key);  // unique in the directory, as every entry's
  r.summary = "library " + entry;
  r.source = source;
  r.log = *log;
  r.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  r.created = static_cast<int64_t>(std::time(nullptr));
  r.binary.assign(cubin->data(), cubin->size());
  disk.store(r);
  disk.record_use(key, /*loaded=*/false);
  return cubin;
}

}  // namespace lf::cuda
