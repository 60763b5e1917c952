// The interface every backend implements, one folder each (codegen/cpu, codegen/cuda), and the one
// function that maps a Device to its backend (registry.cpp, the only file that names them all).
// The executor, flush plans and the kernel cache speak to backends through this alone; a third
// backend is a new folder plus one line in the registry.
//
// A kernel's life through a backend: specialize() picks the code-shaping choices for the launch at
// hand and names them in the cache key; build() generates and compiles (touching no device, so a
// background thread may run it); install() loads a build onto its device; load() turns a stored
// binary back into a kernel; launch() runs it; graph() records launches for replay; source()
// regenerates the code for dumps and failure reports. Library calls (matmul, convolution, scan,
// scatter; attention and sort later) run whole groups (backend/kernel.h has what they share).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codegen/backend/compiled.h"
#include "codegen/fuse/fuser.h"
#include "codegen/ir/node.h"
#include "codegen/kir/kernel_ir.h"
#include "lazyfuse/types.h"
#include "runtime/profile.h"
#include "runtime/status.h"

namespace lf::backend {

struct MatmulCall;
struct ConvCall;
struct PoolCall;
struct SortCall;
struct AttentionCall;
struct ScanCall;     // scan_scatter.h
struct ScatterCall;  // scan_scatter.h
struct NearestCall;  // kernel.h
struct LinalgCall;   // linalg_call.h

// A backend's code-shaping choices for one kernel at one launch, beyond the kernel IR (CUDA: index
// width, vector access, rows in registers; CPU: streaming stores). The cache key names them, so
// equal keys mean equal variants; opaque above the backend.
struct Variant {
  virtual ~Variant() = default;
  // The choices by name, e.g. {{"vec4", "on"}, {"index", "32-bit"}}: what a recompile's
  // explanation (explain.h) compares.
  virtual std::vector<std::pair<std::string, std::string>> describe() const { return {}; }
};

// A kernel specialized for a launch: its full cache key ("<backend>|<generator fingerprint>|
// <target>|<variant>|<kernel IR>") and the variant the key names.
struct Specialized {
  std::string key;
  std::shared_ptr<const Variant> variant;
};

// One launch of a compiled kernel.
struct Launch {
  const CompiledKernel* compiled = nullptr;
  const kir::Kernel* kernel = nullptr;
  const kir::LaunchArgs* args = nullptr;
  const Variant* variant = nullptr;
};

// A fixed sequence of launches on one device, replayed many times (a flush plan's); only the
// operands' pointers and the launch parameters (numbers) may change between replays.
class LaunchGraph {
 public:
  virtual ~LaunchGraph() = default;
  // Launch i's operand pointers and parameters for the next replay (`launch`: the kernel and
  // variant it was built with). False when the backend refused the change: launch one by one
  // instead.
  virtual bool update(size_t i, const Launch& launch) = 0;
  // Launches them all; true when handed to a launch thread (CacheStats::queued_launches).
  virtual bool launch() = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;           // "cpu", "cuda": the cache key's first field
  virtual const char* source_suffix() const = 0;  // ".ll", ".cu": dumps and failure reports
  virtual const char* comment_prefix() const = 0;  // ";", "//": header lines of a dumped source

  // The variant of `kernel` for these launch arguments, and its key. `product_operand` >= 0: the
  // kernel is a matmul epilogue whose input operand `product_operand` is the product, computed in
  // the same kernel (backends with a generated matmul kernel: cuda/matmul.cpp).
  virtual Specialized specialize(const kir::Kernel& kernel, const kir::LaunchArgs& args, Device device,
                                 int product_operand = -1) const = 0;

  // Whether the variant specialize() picks for `kernel` may depend on the value of launch
  // parameter `param`; then a flush plan that patches a new number into it asks same_variant()
  // before it replays (flush_plan.h). None do by default.
  virtual bool specializes_on_param(const kir::Kernel& kernel, int param) const { return false; }
  // Whether specialize() would still pick `variant` for `kernel` at `args`.
  virtual bool same_variant(const kir::Kernel& kernel, const kir::LaunchArgs& args, const Variant& variant,
                            Device device) const {
    return true;
  }

  // The fuser's cost rule for `device` (fuse::Costs: the row count at which row kernels that run a
  // row on one processor leave it idle, when a scan fuses).
  virtual fuse::Costs fuse_costs(Device device) const { return {}; }

  // Generates and compiles. Touches no device: the kernel cache's background thread runs it for
  // tiered compiling. `quick`: a quick build (CompiledKernel::quick says whether it is one).
  virtual lf::StatusOr<std::shared_ptr<CompiledKernel>> build(const kir::Kernel& kernel, const std::string& name,
                                                              const Variant& variant, bool quick) const = 0;
  // Makes a build launchable on `device` (loads a module); on the flushing thread.
  virtual lf::Status install(CompiledKernel& built, Device device) const { return lf::OkStatus(); }
  // Whether a new kernel starts as a quick build, its optimized build following (tiered compiling).
  virtual bool tiered() const { return false; }
  // Whether a build that finds no compiler at all (kUnavailable) is an error to throw rather than
  // a kernel to run unfused on the reference executor.
  virtual bool needs_compiler() const { return false; }

  // A kernel build() produced earlier (CompiledKernel::binary, from the persistent cache).
  virtual lf::StatusOr<std::shared_ptr<CompiledKernel>> load(const std::string& name, const std::string& binary,
                                                             const kir::Kernel& kernel, const Variant& variant,
                                                             Device device) const = 0;
  // The generated source build() compiles (dumps, the source of a kernel that failed to compile).
  virtual std::string source(const kir::Kernel& kernel, const std::string& name, const Variant& variant) const = 0;

  virtual void launch(const Launch& launch, Device device) const = 0;
  // Profiling (runtime/profile.h): a device-side timer started just before a launch on `device`,
  // for backends whose launches return before the kernel has run. Null (the default): launches are
  // synchronous and the host clock times them.
  virtual std::unique_ptr<rt::obs::DeviceTimer> start_timer(Device device) const { return nullptr; }
  // The launches as one replayable graph; null where the backend has none for them.
  virtual std::unique_ptr<LaunchGraph> graph(const std::vector<Launch>& launches, Device device) const {
    return nullptr;
  }

  // `run` (a flush plan's replay: kernel launches and library calls on `device`, nothing else)
  // captured as one graph and not run; launch() runs it whole, and update() refuses every
  // change (the caller captures again). `kernels`: the kernel launches among them, for the backend
  // to check. Null where the backend has no capture, declines, or the capture failed.
  virtual std::unique_ptr<LaunchGraph> capture(const std::vector<Launch>& kernels, const std::function<void()>& run,
                                               Device device) const {
    return nullptr;
  }

  // Library calls: each runs a whole group, its elementwise epilogue included.
  virtual void matmul(MatmulCall& call) const = 0;
  // A conv2d group: the convolution and its epilogue (bias, inference batch norm, relu, residual).
  virtual void conv(ConvCall& call) const = 0;
  // Whether `conv`'s call applies a per-channel scale after the convolution in float32 (the
  // batch-norm fold then leaves the scale out of a 16-bit filter: conv_fold.h).
  virtual bool conv_scale_in_epilogue(const ir::Node& conv) const { return false; }
  // Whether conv() takes a filter stored channels-last (KRSC strides) as it is; else exec makes
  // it contiguous (OIHW) first.
  virtual bool conv_takes_krsc_filters() const { return false; }
  // Whether convolution `conv`'s call will read its filter as KRSC (a filter the batch-norm fold
  // writes is then written KRSC: conv_fold.h).
  virtual bool conv_reads_krsc_filter(const ir::Node& conv) const { return false; }
  // Whether scatter() computes a pending zeros() self and a pending full() src itself (a clear,
  // a constant of its kernel), where exec would otherwise compute them on the host as operands.
  virtual bool scatter_takes_constants() const { return false; }
  // A pool2d group (max, average, adaptive average over windows): the pooling alone.
  virtual void pool(PoolCall& call) const = 0;
  // An argsort or topk group: stable sorted positions along one dim (backend/sort_call.h).
  virtual void sort(SortCall& call) const = 0;
  // An attention group: softmax(q @ k^T * s + mask) @ v without storing the scores (attention.h).
  virtual void attention(AttentionCall& call) const = 0;
  // A cumulative op along one dim (cumsum, cumprod): its output, fresh and contiguous.
  virtual void scan(ScanCall& call) const = 0;
  // scatter_add (index_add, bincount): a copy of self plus src added at the indices; an index out
  // of range is an lf::Error from here (the group's sync point).
  virtual void scatter(ScatterCall& call) const = 0;
  // k-means' assignment, argmin over k of |x[n] - c[k]|^2 (ir::Op::Nearest).
  virtual void nearest(NearestCall& call) const = 0;
  // A linear-algebra group (ir::Op::Linalg): a factorization or solve into the call's host output
  // (linalg_call.h); a failure the node checks is an lf::Error from here (the sync point).
  virtual void linalg(LinalgCall& call) const = 0;
};

// The backend of `device`'s kind.
const Backend& backend_for(Device device);

}  // namespace lf::backend
