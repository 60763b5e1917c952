// Default device and counters.
#include <cstdio>
#include <mutex>
#include <optional>

#include "codegen/cache/kernel_cache.h"
#include "frontend/stats.h"
#include "lazyfuse/runtime.h"
#include "runtime/config.h"
#include "runtime/cuda_allocator.h"
#include "runtime/cuda_driver.h"
#include "runtime/profile.h"
#include "runtime/storage.h"

namespace lf {
namespace {

std::optional<Device> parse_device(const std::string& s) {
  if (s == "cpu") return Device::cpu();
  if (s == "cuda") return Device::cuda(0);
  if (s.rfind("cuda:", 0) == 0 && s.size() > 5 && s.find_first_not_of("0123456789", 5) == std::string::npos)
    return Device::cuda(std::stoi(s.substr(5)));
  return std::nullopt;
}

std::mutex g_device_mutex;
std::optional<Device> g_default_device;

}  // namespace

// A usable driver and GPU is enough: the CUDA backend (codegen/, NVRTC) is being built now and
// runs the kernels of tensors on a CUDA device.
bool cuda_available() { return rt::cuda_status().available; }

namespace {
std::string cuda_unavailable_reason(Device device) {
  const rt::CudaStatus& st = rt::cuda_status();
  if (!st.available) return "CUDA is unavailable: " + st.reason;
  return device.str() + " does not exist (" + std::to_string(st.devices.size()) + " CUDA device(s))";
}
bool usable(Device device) {
  if (!device.is_cuda()) return true;
  const rt::CudaStatus& st = rt::cuda_status();
  return st.available && device.index() >= 0 && device.index() < static_cast<int>(st.devices.size());
}
}  // namespace

Device default_device() {
  std::lock_guard<std::mutex> lock(g_device_mutex);
  if (g_default_device) return *g_default_device;
  Device d = cuda_available() ? Device::cuda(0) : Device::cpu();
  if (const auto& env = rt::config().device) {
    auto parsed = parse_device(*env);
    if (!parsed) throw Error("LAZYFUSE_DEVICE=" + *env + ": expected cpu, cuda or cuda:N");
    if (!usable(*parsed)) throw Error("LAZYFUSE_DEVICE=" + *env + ": " + cuda_unavailable_reason(*parsed));
    d = *parsed;
  }
  g_default_device = d;
  return d;
}

void set_default_device(Device device) {
  if (!usable(device)) throw Error("lf::set_default_device(" + device.str() + "): " + cuda_unavailable_reason(device));
  std::lock_guard<std::mutex> lock(g_device_mutex);
  g_default_device = device;
}

void empty_cache() {
  rt::empty_host_cache();
  rt::empty_cuda_cache();  // a no-op without CUDA
}

void device_synchronize(Device device) { rt::synchronize(device); }

void set_fusion_enabled(bool enabled) { rt::mutable_config().fusion = enabled; }
bool fusion_enabled() { return rt::config().fusion; }

namespace detail {
Stats& stats() {
  static Stats s;
  return s;
}
}  // namespace detail

CacheStats cache_stats() {
  CacheStats s = detail::stats();
  cache::UpgradeStats up = cache::global_cache().upgrade_stats();
  s.kernels_upgraded = up.upgraded;
  s.upgrade_ms = up.compile_ms;
  return s;
}

void reset_stats() {
  detail::stats() = CacheStats{};
  cache::global_cache().reset_upgrade_stats();
}

void finish_compiles() { cache::global_cache().wait_for_upgrades(); }

void profile_begin() { rt::obs::profile_begin(); }
std::string profile_report() { return rt::obs::profile_report(/*stop=*/true); }

Profile::~Profile() {
  if (!reported_) std::fputs(report().c_str(), stderr);
}

std::string Profile::report() {
  reported_ = true;
  return profile_report();
}

bool write_trace() { return rt::obs::write_trace(); }

}  // namespace lf
