// LLVM ORC's loader for CPU kernels (plugin_api.h, OrcApi): an ObjectLinkingLayer (JITLink) in one
// ExecutionSession for the process, each object file linked into a JITDylib of its own (so that it
// can be removed alone, and the same kernel may be loaded twice), its external symbols resolved by
// the core's resolve_process_symbol, as the ELF loader resolves them. Runs on every target JITLink
// supports (x86-64 and aarch64 ELF among them); the optimizer is not needed here.
#include <llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutorProcessControl.h>
#include <llvm/ExecutionEngine/Orc/ObjectFileInterface.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/Orc/Shared/ExecutorSymbolDef.h>
#include <llvm/ExecutionEngine/Orc/TaskDispatch.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>

#include "codegen/cpu/plugin_api.h"

namespace lf::cpu {
// The core's resolver (codegen/cpu/elf_loader.h), declared here: including that header would put the
// ELF loader in the code-generator fingerprint (tests/codegen/cache/fingerprint_test.sh).
void* resolve_process_symbol(const std::string& name);
namespace plugin {
extern const char kBuild[];  // generated/plugin_build.cpp
}  // namespace plugin
namespace {

std::string message(llvm::Error err) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << err;
  return s;
}

// The process's symbols (and libmvec's) for whatever an object leaves undefined.
class ProcessSymbols final : public llvm::orc::DefinitionGenerator {
 public:
  llvm::Error tryToGenerate(llvm::orc::LookupState&, llvm::orc::LookupKind, llvm::orc::JITDylib& jd,
                            llvm::orc::JITDylibLookupFlags, const llvm::orc::SymbolLookupSet& symbols) override {
    llvm::orc::SymbolMap found;
    for (const auto& [name, flags] : symbols) {
      void* p = resolve_process_symbol((*name).str());
      if (p) found[name] = {llvm::orc::ExecutorAddr::fromPtr(p), llvm::JITSymbolFlags::Exported};
    }
    if (found.empty()) return llvm::Error::success();  // JITLink then names the missing symbol
    return jd.define(llvm::orc::absoluteSymbols(std::move(found)));
  }
};

class Orc {
 public:
  // Never destroyed: loaded kernels may outlive static destructors (the ELF loader's objects do).
  static Orc& get() {
    static Orc& orc = *new Orc();
    return orc;
  }

  lf::StatusOr<void*> load(std::string_view object) {
    if (!es_) return lf::UnavailableError("LLVM ORC unavailable: " + init_error_);
    std::string name = "kernel" + std::to_string(next_++);
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), name);
    // JITLink links any machine it knows into this process: one made for another would crash.
    auto file = llvm::object::ObjectFile::createObjectFile(buffer->getMemBufferRef());
    if (!file) return lf::InvalidArgumentError("object file (LLVM ORC): " + message(file.takeError()));
    if ((*file)->getArch() != host_.getArch())
      return lf::InvalidArgumentError("object file (LLVM ORC): made for " +
                                      llvm::Triple::getArchTypeName((*file)->getArch()).str() + ", not " +
                                      host_.getArchName().str());
    auto interface = llvm::orc::getObjectFileInterface(*es_, buffer->getMemBufferRef());
    if (!interface) return lf::InvalidArgumentError("object file (LLVM ORC): " + message(interface.takeError()));
    llvm::orc::SymbolLookupSet defined;
    for (const auto& [sym, flags] : interface->SymbolFlags) defined.add(sym);
    llvm::orc::JITDylib& jd = es_->createBareJITDylib(name);
    jd.addGenerator(std::make_unique<ProcessSymbols>());
    auto fail = [&](std::string why) -> lf::StatusOr<void*> {
      if (llvm::Error err = es_->removeJITDylib(jd)) why += "; removing it: " + message(std::move(err));
      return lf::InvalidArgumentError("object file (LLVM ORC): " + why);
    };
    if (llvm::Error err = layer_->add(jd, std::move(buffer), std::move(*interface))) return fail(message(std::move(err)));
    // Every defined symbol looked up at once links the object now (JITLink materializes on the
    // first lookup): a bad object is an error here, and a kernel's first launch pays nothing.
    auto found = es_->lookup(llvm::orc::makeJITDylibSearchOrder(&jd, llvm::orc::JITDylibLookupFlags::MatchAllSymbols),
                             std::move(defined));
    if (!found) return fail(message(found.takeError()));
    auto handle = std::make_unique<Handle>();
    handle->jd = &jd;
    for (const auto& [sym, def] : *found) handle->symbols.emplace((*sym).str(), def.getAddress().toPtr<void*>());
    return static_cast<void*>(handle.release());
  }

  void unload(void* h) {
    std::unique_ptr<Handle> handle(static_cast<Handle*>(h));
    if (llvm::Error err = es_->removeJITDylib(*handle->jd))
      llvm::consumeError(std::move(err));  // nothing the caller could do; the memory stays mapped
  }

  struct Handle {
    llvm::orc::JITDylib* jd = nullptr;
    std::unordered_map<std::string, void*> symbols;
  };

 private:
  Orc() {
    // Tasks run in the calling thread: loading a kernel is short, and needs no thread of LLVM's.
    auto epc = llvm::orc::SelfExecutorProcessControl::Create(nullptr, std::make_unique<llvm::orc::InPlaceTaskDispatcher>());
    if (!epc) {
      init_error_ = message(epc.takeError());
      return;
    }
    es_ = std::make_unique<llvm::orc::ExecutionSession>(std::move(*epc));
    layer_ = std::make_unique<llvm::orc::ObjectLinkingLayer>(*es_);
  }

  llvm::Triple host_{llvm::sys::getProcessTriple()};
  std::unique_ptr<llvm::orc::ExecutionSession> es_;
  std::unique_ptr<llvm::orc::ObjectLinkingLayer> layer_;
  std::string init_error_;
  std::atomic<uint64_t> next_{0};
};

lf::StatusOr<void*> orc_load(std::string_view object) { return Orc::get().load(object); }
void* orc_symbol(void* handle, const std::string& name) {
  const auto& symbols = static_cast<const Orc::Handle*>(handle)->symbols;
  auto it = symbols.find(name);
  return it == symbols.end() ? nullptr : it->second;
}
void orc_unload(void* handle) { Orc::get().unload(handle); }

}  // namespace
}  // namespace lf::cpu

extern "C" __attribute__((visibility("default"))) const lf::cpu::plugin::OrcApi* lazyfuse_orc_loader() {
  static const lf::cpu::plugin::OrcApi api = [] {
    lf::cpu::plugin::OrcApi a;
    a.abi = lf::cpu::plugin::kAbiVersion;
    a.build = lf::cpu::plugin::kBuild;
    a.load = lf::cpu::orc_load;
    a.symbol = lf::cpu::orc_symbol;
    a.unload = lf::cpu::orc_unload;
    return a;
  }();
  return &api;
}
