// Sync points: the trace of pending nodes and realize(), which hands pending work to an executor.
#include "frontend/trace.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>

#include "codegen/reference.h"
#include "frontend/stats.h"
#include "lazyfuse/runtime.h"
#include "runtime/config.h"

namespace lf::detail {
namespace {

struct Trace {
  std::vector<std::weak_ptr<ir::Node>> pending;
  bool flushing = false;
};

Trace& this_thread_trace() {
  thread_local Trace trace;
  return trace;
}

// Roots of a full sync: pending nodes that a user handle still holds.
std::vector<ir::NodePtr> live_pending(Trace& trace) {
  std::vector<ir::NodePtr> live;
  for (auto& w : trace.pending) {
    ir::NodePtr n = w.lock();
    if (n && !n->realized() && n->user_refs.load(std::memory_order_relaxed) > 0) live.push_back(std::move(n));
  }
  return live;
}

}  // namespace

void trace_append(const ir::NodePtr& node) {
  Trace& trace = this_thread_trace();
  trace.pending.push_back(node);
  if (static_cast<int64_t>(trace.pending.size()) >= rt::config().trace_limit && !trace.flushing) {
    if (rt::config().log_level >= 1) std::fprintf(stderr, "[lazyfuse] flush: trace reached %zu nodes\n", trace.pending.size());
    lf::sync();
  }
}

void realize(const std::vector<ir::Node*>& roots) {
  std::vector<ir::Node*> order = ir::topo_order(roots);
  if (order.empty()) return;
  auto start = std::chrono::steady_clock::now();
  std::vector<std::pair<ir::Node*, ir::Value>> results;
  auto wanted = [&](const ir::Node& n) {
    if (n.user_refs.load(std::memory_order_relaxed) > 0) return true;
    for (ir::Node* r : roots)
      if (r == &n) return true;
    return false;
  };
  ir::run_reference(order, wanted, [&](ir::Node& n, ir::Value v) { results.emplace_back(&n, std::move(v)); });
  // Materialize only after the run: clearing inputs earlier could free nodes still being read.
  for (auto& [node, value] : results) {
    node->storage = std::move(value.storage);
    node->layout = std::move(value.layout);
    node->op = ir::Op::Buffer;
    node->inputs.clear();
  }
  Stats& s = stats();
  s.flushes += 1;
  s.nodes_executed += order.size();
  if (rt::config().log_level >= 1) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "[lazyfuse] flush: %zu nodes, %zu materialized, reference executor, %.3f ms\n", order.size(),
                 results.size(), ms);
  }
}

}  // namespace lf::detail

namespace lf {

void sync() {
  detail::Trace& trace = detail::this_thread_trace();
  if (trace.flushing) return;
  trace.flushing = true;
  try {
    std::vector<ir::NodePtr> live = detail::live_pending(trace);
    std::vector<ir::Node*> roots;
    roots.reserve(live.size());
    for (auto& n : live) roots.push_back(n.get());
    detail::realize(roots);
  } catch (...) {
    trace.flushing = false;
    throw;
  }
  trace.pending.clear();
  trace.flushing = false;
}

}  // namespace lf
