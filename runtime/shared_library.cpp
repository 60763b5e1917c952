#include "runtime/shared_library.h"

#include <dlfcn.h>

namespace lf::rt {

SharedLibrary SharedLibrary::open(std::initializer_list<const char*> names) {
  SharedLibrary lib;
  for (const char* name : names) {
    lib.handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib.handle_) {
      lib.name_ = name;
      lib.error_.clear();
      return lib;
    }
    if (lib.error_.empty()) {
      const char* err = dlerror();
      lib.error_ = err ? err : std::string(name) + ": dlopen failed";
    }
  }
  return lib;
}

void* SharedLibrary::find(const char* symbol, const char* fallback) {
  void* p = handle_ ? dlsym(handle_, symbol) : nullptr;
  if (!p && fallback && handle_) p = dlsym(handle_, fallback);
  if (!p) missing_ += (missing_.empty() ? "" : ", ") + std::string(symbol);
  return p;
}

}  // namespace lf::rt
