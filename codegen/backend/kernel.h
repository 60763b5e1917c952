// A fusion group's kernel through the backend interface: lowered, specialized for its device,
// found in (or added to) the kernel cache, launched, its outputs handed to their nodes. The
// executor runs fused groups with it, and backends' library calls (Backend::matmul) their
// epilogues.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/backend/backend.h"
#include "codegen/cache/kernel_cache.h"
#include "codegen/fuse/fuser.h"
#include "codegen/fuse/lower.h"
#include "codegen/ir/conv.h"
#include "codegen/ir/node.h"
#include "codegen/kir/gemm_problem.h"
#include "codegen/reference/reference.h"
#include "lazyfuse/runtime.h"

namespace lf::backend {

struct RunOptions {
  bool fusion = true;
  int log_level = 0;  // LAZYFUSE_LOG
  // With log_level 0: still log a kernel that misses the cache (a repeated flush's quiet log).
  bool log_misses = false;
};

// One group of a flush as it runs: the group in its partition, the flush's options and counters.
struct GroupRun {
  const fuse::Group& group;
  const fuse::Partition& partition;
  int index;  // the group's number in the flush (logs)
  const RunOptions& options;
  CacheStats& stats;
};

// A kernel ready to launch. `entry->kernel` is null when it failed to compile (reported once):
// run_fallback() then computes its outputs on the reference executor.
struct Prepared {
  lower::Lowered low;
  Device device;
  const Backend* backend = nullptr;
  Specialized spec;
  std::string name;  // kernel_name(spec.key): the name in logs, dumps, profiles, traces and lazyfuse-cache
  std::shared_ptr<const cache::Entry> entry;

  Launch as_launch() const { return {entry->kernel.get(), &low.kernel, &low.args, spec.variant.get()}; }
};

struct PrepareOptions {
  // A pointwise kernel keeps its last two dims (a matmul epilogue's rows are the product's rows).
  bool keep_last_dim = false;
  // The address standing for a matmul's product among the group's inputs, when a generated
  // matmul kernel computes it in registers (Backend::specialize's product_operand).
  const void* product = nullptr;
  // Where the outputs go instead of fresh buffers (cat's slabs; lower.h).
  const std::vector<lower::OutputPlacement>* placement = nullptr;
};

// "lf_" + the 16 hex digits of the key's hash, which also names its persistent cache entry
// (<hash>.lfk): `lazyfuse-cache show lf_<hash>` finds it.
std::string kernel_name(const std::string& key);

// One launch timed for the profile and the trace (runtime/profile.h); launch() and flush-plan
// replays call it only while either is on.
void launch_observed(const Backend& backend, const Launch& l, Device device, const std::string& name, uint64_t bytes);
// `s` as a JSON string literal (trace arguments).
std::string json_quote(const std::string& s);

// Lowers `group` (run.group, or a part of it such as a matmul's epilogue) and looks its kernel up,
// compiling it on first sight; counts and logs the lookup.
Prepared prepare(const GroupRun& run, const fuse::Group& group, const PrepareOptions& options = {});

void launch(const Prepared& k, CacheStats& stats);
// Hands the kernel's freshly written buffers to their nodes.
void materialize_outputs(const Prepared& k);
// `in` copied into a fresh contiguous buffer on its device by a generated copy kernel, launched
// now (a library call's operand in the layout it needs); null when that kernel did not compile.
std::shared_ptr<rt::Storage> copy_contiguous(const GroupRun& run, const ir::NodePtr& in);
// The outputs of a kernel that failed to compile, computed by the reference executor.
void run_fallback(const Prepared& k);

// Makes `n` a realized buffer.
void materialize(ir::Node& n, std::shared_ptr<rt::Storage> storage, ir::Layout layout);
// Stores a host value computed by the reference executor into `n`, on n's device.
void materialize_value(ir::Node& n, const ir::Value& v);

// A library call (matmul, conv2d, pool2d) as a flush plan records it (exec/flush_plan.h): the
// buffers it handed to nodes, every address it used, and the call again over other buffers of the
// same sizes and layouts, without lowering, lookups or logging. A call that cannot be replayed so
// (an operand computed on the host, a scratch copy, a kernel that failed to compile) leaves
// `replay` null, and the flush is not recorded.
struct RecordedCall {
  // The buffers the call allocated and handed to nodes, in allocation order.
  std::vector<std::pair<ir::Node*, std::shared_ptr<rt::Storage>>> outputs;
  // Per output, its strides where they are not contiguous (an NHWC convolution's, a channels-last
  // epilogue's); missing or empty: contiguous. Taken when the output is made: a node may be freed
  // before the plan is stored (an intermediate whose last reader ran).
  std::vector<Shape> out_strides;
  void set_strides(size_t output, Shape strides) {
    if (out_strides.size() <= output) out_strides.resize(output + 1);
    out_strides[output] = std::move(strides);
  }
  // Every address replay() takes, in its order: base addresses (Storage::data()) of the call's
  // inputs and outputs; null for an operand with no memory (an Index operand).
  std::vector<const void*> addresses;
  // The call over new addresses (as many as `addresses`, in its order); on the flushing thread.
  std::function<void(void* const* addresses)> replay;
  // Where the call finds data-dependent errors on the device (a scatter's index out of range): run
  // after a replay's launches, on the flushing thread (the flush is the sync point, as outside
  // plans). It throws the error; empty when there is nothing to check.
  std::function<void()> check;

  // Adds a kernel's outputs (after the call's own) and its operands' addresses.
  void add_outputs(const Prepared& k);
  void add_operands(const Prepared& k);
};

// A kernel launched again by a replayed library call with new operand pointers.
struct KernelReplay {
  std::shared_ptr<const cache::Entry> entry;  // keeps the compiled kernel
  kir::Kernel kernel;
  kir::LaunchArgs args;
  std::shared_ptr<const Variant> variant;
  Device device;
  const Backend* backend = nullptr;
  uint64_t bytes = 0;  // for the profile, as the recorded launch's

  explicit KernelReplay(const Prepared& k);
  // Sets the operand pointers from `pointers` (one per operand); launch() then runs it.
  void bind(void* const* pointers);
  void launch() const;
};

// A matmul group handed to its backend: the product (operands resolved to storage and strides on
// the group's device) and the group, whose other members are the elementwise epilogue.
struct MatmulCall {
  GroupRun run;
  kir::GemmProblem problem;  // c unset: the backend allocates the output
  std::shared_ptr<rt::Storage> a, b;  // the operands' storage, kept alive for the call
  size_t c_bytes = 0;        // the product's size
  uint64_t gemm_bytes = 0;   // bytes a GEMM moves at least (operands read, product written)
  RecordedCall* record = nullptr;  // set while a flush plan is recorded: the backend fills it

  ir::Node* product() const { return run.group.nodes[0]; }
  bool has_epilogue() const { return run.group.nodes.size() > 1; }
  // The epilogue as a pointwise group of its own: every member but the matmul, reading the
  // product as an input.
  fuse::Group epilogue_group() const;
  // LAZYFUSE_LOG=1: "group 3: matmul 64x64x64 float32: <how>".
  void log(const std::string& how) const;
};

// A library call's group minus its anchor (matmul, conv2d): the elementwise epilogue as a pointwise
// group of its own, reading the anchor's result as an input.
fuse::Group epilogue_of(const fuse::Group& group);

// A conv2d group handed to its backend: the input and weights resolved to storage and strides on
// the group's device, the geometry, and the group, whose other members are the epilogue.
struct ConvCall {
  GroupRun run;
  DType dtype = DType::Float32;
  int64_t batch = 0, channels = 0, height = 0, width = 0;  // x: [N, C, H, W]
  int64_t out_channels = 0, kernel_h = 0, kernel_w = 0;   // w: [O, C / groups, kh, kw]
  int64_t out_h = 0, out_w = 0;
  ir::ConvParams params;
  kir::GemmOperand x;  // strides over [N, C, H, W], any
  kir::GemmOperand w;  // contiguous OIHW (offset allowed), or KRSC where w_krsc
  std::shared_ptr<rt::Storage> x_storage, w_storage;  // kept alive for the call
  size_t y_bytes = 0;    // the output's size
  uint64_t bytes = 0;    // bytes a convolution moves at least (x and w read, y written)
  RecordedCall* record = nullptr;  // as MatmulCall's
  // The filter is stored KRSC (channels-last strides over OIHW): on a GPU only, where the
  // batch-norm fold computes it so for cuDNN's NHWC calls (fuse/conv_fold.cpp).
  bool w_krsc = false;
  // cuDNN's layout: -1 as LAZYFUSE_CONV_NHWC says (NCHW where NHWC is declined); 0 NCHW, 1 NHWC:
  // a flush plan's replay runs the layout it recorded, whatever the configuration is by then.
  int nhwc = -1;

  ir::Node* product() const { return run.group.nodes[0]; }
  bool has_epilogue() const { return run.group.nodes.size() > 1; }
  fuse::Group epilogue_group() const { return epilogue_of(run.group); }
  // The GEMM sizes of one image and group: m = O / groups, n = OH * OW, k = C / groups * kh * kw.
  int64_t gemm_m() const { return out_channels / params.groups; }
  int64_t gemm_n() const { return out_h * out_w; }
  int64_t gemm_k() const { return channels / params.groups * kernel_h * kernel_w; }
  // LAZYFUSE_LOG=1: "group 3: conv2d [8, 32, 56, 56] * [64, 32, 3, 3] float32: <how>".
  void log(const std::string& how) const;
};

// The convolution computed by the reference executor on the host and copied to the group's
// device, then the epilogue as a kernel of its own: the path of a backend without a convolution
// of its own. Logs `why`.
void run_conv_on_reference(ConvCall& call, const std::string& why);

// A pool2d group handed to its backend: the input resolved to storage and strides on the group's
// device; the node has the geometry (ir::PoolParams) and the output shape.
struct PoolCall {
  GroupRun run;
  kir::GemmOperand x;  // strides over [N, C, H, W], any
  std::shared_ptr<rt::Storage> x_storage;
  Shape in_shape;  // x's (the node drops its inputs once materialized)
  RecordedCall* record = nullptr;  // as MatmulCall's
  ir::Node* node() const { return run.group.nodes[0]; }
  // LAZYFUSE_LOG=1: "group 2: max_pool2d [8, 64, 56, 56] -> [8, 64, 28, 28] float32: <how>".
  void log(const std::string& how) const;
};

// The pooling computed by the reference executor (on the host, copied to the group's device).
void run_pool_on_reference(PoolCall& call, const std::string& why);

// A nearest group (ir::Op::Nearest, made by fuse/nearest.h) handed to its backend: x [N, D] and the
// centers c [K, D] resolved to storage and strides on the group's device; the backend writes the
// Int64 indices (the node's shape: [N] or [N, 1]) contiguous and materializes the node.
struct NearestCall {
  GroupRun run;
  DType dtype = DType::Float32;  // x's and c's
  int64_t n = 0, k = 0, d = 0;
  kir::GemmOperand x, c;  // strides over [N, D] and [K, D], any
  std::shared_ptr<rt::Storage> x_storage, c_storage;  // kept alive for the call
  RecordedCall* record = nullptr;  // as MatmulCall's: x's, c's and the output's base addresses

  ir::Node* node() const { return run.group.nodes[0]; }
  // After the backend's computation into `out`: counts it, hands `out` to the node, records
  // `replay` (over x's, c's and out's base addresses) for a flush plan, logs `how`.
  void finish(const std::shared_ptr<rt::Storage>& out, std::function<void(void* const*)> replay, const std::string& how);
  // LAZYFUSE_LOG=1: "group 3: nearest of 1048576 rows among 64 centers of 16 float32: <how>".
  void log(const std::string& how) const;
};

// The reference executor's nearest on the host, copied to the group's device. Logs `why`.
void run_nearest_on_reference(NearestCall& call, const std::string& why);

}  // namespace lf::backend
