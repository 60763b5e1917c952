// A flush plan's replay with library calls (cuBLASLt, the generated matmul kernel) captured as one
// CUDA graph: the kernel-node graph (LaunchGraph) cannot hold a cuBLASLt call, whose kernels and
// their parameters are the library's own, so the replay's launches are captured from the stream
// instead (cuStreamBeginCapture / cuStreamEndCapture, thread-local mode: an unsafe call such as an
// allocation ends the capture in an error rather than running). cuBLASLt calls are capturable with
// their fixed workspace (gemm.cpp keeps one per device).
//
// Pointers are baked into a captured graph. The plan's replay compares its pointers with the
// capture's and captures again when one moved (exec/replay.cpp); a loop whose buffers come back to
// the same blocks each iteration (the caching allocator's usual case) captures once.
//
// Untested on a GPU so far. A capture that fails leaves nothing run and returns null (one warning
// on stderr): the replay then launches step by step, as before.
#include <cstdio>

#include "codegen/cuda/backend.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"

namespace lf::cuda {
namespace {

class CapturedGraph final : public backend::LaunchGraph {
 public:
  CapturedGraph(const rt::cu::DeviceContext& context, rt::cu::CUgraph graph, rt::cu::CUgraphExec exec)
      : context_(&context), graph_(graph), exec_(exec) {}
  ~CapturedGraph() override {
    rt::cu::drain_launches(/*rethrow=*/false);  // a queued launch of this graph goes first
    const rt::cu::Api& cu = rt::cu::api();
    cu.cuGraphExecDestroy(exec_);
    cu.cuGraphDestroy(graph_);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  bool update(size_t, const backend::Launch&) override { return false; }  // capture again
  bool launch() override { return rt::cu::launch_graph(exec_, *context_); }

 private:
  const rt::cu::DeviceContext* context_;
  rt::cu::CUgraph graph_;
  rt::cu::CUgraphExec exec_;
};

void warn_once(const std::string& why) {
  static bool warned = false;
  if (warned) return;
  warned = true;
  std::fprintf(stderr,
               "[lazyfuse] warning: a flush plan could not be captured as a CUDA graph (%s); such plans replay step "
               "by step (further failures are not reported)\n",
               why.c_str());
}

}  // namespace

std::unique_ptr<backend::LaunchGraph> capture_graph(const std::vector<backend::Launch>& kernels,
                                                    const std::function<void()>& run, int device) {
  if (!rt::config().cuda_graphs) return nullptr;
  const rt::cu::Api& cu = rt::cu::api();
  if (!cu.capture) return nullptr;
  for (const backend::Launch& l : kernels)
    if (needs_setup(l, device)) return nullptr;  // its scratch would be frozen into the graph
  rt::cu::DeviceContext& ctx = rt::cu::device_context(device);  // queued launches submitted first
  if (rt::cu::CUresult r = cu.cuStreamBeginCapture(ctx.stream, rt::cu::kCaptureThreadLocal); r != 0) {
    warn_once("cuStreamBeginCapture: " + rt::cu::error_text(r));
    return nullptr;
  }
  std::string failed;
  try {
    run();
  } catch (const std::exception& e) {
    failed = e.what();
  }
  rt::cu::CUgraph graph = nullptr;
  rt::cu::CUresult end = cu.cuStreamEndCapture(ctx.stream, &graph);  // ends it whatever happened
  if (failed.empty() && (end != 0 || graph == nullptr))
    failed = "cuStreamEndCapture: " + (end != 0 ? rt::cu::error_text(end) : std::string("no graph"));
  rt::cu::CUgraphExec exec = nullptr;
  if (failed.empty())
    if (rt::cu::CUresult r = cu.cuGraphInstantiateWithFlags(&exec, graph, 0); r != 0)
      failed = "cuGraphInstantiateWithFlags: " + rt::cu::error_text(r);
  if (!failed.empty()) {
    if (graph) cu.cuGraphDestroy(graph);
    warn_once(failed);
    return nullptr;
  }
  return std::make_unique<CapturedGraph>(ctx, graph, exec);
}

}  // namespace lf::cuda
