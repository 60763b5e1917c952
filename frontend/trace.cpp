// Sync points: the trace of pending nodes and realize(), which hands pending work to an executor.
#include "frontend/trace.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>

#include <unordered_set>

#include "codegen/executor.h"
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
  int64_t limit = rt::config().trace_limit;
  if (static_cast<int64_t>(trace.pending.size()) < limit || trace.flushing) return;
  // Reads realize values without clearing the list: count only what is still pending. Flushing
  // unless pruning freed half the list keeps this amortized O(1) per op.
  std::erase_if(trace.pending, [](const std::weak_ptr<ir::Node>& w) {
    ir::NodePtr n = w.lock();
    return !n || n->realized();
  });
  if (static_cast<int64_t>(trace.pending.size()) >= limit / 2) {
    if (rt::config().log_level >= 1) std::fprintf(stderr, "[lazyfuse] flush: trace reached %zu nodes\n", trace.pending.size());
    lf::sync();
  }
}

void realize(const std::vector<ir::Node*>& roots) {
  std::unordered_set<const ir::Node*> root_set(roots.begin(), roots.end());
  auto wanted = [&](const ir::Node& n) {
    return n.user_refs.load(std::memory_order_relaxed) > 0 || root_set.count(&n) > 0;
  };
  exec::Options options;
  options.fusion = rt::config().fusion;
  options.log_level = rt::config().log_level;
  // One flush at a time in the process: the caches and counters are shared.
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  exec::run(roots, wanted, options, stats());
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
