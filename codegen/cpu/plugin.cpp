// Finds and loads liblazyfuse-llvm.so (llvm_plugin.h): it sits next to liblazyfuse.so, in the build
// folder and in an installed prefix alike, so its path is the core library's own (dladdr).
#include "codegen/cpu/plugin.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>

#include "codegen/cache/fingerprint.h"

#ifndef LAZYFUSE_LLVM_VERSION
#error "LAZYFUSE_LLVM_VERSION (the LLVM version of the plugin build) must be defined by the build"
#endif

namespace lf::cpu::plugin {
namespace {

constexpr const char* kPluginFile = "liblazyfuse-llvm.so";

std::atomic<bool> g_loaded{false};

std::string plugin_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugin_path), &info) == 0 || !info.dli_fname) return kPluginFile;
  std::string self = info.dli_fname;
  size_t slash = self.rfind('/');
  return slash == std::string::npos ? kPluginFile : self.substr(0, slash + 1) + kPluginFile;
}

}  // namespace

lf::StatusOr<const Api*> load_from(const std::string& path) {
  auto fail = [&](const std::string& why) {
    return lf::UnavailableError("the CPU compiler (LLVM plugin " + path + ") cannot be loaded: " + why +
                                  "; it is built and installed with liblazyfuse.so and must sit next to it");
  };
  // RTLD_LAZY: binding all of libLLVM's symbols up front costs the first compile about 5 ms more;
  // a plugin of another build is refused below before anything in it is called.
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    return fail(err ? err : "dlopen failed");
  }
  auto entry = reinterpret_cast<const Api* (*)()>(dlsym(handle, "lazyfuse_llvm_plugin"));
  if (!entry) return fail("no lazyfuse_llvm_plugin symbol in it");
  const Api* api = entry();
  if (!api || api->abi != kAbiVersion) return fail("another plugin interface version");
  if (!api->build || std::strcmp(api->build, codegen_fingerprint()) != 0)
    return fail(std::string("built from other sources (") + (api->build ? api->build : "?") + ", this library " +
                codegen_fingerprint() + ")");
  if (!api->llvm_version || std::strcmp(api->llvm_version, LAZYFUSE_LLVM_VERSION) != 0)
    return fail("built with another LLVM version");
  g_loaded = true;
  return api;  // never unloaded: compiled kernels do not point into it, but its LLVM state lives on
}

lf::StatusOr<const Api*> get() {
  static const lf::StatusOr<const Api*> api = load_from(plugin_path());
  return api;
}

lf::StatusOr<const OrcApi*> orc() {
  auto api = get();
  if (!api.ok()) return api.status();
  const OrcApi* o = (*api)->orc;
  if (!o || o->abi != kAbiVersion || !o->build || std::strcmp(o->build, codegen_fingerprint()) != 0)
    return lf::UnavailableError("the LLVM plugin's ORC loader belongs to another build");
  return o;
}

bool loaded() { return g_loaded; }

}  // namespace lf::cpu::plugin
