// Default device and counters.
#include <mutex>
#include <optional>

#include "frontend/stats.h"
#include "lazyfuse/runtime.h"
#include "runtime/config.h"

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

bool cuda_available() { return false; }  // the CUDA backend is not part of this build yet

Device default_device() {
  std::lock_guard<std::mutex> lock(g_device_mutex);
  if (g_default_device) return *g_default_device;
  Device d = cuda_available() ? Device::cuda(0) : Device::cpu();
  if (const auto& env = rt::config().device) {
    auto parsed = parse_device(*env);
    if (!parsed) throw Error("LAZYFUSE_DEVICE=" + *env + ": expected cpu, cuda or cuda:N");
    if (parsed->is_cuda() && !cuda_available())
      throw Error("LAZYFUSE_DEVICE=" + *env + ": CUDA is not available in this build or on this machine");
    d = *parsed;
  }
  g_default_device = d;
  return d;
}

void set_default_device(Device device) {
  if (device.is_cuda() && !cuda_available())
    throw Error("lf::set_default_device(" + device.str() + "): CUDA is not available in this build or on this machine");
  std::lock_guard<std::mutex> lock(g_device_mutex);
  g_default_device = device;
}

namespace detail {
Stats& stats() {
  static Stats s;
  return s;
}
}  // namespace detail

CacheStats cache_stats() { return detail::stats(); }
void reset_stats() { detail::stats() = CacheStats{}; }

}  // namespace lf
