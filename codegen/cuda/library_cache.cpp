#include "codegen/cuda/library_cache.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "codegen/cache/disk_cache.h"
#include "codegen/cache/fingerprint.h"
#include "codegen/cuda/backend.h"
#include "codegen/cuda/nvrtc.h"
#include "runtime/cuda_driver.h"

namespace lf::cuda {

lf::StatusOr<std::vector<char>> library_cubin(const std::string& source, const std::string& entry,
                                              const std::string& arch, std::string* log, bool* from_disk,
                                              bool refresh) {
  if (from_disk) *from_disk = false;
  cache::disk::DiskCache& disk = cache::disk::global_disk_cache();
  if (!disk.enabled()) return nvrtc_compile(source, entry, arch, NvrtcBuild{}, log);
  // The fused kernels' key layout ("<backend>|<generator fingerprint>|<target>|..."): the
  // fingerprint covers NVRTC's options (nvrtc.cpp), and the whole source is in the key, so an
  // entry is used for exactly the code and options it was compiled from. Not the entry point: one
  // module (a scan's source) serves several.
  const std::string target = target_id(arch);
  const std::string key = "cuda|" + std::string(codegen_fingerprint()) + "|" + target + "|library|" + source;
  if (auto r = refresh ? std::nullopt : disk.load(key); r && r->backend == "cuda" && r->target == target && !r->binary.empty()) {
    *log = r->log;
    disk.record_use(key, /*loaded=*/true);
    if (from_disk) *from_disk = true;
    return std::vector<char>(r->binary.begin(), r->binary.end());
  }
  const auto start = std::chrono::steady_clock::now();
  auto cubin = nvrtc_compile(source, entry, arch, NvrtcBuild{}, log);
  if (!cubin.ok()) return cubin;
  cache::disk::Record r;
  r.key = key;
  r.backend = "cuda";
  r.target = target;
  r.name = "lf_" + cache::disk::key_hash(key);  // unique in the directory, as every entry's
  r.summary = "library " + entry;
  r.why = "a library kernel (" + entry + "): compiled on first use, then loaded by every later process";
  r.source = source;
  r.log = *log;
  r.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  r.created = static_cast<int64_t>(std::time(nullptr));
  r.binary.assign(cubin->data(), cubin->size());
  disk.store(r);
  if (!refresh) disk.record_use(key, /*loaded=*/false);  // a refresh was counted as the load it replaces
  return cubin;
}

lf::StatusOr<void*> library_module(const std::string& source, const std::string& entry, const std::string& arch,
                                   int device, std::string* log) {
  bool from_disk = false;
  auto cubin = library_cubin(source, entry, arch, log, &from_disk);
  if (!cubin.ok()) return cubin.status();
  rt::cu::context_of(device);  // makes the device's context current
  rt::cu::CUmodule module = nullptr;
  rt::cu::CUresult r = rt::cu::api().cuModuleLoadData(&module, cubin->data());
  // Only an image the driver calls bad is compiled again (invalid image, no binary for this GPU,
  // invalid or unsupported PTX): out of memory or a broken context would fail a fresh one too.
  const bool bad_image = r == 200 || r == 209 || r == 218 || r == 222;
  if (bad_image && from_disk) {
    std::fprintf(stderr, "[lazyfuse] warning: cached library kernel %s did not load (%s); recompiling it\n",
                 entry.c_str(), rt::cu::error_text(r).c_str());
    cubin = library_cubin(source, entry, arch, log, &from_disk, /*refresh=*/true);
    if (!cubin.ok()) return cubin.status();
    r = rt::cu::api().cuModuleLoadData(&module, cubin->data());
  }
  if (r != 0) return lf::InternalError("cuModuleLoadData(" + entry + "): " + rt::cu::error_text(r));
  return static_cast<void*>(module);
}

}  // namespace lf::cuda
