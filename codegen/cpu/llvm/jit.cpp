// The CPU backend's compiler, in the LLVM plugin (llvm_plugin.h): each kernel is its own module,
// optimized at O3 for the host CPU with libmvec registered as the vector math library and compiled
// to an object file, which the core loads (elf_loader.h) and the persistent cache stores.
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <dlfcn.h>

#include <mutex>
#include <vector>

#include "runtime/status.h"
#include "codegen/cpu/llvm/emit.h"
#include "codegen/cpu/plugin_api.h"
#include "runtime/config.h"

namespace lf::cpu {
namespace plugin {
extern const char kBuild[];  // generated/plugin_build.cpp
}  // namespace plugin
namespace {

std::string to_string(llvm::Error err) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << err;
  return s;
}

// Vector variants of the libm functions the emitter calls, as glibc's libmvec names them
// (x86-64 vector function ABI: 'd' is AVX2, 'e' is AVX-512).
struct VecName {
  const char* scalar;
  int arity;
};
constexpr VecName kVectorMath[] = {
    {"exp", 1},   {"exp2", 1},  {"log", 1},  {"log2", 1},  {"log1p", 1}, {"expm1", 1}, {"sin", 1},
    {"cos", 1},   {"tan", 1},   {"asin", 1}, {"acos", 1},  {"atan", 1},  {"sinh", 1},  {"cosh", 1},
    {"tanh", 1},  {"erf", 1},   {"pow", 2},  {"atan2", 2},
};

class Jit {
 public:
  static Jit& get() {
    static Jit jit;
    return jit;
  }

  // Optimizes and compiles the module to an object file.
  lf::StatusOr<std::string> compile(llvm::Module& m) {
    if (!tm_) return lf::UnavailableError("LLVM target machine unavailable: " + init_error_);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto st = prepare(m); !st.ok()) return st;
    if (rt::config().log_level >= 3) m.print(llvm::errs(), nullptr);
    return emit(*tm_, m, llvm::CodeGenFileType::ObjectFile);
  }

  // Compiles the module as it is (no optimization); `pic`: position-independent code, as kernels,
  // else the static relocation model.
  lf::StatusOr<std::string> compile_unoptimized(llvm::Module& m, bool pic) {
    if (!tm_) return lf::UnavailableError("LLVM target machine unavailable: " + init_error_);
    std::lock_guard<std::mutex> lock(mu_);
    m.setDataLayout(*layout_);
    m.setTargetTriple(triple_.str());
    if (llvm::verifyModule(m, &llvm::errs())) return lf::InvalidArgumentError("LLVM IR does not verify");
    if (pic) return emit(*tm_, m, llvm::CodeGenFileType::ObjectFile);
    llvm::orc::JITTargetMachineBuilder jtmb = *jtmb_;
    jtmb.setRelocationModel(llvm::Reloc::Static);
    auto tm = jtmb.createTargetMachine();
    if (!tm) return lf::InternalError(to_string(tm.takeError()));
    return emit(**tm, m, llvm::CodeGenFileType::ObjectFile);
  }

  // The optimized IR and assembly of a module, for inspection.
  lf::StatusOr<Inspection> inspect(std::unique_ptr<llvm::Module> m) {
    if (!tm_) return lf::UnavailableError("LLVM target machine unavailable: " + init_error_);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto st = prepare(*m); !st.ok()) return st;
    Inspection out;
    llvm::raw_string_ostream os(out.optimized_ir);
    m->print(os, nullptr);
    auto assembly = emit(*tm_, *m, llvm::CodeGenFileType::AssemblyFile);
    if (!assembly.ok()) return assembly.status();
    out.assembly = std::move(*assembly);
    return out;
  }

 private:
  Jit() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
      init_error_ = to_string(jtmb.takeError());
      return;
    }
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    // Position-independent, small code model: the relocations codegen/cpu/elf_loader.cpp applies.
    jtmb->setRelocationModel(llvm::Reloc::PIC_);
    jtmb->setCodeModel(llvm::CodeModel::Small);
    triple_ = jtmb->getTargetTriple();
    auto tm = jtmb->createTargetMachine();
    if (!tm) {
      init_error_ = to_string(tm.takeError());
      return;
    }
    tm_ = std::move(*tm);
    layout_ = tm_->createDataLayout();
    jtmb_ = std::move(*jtmb);
    std::string features = tm_->getTargetFeatureString().str();
    bool avx2 = features.find("+avx2") != std::string::npos;
    bool avx512 = features.find("+avx512f") != std::string::npos;
    // The same test as the core's target_id() (cpu_target.cpp), which keys the cache on it; the
    // core resolves the vector functions in libmvec when it loads a kernel (elf_loader.cpp).
    has_libmvec_ = avx2 && dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL) != nullptr;
    // Keep the names alive: VecDesc holds StringRefs.
    if (has_libmvec_) {
      for (const VecName& v : kVectorMath) {
        std::string params(v.arity, 'v');
        for (bool single : {true, false}) {
          std::string scalar = std::string(v.scalar) + (single ? "f" : "");
          struct Isa {
            char letter;
            unsigned lanes;
            bool ok;
          };
          for (Isa isa : {Isa{'d', single ? 8u : 4u, avx2}, Isa{'e', single ? 16u : 8u, avx512}}) {
            if (!isa.ok) continue;
            std::string lanes = std::to_string(isa.lanes);
            names_.push_back(scalar);
            names_.push_back("_ZGV" + std::string(1, isa.letter) + "N" + lanes + params + "_" + scalar);
            names_.push_back("_ZGV_LLVM_N" + lanes + params);
            vec_lanes_.push_back(isa.lanes);
          }
        }
      }
      auto it = names_.begin();
      for (unsigned lanes : vec_lanes_) {
        const std::string& s = *it++;
        const std::string& vname = *it++;
        const std::string& abi = *it++;
        vecs_.emplace_back(s, vname, llvm::ElementCount::getFixed(lanes), false, abi);
      }
    }
  }

  // Called with mu_ held: verifies and optimizes for this CPU.
  lf::Status prepare(llvm::Module& m) {
    m.setDataLayout(*layout_);
    m.setTargetTriple(triple_.str());
    if (llvm::verifyModule(m, &llvm::errs())) return lf::InternalError("generated LLVM IR does not verify");
    optimize(m);
    return lf::OkStatus();
  }

  // Called with mu_ held.
  lf::StatusOr<std::string> emit(llvm::TargetMachine& tm, llvm::Module& m, llvm::CodeGenFileType type) {
    llvm::SmallVector<char, 0> buffer;
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr, type))
      return lf::InternalError("LLVM target machine cannot emit this file type");
    pm.run(m);
    return std::string(buffer.data(), buffer.size());
  }

  void optimize(llvm::Module& m) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions pto;
    pto.LoopVectorization = true;
    pto.SLPVectorization = true;
    llvm::PassBuilder pb(tm_.get(), pto);
    llvm::TargetLibraryInfoImpl tlii(triple_);
    tlii.addVectorizableFunctions(vecs_);
    fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(m, mam);
    mark_streaming_stores(m);
  }

  std::mutex mu_;
  std::optional<llvm::orc::JITTargetMachineBuilder> jtmb_;
  std::unique_ptr<llvm::TargetMachine> tm_;
  std::optional<llvm::DataLayout> layout_;
  llvm::Triple triple_;
  std::string init_error_;
  bool has_libmvec_ = false;
  std::vector<std::string> names_;
  std::vector<unsigned> vec_lanes_;
  std::vector<llvm::VecDesc> vecs_;
};

// The plugin's entry points (plugin_api.h, Api), local so that they never interpose the core's
// functions of the same names.
std::string kernel_ir(const kir::Kernel& kernel, const EmitOptions& options, const std::string& name) {
  llvm::LLVMContext ctx;
  auto m = emit_module(kernel, options, name, ctx);
  std::string s;
  llvm::raw_string_ostream os(s);
  m->print(os, nullptr);
  return s;
}

lf::Status compile_kernel(const kir::Kernel& kernel, const EmitOptions& options, const std::string& name, std::string* ir,
                            std::string* object) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m;
  try {
    m = emit_module(kernel, options, name, *ctx);
  } catch (const std::exception& e) {
    return lf::InternalError(e.what());
  }
  {
    llvm::raw_string_ostream os(*ir);
    m->print(os, nullptr);
  }
  auto obj = Jit::get().compile(*m);
  if (!obj.ok()) return obj.status();
  *object = std::move(*obj);
  return lf::OkStatus();
}

lf::StatusOr<Inspection> inspect_kernel(const kir::Kernel& kernel, const EmitOptions& options, const std::string& name) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m;
  try {
    m = emit_module(kernel, options, name, *ctx);
  } catch (const std::exception& e) {
    return lf::InternalError(e.what());
  }
  return Jit::get().inspect(std::move(m));
}

lf::StatusOr<std::string> compile_ir(const std::string& ir, bool pic) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic diag;
  auto m = llvm::parseIR(llvm::MemoryBufferRef(ir, "ir"), diag, ctx);
  if (!m) {
    std::string s;
    llvm::raw_string_ostream os(s);
    diag.print("ir", os);
    return lf::InvalidArgumentError("LLVM IR does not parse: " + s);
  }
  return Jit::get().compile_unoptimized(*m, pic);
}

}  // namespace

}  // namespace lf::cpu

extern "C" __attribute__((visibility("default"))) const lf::cpu::plugin::Api* lazyfuse_llvm_plugin() {
  static const lf::cpu::plugin::Api api = [] {
    lf::cpu::plugin::Api a;
    a.abi = lf::cpu::plugin::kAbiVersion;
    a.build = lf::cpu::plugin::kBuild;
    a.llvm_version = LLVM_VERSION_STRING;
    a.compile = lf::cpu::compile_kernel;
    a.inspect = lf::cpu::inspect_kernel;
    a.emit_ir = lf::cpu::kernel_ir;
    a.compile_ir = lf::cpu::compile_ir;
    a.orc = lazyfuse_orc_loader();  // orc.cpp
    return a;
  }();
  return &api;
}
