// The CPU kernels' loaders behind one interface (loader.h): the ELF loader's LoadedObject, or an
// object linked by LLVM ORC in the plugin (plugin_api.h, OrcApi).
#include "codegen/cpu/loader.h"

#include <atomic>
#include <cstdio>

#include "codegen/cpu/elf_loader.h"
#include "codegen/cpu/plugin.h"
#include "runtime/config.h"

namespace lf::cpu {
namespace {

class ElfImage final : public KernelImage {
 public:
  explicit ElfImage(std::unique_ptr<LoadedObject> object) : object_(std::move(object)) {}
  void* symbol(const std::string& name) const override { return object_->symbol(name); }

 private:
  std::unique_ptr<LoadedObject> object_;
};

class OrcImage final : public KernelImage {
 public:
  OrcImage(const plugin::OrcApi* api, void* handle) : api_(api), handle_(handle) {}
  ~OrcImage() override { api_->unload(handle_); }
  void* symbol(const std::string& name) const override { return api_->symbol(handle_, name); }

 private:
  const plugin::OrcApi* api_;
  void* handle_;
};

}  // namespace

const char* loader_name(Loader loader) { return loader == Loader::Elf ? "elf" : "orc"; }

bool elf_loader_knows_target() {
#if defined(__x86_64__)
  return true;
#else
  return false;
#endif
}

lf::StatusOr<LoaderChoice> choose_loader() {
  const std::string& asked = rt::config().cpu_loader;
  if (asked == "orc") return LoaderChoice{Loader::Orc, "LAZYFUSE_CPU_LOADER=orc"};
  if (asked == "elf") {
    if (!elf_loader_knows_target())
      return lf::InvalidArgumentError(
          "LAZYFUSE_CPU_LOADER=elf: LazyFuse's ELF loader knows x86-64 objects only; use orc (or auto) on this target");
    return LoaderChoice{Loader::Elf, "LAZYFUSE_CPU_LOADER=elf"};
  }
  if (elf_loader_knows_target())
    return LoaderChoice{Loader::Elf, "auto: x86-64, where the ELF loader needs no LLVM at a warm start"};
  return LoaderChoice{Loader::Orc, "auto: the ELF loader knows x86-64 only"};
}

lf::StatusOr<std::shared_ptr<const KernelImage>> load_image(std::string_view object, Loader loader) {
  if (loader == Loader::Elf) {
    auto loaded = load_object(object);
    if (!loaded.ok()) return loaded.status();
    return std::shared_ptr<const KernelImage>(std::make_shared<ElfImage>(std::move(*loaded)));
  }
  auto api = plugin::orc();
  if (!api.ok()) return api.status();
  auto handle = (*api)->load(object);
  if (!handle.ok()) return handle.status();
  return std::shared_ptr<const KernelImage>(std::make_shared<OrcImage>(*api, *handle));
}

lf::StatusOr<std::shared_ptr<const KernelImage>> load_image(std::string_view object) {
  auto choice = choose_loader();
  if (!choice.ok()) return choice.status();
  static std::atomic<bool> logged[2] = {false, false};
  if (rt::config().log_level >= 1 && !logged[static_cast<int>(choice->loader)].exchange(true))
    std::fprintf(stderr, "[lazyfuse] CPU kernels load with the %s loader (%s)\n", loader_name(choice->loader),
                 choice->why.c_str());
  return load_image(object, choice->loader);
}

}  // namespace lf::cpu
