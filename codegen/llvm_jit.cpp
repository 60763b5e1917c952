// The CPU backend's compiler and launcher: one LLJIT per process; each kernel is its own module,
// optimized at O3 for the host CPU with libmvec registered as the vector math library, compiled to an
// object file (which the persistent cache stores) and linked into a JITDylib of its own, so that the
// same kernel can be loaded again after the in-memory cache was cleared.
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "codegen/cpu_backend.h"
#include "codegen/llvm_emit.h"
#include "runtime/config.h"
#include "runtime/thread_pool.h"

namespace lf::cpu {
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

  // Optimizes and compiles the module to an object file in *object, then links it into *out.
  absl::Status add(std::unique_ptr<llvm::Module> m, const std::string& name, bool split, std::string* object,
                   CompiledKernel* out) {
    if (!jit_) return absl::UnavailableError("LLVM JIT unavailable: " + init_error_);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto st = prepare(*m); !st.ok()) return st;
    if (rt::config().log_level >= 3) m->print(llvm::errs(), nullptr);
    auto obj = emit(*m, llvm::CodeGenFileType::ObjectFile);
    if (!obj.ok()) return obj.status();
    *object = std::move(*obj);
    return link(name, *object, split, out);
  }

  // Links an object file (freshly compiled or from the persistent cache) and finds the kernel's
  // functions in it.
  absl::Status add_object(const std::string& name, const std::string& object, bool split, CompiledKernel* out) {
    if (!jit_) return absl::UnavailableError("LLVM JIT unavailable: " + init_error_);
    std::lock_guard<std::mutex> lock(mu_);
    return link(name, object, split, out);
  }

  // The optimized IR and assembly of a module, for inspection.
  absl::StatusOr<Inspection> inspect(std::unique_ptr<llvm::Module> m) {
    if (!jit_) return absl::UnavailableError("LLVM JIT unavailable: " + init_error_);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto st = prepare(*m); !st.ok()) return st;
    Inspection out;
    llvm::raw_string_ostream os(out.optimized_ir);
    m->print(os, nullptr);
    auto assembly = emit(*m, llvm::CodeGenFileType::AssemblyFile);
    if (!assembly.ok()) return assembly.status();
    out.assembly = std::move(*assembly);
    return out;
  }

  const std::string& target_id() const { return target_id_; }

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
    // What LLJIT itself sets for JITLink on ELF: kernels are compiled to objects with tm_ below.
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
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
    if (!jit) {
      init_error_ = to_string(jit.takeError());
      return;
    }
    jit_ = std::move(*jit);
    char prefix = layout_->getGlobalPrefix();
    auto& dylib = jit_->getMainJITDylib();
    if (auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix)) {
      dylib.addGenerator(std::move(*gen));
    } else {
      init_error_ = to_string(gen.takeError());
      jit_.reset();
      return;
    }
    std::string features = tm_->getTargetFeatureString().str();
    bool avx2 = features.find("+avx2") != std::string::npos;
    bool avx512 = features.find("+avx512f") != std::string::npos;
    if (auto mvec = llvm::orc::DynamicLibrarySearchGenerator::Load("libmvec.so.1", prefix)) {
      dylib.addGenerator(std::move(*mvec));
      has_libmvec_ = avx2;
    } else {
      llvm::consumeError(mvec.takeError());
    }
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
    target_id_ = "llvm" + std::string(LLVM_VERSION_STRING) + "/" + triple_.str() + "/" + tm_->getTargetCPU().str() +
                 "/" + features + (has_libmvec_ ? "/libmvec" : "");
  }

  // Called with mu_ held: verifies and optimizes for this CPU.
  absl::Status prepare(llvm::Module& m) {
    m.setDataLayout(*layout_);
    m.setTargetTriple(triple_.str());
    if (llvm::verifyModule(m, &llvm::errs())) return absl::InternalError("generated LLVM IR does not verify");
    optimize(m);
    return absl::OkStatus();
  }

  // Called with mu_ held.
  absl::StatusOr<std::string> emit(llvm::Module& m, llvm::CodeGenFileType type) {
    llvm::SmallVector<char, 0> buffer;
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager pm;
    if (tm_->addPassesToEmitFile(pm, os, nullptr, type))
      return absl::InternalError("LLVM target machine cannot emit this file type");
    pm.run(m);
    return std::string(buffer.data(), buffer.size());
  }

  // Called with mu_ held. Each kernel gets its own JITDylib: a kernel loaded a second time (after
  // KernelCache::clear) is no duplicate definition. Library symbols come from the main JITDylib.
  absl::Status link(const std::string& name, const std::string& object, bool split, CompiledKernel* out) {
    auto jd = jit_->createJITDylib("lf_kernel_" + std::to_string(dylibs_++));
    if (!jd) return absl::InternalError("LLJIT createJITDylib: " + to_string(jd.takeError()));
    jd->addToLinkOrder(jit_->getMainJITDylib());
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(object, name);
    if (auto err = jit_->addObjectFile(*jd, std::move(buffer)))
      return absl::InternalError("LLJIT addObjectFile: " + to_string(std::move(err)));
    auto find = [&](const std::string& symbol) -> absl::StatusOr<llvm::orc::ExecutorAddr> {
      auto sym = jit_->lookup(*jd, symbol);
      if (!sym) return absl::InternalError("LLJIT lookup " + symbol + ": " + to_string(sym.takeError()));
      return *sym;
    };
    auto fn = find(name);
    if (!fn.ok()) return fn.status();
    out->fn = fn->toPtr<KernelFn>();
    if (!split) return absl::OkStatus();
    auto part = find(name + "_part");
    auto comb = find(name + "_comb");
    auto fin = find(name + "_fin");
    for (auto* st : {&part, &comb, &fin})
      if (!st->ok()) return st->status();
    out->part = part->toPtr<PartFn>();
    out->combine = comb->toPtr<CombineFn>();
    out->finish = fin->toPtr<FinishFn>();
    return absl::OkStatus();
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
  }

  std::mutex mu_;
  uint64_t dylibs_ = 0;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::unique_ptr<llvm::TargetMachine> tm_;
  std::optional<llvm::DataLayout> layout_;
  llvm::Triple triple_;
  std::string init_error_;
  std::string target_id_ = "llvm-unavailable";
  bool has_libmvec_ = false;
  std::vector<std::string> names_;
  std::vector<unsigned> vec_lanes_;
  std::vector<llvm::VecDesc> vecs_;
};

}  // namespace

std::string emit_ir(const kir::Kernel& kernel, const std::string& name) {
  llvm::LLVMContext ctx;
  auto m = emit_module(kernel, name, ctx);
  std::string s;
  llvm::raw_string_ostream os(s);
  m->print(os, nullptr);
  return s;
}

absl::StatusOr<std::shared_ptr<CompiledKernel>> compile(const kir::Kernel& kernel, const std::string& name) {
  auto start = std::chrono::steady_clock::now();
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m;
  try {
    m = emit_module(kernel, name, *ctx);
  } catch (const std::exception& e) {
    return absl::InternalError(e.what());
  }
  auto out = std::make_shared<CompiledKernel>();
  out->name = name;
  {
    llvm::raw_string_ostream os(out->source);
    m->print(os, nullptr);
  }
  if (auto st = Jit::get().add(std::move(m), name, split_info(kernel).splittable, &out->binary, out.get()); !st.ok())
    return st;
  out->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

absl::StatusOr<std::shared_ptr<CompiledKernel>> load(const std::string& name, const std::string& object,
                                                     const kir::Kernel& kernel) {
  auto out = std::make_shared<CompiledKernel>();
  out->name = name;
  if (auto st = Jit::get().add_object(name, object, split_info(kernel).splittable, out.get()); !st.ok()) return st;
  return out;
}

absl::StatusOr<Inspection> inspect(const kir::Kernel& kernel, const std::string& name) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m;
  try {
    m = emit_module(kernel, name, *ctx);
  } catch (const std::exception& e) {
    return absl::InternalError(e.what());
  }
  return Jit::get().inspect(std::move(m));
}

const std::string& target_id() { return Jit::get().target_id(); }

namespace {

// Reduces every row in chunks of its outermost reduced dim, `chunks` per row (a function of the
// sizes only), one parallel pass per reduction level, then combines each row's chunks in order.
void launch_split(const CompiledKernel& k, const kir::Kernel& kernel, const int64_t* m, void* const* p, int64_t rows,
                  int64_t len, int64_t chunks) {
  SplitInfo info = split_info(kernel);
  const int64_t slot_bytes = 16 * int64_t{info.reductions};
  std::vector<std::byte> state(static_cast<size_t>(rows * slot_bytes));
  std::vector<std::byte> parts(static_cast<size_t>(rows * chunks * slot_bytes));
  for (int level = 0; level < info.levels; ++level) {
    rt::parallel_for(rows * chunks, [&](int64_t c) {
      int64_t r = c / chunks, j = c % chunks;
      k.part(m, p, r, len * j / chunks, len * (j + 1) / chunks, level, state.data() + r * slot_bytes,
             parts.data() + c * slot_bytes);
    });
    for (int64_t r = 0; r < rows; ++r)
      k.combine(level, parts.data() + r * chunks * slot_bytes, chunks, state.data() + r * slot_bytes);
  }
  for (int64_t r = 0; r < rows; ++r) k.finish(m, p, r, state.data() + r * slot_bytes);
}

}  // namespace

void launch(const CompiledKernel& compiled, const kir::Kernel& kernel, const kir::LaunchArgs& args) {
  std::vector<int64_t> meta = kir::pack_meta(kernel, args);
  int64_t rows = args.rows();
  int64_t cols = args.sizes[static_cast<size_t>(args.outer_rank)];  // the first inner dim
  int64_t inner = args.inner_numel();
  if (rows == 0) return;
  if (!kernel.row && inner == 0) return;
  const int64_t* m = meta.data();
  void* const* p = args.pointers.data();
  if (kernel.row && compiled.part && inner >= kSplitMinElements && cols > 1) {
    int64_t chunks = std::min(cols, (inner + kSplitGrain - 1) / kSplitGrain);
    return launch_split(compiled, kernel, m, p, rows, cols, chunks);
  }
  // Chunks of at least kGrain elements, a few per thread for balance.
  constexpr int64_t kGrain = 1 << 15;
  int64_t threads = rt::num_cpu_threads();
  int64_t work = rows * std::max<int64_t>(inner, 1);
  int64_t chunks = std::clamp<int64_t>(work / kGrain, 1, threads * 4);
  KernelFn fn = compiled.fn;
  if (kernel.row || rows >= chunks) {
    chunks = std::min(chunks, rows);
    rt::parallel_for(chunks, [&](int64_t c) {
      int64_t r0 = rows * c / chunks, r1 = rows * (c + 1) / chunks;
      fn(m, p, r0, r1, 0, cols);
    });
    return;
  }
  // Few long rows (a pointwise kernel over contiguous data is one row): split the columns.
  int64_t per_row = (chunks + rows - 1) / rows;
  rt::parallel_for(rows * per_row, [&](int64_t c) {
    int64_t r = c / per_row, k = c % per_row;
    int64_t c0 = cols * k / per_row, c1 = cols * (k + 1) / per_row;
    fn(m, p, r, r + 1, c0, c1);
  });
}

}  // namespace lf::cpu
