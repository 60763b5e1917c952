// Library kernels compiled once per source and device (program.h).
#include "codegen/cuda/program.h"

#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "codegen/cuda/backend.h"
#include "codegen/cuda/library_cache.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/ops.h"
#include "runtime/cuda_driver.h"

namespace lf::cuda {

lf::StatusOr<void*> library_function(const std::string& source, const std::string& entry, int device) {
  static std::mutex mu;
  // Never destroyed: modules must not be unloaded after the driver shut down at exit.
  static auto& modules = *new std::map<std::pair<int, std::string>, rt::cu::CUmodule>;
  static auto& functions = *new std::map<std::tuple<int, std::string, std::string>, void*>;
  std::lock_guard<std::mutex> lock(mu);
  auto fkey = std::make_tuple(device, source, entry);
  if (auto it = functions.find(fkey); it != functions.end()) return it->second;
  rt::cu::CUmodule& module = modules[{device, source}];
  if (!module) {
    std::string log;
    auto loaded = library_module(std::string(kPrelude) + source, entry, arch_of(device), device, &log);
    if (!loaded.ok()) return loaded.status();
    module = static_cast<rt::cu::CUmodule>(*loaded);
  }
  rt::cu::CUfunction fn = nullptr;
  if (rt::cu::CUresult r = rt::cu::api().cuModuleGetFunction(&fn, module, entry.c_str()); r != 0)
    return lf::InternalError("cuModuleGetFunction(" + entry + "): " + rt::cu::error_text(r));
  functions[fkey] = fn;
  return static_cast<void*>(fn);
}

std::string dtype_macros(DType d) {
  std::string s = std::string("typedef ") + stype(d) + " S;\ntypedef " + ctype(d) + " C;\n";
  switch (d) {
    case DType::Float16: return s + "#define LOAD(v) lf_h2f(v)\n#define STORE(v) lf_f2h(v)\n";
    case DType::BFloat16: return s + "#define LOAD(v) lf_b2f(v)\n#define STORE(v) lf_f2b(v)\n";
    default: return s + "#define LOAD(v) ((C)(v))\n#define STORE(v) ((S)(v))\n";
  }
}

}  // namespace lf::cuda
