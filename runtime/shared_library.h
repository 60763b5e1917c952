// An optional shared library loaded at run time with dlopen (the CUDA driver, NVRTC and cuBLASLt
// today; cuDNN and NCCL will join): the first of several names that loads, and its functions bound
// by name, with what is missing kept in words for the "unavailable" message. Never unloaded.
#pragma once

#include <initializer_list>
#include <string>

namespace lf::rt {

class SharedLibrary {
 public:
  // The first of `names` that loads (RTLD_NOW | RTLD_LOCAL); when none does, loaded() is false
  // and error() has the loader's message for the first name.
  static SharedLibrary open(std::initializer_list<const char*> names);

  bool loaded() const { return handle_ != nullptr; }
  const std::string& name() const { return name_; }    // the name that loaded
  const std::string& error() const { return error_; }  // why none loaded

  // Binds `fn` to the function `symbol` (or `fallback`, an older name of it). A function that is
  // missing is added to missing().
  template <typename F>
  bool bind(F& fn, const char* symbol, const char* fallback = nullptr) {
    fn = reinterpret_cast<F>(find(symbol, fallback));
    return fn != nullptr;
  }
  // The functions bind() did not find, comma-separated; empty when every one was there.
  const std::string& missing() const { return missing_; }

 private:
  void* find(const char* symbol, const char* fallback);
  void* handle_ = nullptr;
  std::string name_, error_, missing_;
};

}  // namespace lf::rt
