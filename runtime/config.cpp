#include "runtime/config.h"

#include <cstdlib>
#include <string>

#include "lazyfuse/types.h"

namespace lf::rt {
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

int64_t env_int(const char* name, int64_t fallback, int64_t lo, int64_t hi) {
  auto v = env(name);
  if (!v) return fallback;
  char* end = nullptr;
  long long n = std::strtoll(v->c_str(), &end, 10);
  if (end == v->c_str() || *end != '\0' || n < lo || n > hi) {
    throw Error(std::string(name) + "=" + *v + ": expected an integer in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  }
  return n;
}

double env_double(const char* name, double fallback, double lo, double hi) {
  auto v = env(name);
  if (!v) return fallback;
  char* end = nullptr;
  double d = std::strtod(v->c_str(), &end);
  if (end == v->c_str() || *end != '\0' || !(d >= lo && d <= hi)) {
    throw Error(std::string(name) + "=" + *v + ": expected a number in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  }
  return d;
}

Config read_config() {
  Config c;
  c.device = env("LAZYFUSE_DEVICE");
  c.fusion = env_int("LAZYFUSE_FUSION", 1, 0, 1) != 0;
  c.log_level = static_cast<int>(env_int("LAZYFUSE_LOG", 0, 0, 3));
  c.trace_limit = env_int("LAZYFUSE_TRACE_LIMIT", c.trace_limit, 1, int64_t{1} << 40);
  c.flush_plans = env_int("LAZYFUSE_FLUSH_PLANS", 1, 0, 1) != 0;
  c.num_threads = static_cast<int>(env_int("LAZYFUSE_NUM_THREADS", 0, 0, 4096));
  if (auto dir = env("LAZYFUSE_CACHE_DIR")) {
    c.cache_dir = *dir == "off" ? "" : *dir;
  } else if (auto xdg = env("XDG_CACHE_HOME")) {
    c.cache_dir = *xdg + "/lazyfuse";
  } else if (auto home = env("HOME")) {
    c.cache_dir = *home + "/.cache/lazyfuse";
  }
  c.cache_max_bytes = static_cast<uint64_t>(env_int("LAZYFUSE_CACHE_MAX_MB", 1024, 1, int64_t{1} << 30)) << 20;
  c.dump_dir = env("LAZYFUSE_DUMP_DIR").value_or("");
  c.tiered_compile = env_int("LAZYFUSE_TIERED_COMPILE", 1, 0, 1) != 0;
  c.cuda_graphs = env_int("LAZYFUSE_CUDA_GRAPHS", 1, 0, 1) != 0;
  c.launch_thread = env_int("LAZYFUSE_LAUNCH_THREAD", 1, 0, 1) != 0;
  c.deterministic = env_int("LAZYFUSE_DETERMINISTIC", 0, 0, 1) != 0;
  c.host_cache_all = env_int("LAZYFUSE_HOST_CACHE_ALL", 0, 0, 1) != 0;
  c.profile = env_int("LAZYFUSE_PROFILE", 0, 0, 1) != 0;
  c.profile_floor_gbs = env_double("LAZYFUSE_PROFILE_FLOOR_GBS", 0, 0, 1e6);
  c.trace_file = env("LAZYFUSE_TRACE_FILE").value_or("");
  c.matmul = env("LAZYFUSE_MATMUL").value_or("auto");
  if (c.matmul != "auto" && c.matmul != "cublaslt" && c.matmul != "generated")
    throw Error("LAZYFUSE_MATMUL=" + c.matmul + ": expected auto, cublaslt or generated");
  c.conv = env("LAZYFUSE_CONV").value_or("auto");
  if (c.conv != "auto" && c.conv != "cudnn" && c.conv != "onednn" && c.conv != "generated")
    throw Error("LAZYFUSE_CONV=" + c.conv + ": expected auto, cudnn, onednn or generated");
  c.linalg = env("LAZYFUSE_LINALG").value_or("auto");
  if (c.linalg != "auto" && c.linalg != "reference" && c.linalg != "host" && c.linalg != "cusolver")
    throw Error("LAZYFUSE_LINALG=" + c.linalg + ": expected auto, cusolver, host or reference");
  c.fft = env("LAZYFUSE_FFT").value_or("auto");
  if (c.fft != "auto" && c.fft != "reference")
    throw Error("LAZYFUSE_FFT=" + c.fft + ": expected auto or reference");
  c.cpu_loader = env("LAZYFUSE_CPU_LOADER").value_or("auto");
  if (c.cpu_loader != "auto" && c.cpu_loader != "elf" && c.cpu_loader != "orc")
    throw Error("LAZYFUSE_CPU_LOADER=" + c.cpu_loader + ": expected auto, elf or orc");
  c.conv_tf32 = env_int("LAZYFUSE_CONV_TF32", 1, 0, 1) != 0;
  c.matmul_tf32 = env_int("LAZYFUSE_MATMUL_TF32", 0, 0, 1) != 0;
  c.conv_benchmark = env_int("LAZYFUSE_CONV_BENCHMARK", 0, 0, 1) != 0;
  c.conv_nhwc = env_int("LAZYFUSE_CONV_NHWC", 1, 0, 1) != 0;
  c.attention_rows = static_cast<int>(env_int("LAZYFUSE_ATTENTION_ROWS", 0, 0, 128));
  if (c.attention_rows != 0 && c.attention_rows != 64 && c.attention_rows != 128)
    throw Error("LAZYFUSE_ATTENTION_ROWS=" + std::to_string(c.attention_rows) + ": expected 0 (auto), 64 or 128");
  c.attention_wgmma = static_cast<int>(env_int("LAZYFUSE_ATTENTION_WGMMA", -1, -1, 1));
  c.attention_keys = static_cast<int>(env_int("LAZYFUSE_ATTENTION_KEYS", 0, 0, 128));
  if (c.attention_keys != 0 && c.attention_keys != 64 && c.attention_keys != 128)
    throw Error("LAZYFUSE_ATTENTION_KEYS=" + std::to_string(c.attention_keys) + ": expected 0, 64 or 128");
  c.attention_pairs = static_cast<int>(env_int("LAZYFUSE_ATTENTION_PAIRS", -1, -1, 1));
  c.few_rows = env_int("LAZYFUSE_FEW_ROWS", -1, -1, int64_t{1} << 40);
  return c;
}

}  // namespace

Config& mutable_config() {
  // Never destroyed: a storage freed at exit still reads it (LAZYFUSE_HOST_CACHE_ALL).
  static Config& c = *new Config(read_config());
  return c;
}

const Config& config() { return mutable_config(); }

}  // namespace lf::rt
