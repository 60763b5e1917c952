// NVRTC, loaded at first use like the driver: CUDA C to a cubin. Its options shape the generated
// code, so this file is part of the code-generator fingerprint (cmake/codegen_sources.py).
#include "codegen/cuda/nvrtc.h"

#include <string>
#include <vector>

#include "runtime/shared_library.h"

namespace lf::cuda {
namespace {

// NVRTC, loaded at first use like the driver.
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
struct Nvrtc {
  nvrtcResult (*nvrtcVersion)(int*, int*);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
  const char* (*nvrtcGetErrorString)(nvrtcResult);
  int major = 0, minor = 0;
  std::string error;  // why NVRTC is unusable, when it is
};

const Nvrtc& nvrtc() {
  static const Nvrtc n = [] {
    Nvrtc n{};
    auto lib = rt::SharedLibrary::open({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so.13"});
    if (!lib.loaded()) {
      n.error = "libnvrtc.so not found (install the CUDA toolkit's NVRTC)";
      return n;
    }
    auto bind = [&](auto& fn, const char* sym) { lib.bind(fn, sym); };
    bind(n.nvrtcVersion, "nvrtcVersion");
    bind(n.nvrtcCreateProgram, "nvrtcCreateProgram");
    bind(n.nvrtcCompileProgram, "nvrtcCompileProgram");
    bind(n.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
    bind(n.nvrtcGetProgramLog, "nvrtcGetProgramLog");
    bind(n.nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
    bind(n.nvrtcGetCUBIN, "nvrtcGetCUBIN");
    bind(n.nvrtcDestroyProgram, "nvrtcDestroyProgram");
    bind(n.nvrtcGetErrorString, "nvrtcGetErrorString");
    if (!lib.missing().empty()) {
      n.error = "libnvrtc lacks entry points: " + lib.missing();
      return n;
    }
    n.nvrtcVersion(&n.major, &n.minor);
    return n;
  }();
  return n;
}

lf::Status nvrtc_check(nvrtcResult r, const char* call) {
  if (r == 0) return lf::OkStatus();
  return lf::InternalError(std::string(call) + " failed: " + nvrtc().nvrtcGetErrorString(r));
}

#define LF_NVRTC_RETURN_IF_ERROR(call)                   \
  do {                                                   \
    lf::Status s_ = nvrtc_check((call), #call);        \
    if (!s_.ok()) return s_;                             \
  } while (0)

bool nvrtc_at_least(int major, int minor) {
  const Nvrtc& n = nvrtc();
  return n.major > major || (n.major == major && n.minor >= minor);
}

}  // namespace

NvrtcBuild generated_kernel_build(bool quick) { return {.quick = quick, .contract = false}; }

lf::StatusOr<std::vector<char>> nvrtc_compile(const std::string& source, const std::string& name,
                                               const std::string& arch, NvrtcBuild build, std::string* log) {
  const Nvrtc& n = nvrtc();
  if (!n.error.empty()) return lf::UnavailableError(n.error);
  std::string arch_flag = "--gpu-architecture=" + arch;
  std::vector<const char*> opts = {arch_flag.c_str(), "-std=c++17", "-default-device", "--restrict"};
  // -minimal (NVRTC 12.4 and later) leaves out texture, surface and device-runtime declarations,
  // which generated kernels never use: it cut NVRTC's fixed cost from about 55 to 37 ms a kernel
  // on the 2-core machine (bench/experiments/nvrtc_time.cpp).
  if (nvrtc_at_least(12, 4)) opts.push_back("-minimal");
  // The quick build of tiered compiling: about half the compile time, kernels up to 2.7x slower
  // on the H100 (bench/RESULTS.md, 2026-11-23).
  if (build.quick) opts.push_back("--Ofast-compile=mid");
  if (!build.contract) opts.push_back("--fmad=false");
  nvrtcProgram prog = nullptr;
  LF_NVRTC_RETURN_IF_ERROR(n.nvrtcCreateProgram(&prog, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr));
  nvrtcResult compiled = n.nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t log_size = 0;
  n.nvrtcGetProgramLogSize(prog, &log_size);
  log->assign(log_size, '\0');
  if (log_size) n.nvrtcGetProgramLog(prog, log->data());
  while (!log->empty() && (log->back() == '\0' || log->back() == '\n')) log->pop_back();
  if (compiled != 0) {
    n.nvrtcDestroyProgram(&prog);
    return lf::InternalError("NVRTC could not compile " + name + ": " + n.nvrtcGetErrorString(compiled) + "\n" + *log);
  }
  size_t cubin_size = 0;
  LF_NVRTC_RETURN_IF_ERROR(n.nvrtcGetCUBINSize(prog, &cubin_size));
  std::vector<char> cubin(cubin_size);
  LF_NVRTC_RETURN_IF_ERROR(n.nvrtcGetCUBIN(prog, cubin.data()));
  n.nvrtcDestroyProgram(&prog);
  return cubin;
}

lf::Status check_compiles(const std::string& source, const std::string& name, const std::string& arch) {
  std::string log;
  auto cubin = nvrtc_compile(source, name, arch, NvrtcBuild{}, &log);
  return cubin.ok() ? lf::OkStatus() : cubin.status();
}

bool quick_builds_available() { return nvrtc().error.empty() && nvrtc_at_least(12, 8); }

lf::Status nvrtc_status() {
  const Nvrtc& n = nvrtc();
  return n.error.empty() ? lf::OkStatus() : lf::UnavailableError(n.error);
}

std::string nvrtc_version() { return std::to_string(nvrtc().major) + "." + std::to_string(nvrtc().minor); }

}  // namespace lf::cuda
