// Sync points: the trace of pending nodes and realize(), which hands pending work to an executor.
#include "frontend/trace.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>


#include "codegen/exec/executor.h"
#include "frontend/stats.h"
#include "lazyfuse/runtime.h"
#include "runtime/config.h"

namespace lf::detail {
namespace {

struct Trace {
  static constexpr size_t kMinPrune = 256;
  std::vector<std::weak_ptr<ir::Node>> pending;
  std::vector<std::weak_ptr<ir::Node>> next_sync_roots;  // compute_at_next_sync's
  size_t prune_at = kMinPrune;  // the list's size that triggers the next pruning
  bool flushing = false;
};

Trace& this_thread_trace() {
  thread_local Trace trace;
  return trace;
}

// Roots of a full sync: pending nodes that a user handle still holds, into `live`.
void live_pending(Trace& trace, std::vector<ir::NodePtr>* live) {
  for (auto& w : trace.pending) {
    ir::NodePtr n = w.lock();
    if (n && !n->realized() && n->user_refs.load(std::memory_order_relaxed) > 0) live->push_back(std::move(n));
  }
}

}  // namespace

void trace_append(const ir::NodePtr& node) {
  Trace& trace = this_thread_trace();
  trace.pending.push_back(node);
  if (trace.pending.size() < trace.prune_at || trace.flushing) return;
  // Reads realize values without clearing the list, and most recorded nodes die young (dropped
  // intermediates): drop what is no longer pending. A dead node's memory stays allocated while
  // the list refers to it, so prune early (every kMinPrune nodes while the trace is short) and,
  // to stay amortized O(1) per op, next when the list has doubled.
  const size_t before = trace.pending.size();
  const size_t limit = static_cast<size_t>(rt::config().trace_limit);
  if (before < limit) {
    // Early: drop the dead only (no atomic read-modify-write per entry, as lock() would do).
    std::erase_if(trace.pending, [](const std::weak_ptr<ir::Node>& w) { return w.expired(); });
  } else {
    std::erase_if(trace.pending, [](const std::weak_ptr<ir::Node>& w) {
      ir::NodePtr n = w.lock();
      return !n || n->realized();
    });
  }
  trace.prune_at = std::min(limit, std::max(Trace::kMinPrune, 2 * trace.pending.size()));
  // Flush when the trace reached its limit, unless pruning freed half of it.
  if (before >= limit && trace.pending.size() >= limit / 2) {
    if (rt::config().log_level >= 1) std::fprintf(stderr, "[lazyfuse] flush: trace reached %zu nodes\n", trace.pending.size());
    lf::sync();
  }
}

void compute_at_next_sync(const ir::NodePtr& node) { this_thread_trace().next_sync_roots.push_back(node); }

void realize(const std::vector<ir::Node*>& requested) {
  // The roots compute_at_next_sync left join this sync's (held ones still pending).
  Trace& trace = this_thread_trace();
  thread_local std::vector<ir::NodePtr> extra_held;
  thread_local std::vector<ir::Node*> with_extra;
  const std::vector<ir::Node*>* rp = &requested;
  if (!trace.next_sync_roots.empty()) {
    extra_held.clear();
    for (auto& w : trace.next_sync_roots) {
      ir::NodePtr n = w.lock();
      if (n && !n->realized() && n->user_refs.load(std::memory_order_relaxed) > 0) extra_held.push_back(std::move(n));
    }
    trace.next_sync_roots.clear();
    if (!extra_held.empty()) {
      with_extra.assign(requested.begin(), requested.end());
      for (const ir::NodePtr& n : extra_held) with_extra.push_back(n.get());
      rp = &with_extra;
    }
  }
  // A complex tensor's values are its pairs' (frontend/complex.h).
  thread_local std::vector<ir::Node*> paired;
  if (std::any_of(rp->begin(), rp->end(), [](const ir::Node* n) { return n->op == ir::Op::ComplexView; })) {
    paired.clear();
    for (ir::Node* n : *rp) paired.push_back(n->op == ir::Op::ComplexView ? n->inputs[0].get() : n);
    rp = &paired;
  }
  const std::vector<ir::Node*>& roots = *rp;
  // Wanted: held by a user, or a root. Roots are usually held (a sync's are, by definition), and
  // then the root set is not needed.
  thread_local ir::NodeIndex root_set;  // keeps its memory from flush to flush
  bool all_held = true;
  for (const ir::Node* r : roots) all_held &= r->user_refs.load(std::memory_order_relaxed) > 0;
  if (!all_held) {
    root_set.reset(roots.size());
    for (const ir::Node* r : roots) root_set.insert(r, 1);
  }
  auto wanted = [&](const ir::Node& n) {
    return n.user_refs.load(std::memory_order_relaxed) > 0 || (!all_held && root_set.find(&n) >= 0);
  };
  exec::Options options;
  options.fusion = rt::config().fusion;
  options.log_level = rt::config().log_level;
  // One flush at a time in the process: the caches and counters are shared.
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  struct Release {  // the extra roots' handles, on return and on a throw
    ~Release() {
      extra_held.clear();
      with_extra.clear();
    }
  } release;
  exec::run(roots, wanted, options, stats());
}

}  // namespace lf::detail

namespace lf {

void sync() {
  detail::Trace& trace = detail::this_thread_trace();
  if (trace.flushing) return;
  trace.flushing = true;
  // Kept from sync to sync (their memory; not their contents): a sync allocates nothing here.
  thread_local std::vector<ir::NodePtr> live;
  thread_local std::vector<ir::Node*> roots;
  struct Done {  // on return and on a throw
    detail::Trace& trace;
    ~Done() {
      live.clear();
      roots.clear();
      trace.flushing = false;
    }
  } done{trace};
  detail::live_pending(trace, &live);
  for (auto& n : live) roots.push_back(n.get());
  detail::realize(roots);
  trace.pending.clear();
  trace.prune_at = detail::Trace::kMinPrune;
}

}  // namespace lf
