#include "codegen/exec/executor.h"

#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>

#include "codegen/exec/flush_plan.h"
#include "codegen/exec/groups.h"
#include "codegen/exec/replay.h"
#include "codegen/fuse/fuser.h"
#include "codegen/reference/reference.h"
#include "runtime/config.h"

namespace lf::exec {
namespace {

void run_host(const fuse::Group& g) {
  for (ir::Node* n : g.nodes) {
    std::vector<ir::Value> inputs;
    for (auto& in : n->inputs) inputs.push_back(ir::reference_eval(in.get()));
    backend::materialize_value(*n, ir::reference_op(*n, inputs));
  }
}

void run_group(const backend::GroupRun& run, Recorder* rec) {
  const fuse::Group& g = run.group;
  size_t cat_inputs = g.nodes[0]->inputs.size();
  if (g.kind == fuse::Group::Kind::Host && g.nodes[0]->op == ir::Op::Cat && run_cat(run, rec)) {
    if (run.options.log_level >= 1)
      std::fprintf(stderr, "[lazyfuse]   group %d: cat of %zu inputs: copy kernels into the output's slabs\n",
                   run.index, cat_inputs);
    return;
  }
  // Fused kernels and cat's copies are replayed; anything else runs through here every time.
  if (rec && g.kind != fuse::Group::Kind::Pointwise && g.kind != fuse::Group::Kind::Row) rec->ok = false;
  if (g.kind == fuse::Group::Kind::Host && g.nodes[0]->op == ir::Op::Pool2d) return run_pool_group(run);
  if (g.kind == fuse::Group::Kind::Host) {
    ir::Op op = g.nodes[0]->op;  // before it becomes a buffer
    run_host(g);
    if (run.options.log_level >= 1)
      std::fprintf(stderr, "[lazyfuse]   group %d: %s on the host (reference executor)\n", run.index,
                   ir::op_name(op));
    return;
  }
  if (g.kind == fuse::Group::Kind::Matmul) return run_matmul_group(run);
  if (g.kind == fuse::Group::Kind::Conv) return run_conv_group(run);
  backend::Prepared k = backend::prepare(run, g);
  if (!k.entry->kernel) {
    if (rec) rec->ok = false;
    return backend::run_fallback(k);
  }
  backend::launch(k, run.stats);
  // A plan replay would skip the index check after the launch: gathers are not recorded.
  if (rec && k.low.error_storage) rec->ok = false;
  if (rec && rec->ok) rec->add(k);
  lower::check_gathers(k.low);
  backend::materialize_outputs(k);
}

void log_partition(const fuse::Partition& p, size_t nodes) {
  std::fprintf(stderr, "[lazyfuse] flush: %zu nodes -> %zu groups; cuts:", nodes, p.groups.size());
  for (size_t r = 0; r < p.cuts.size(); ++r)
    if (p.cuts[r])
      std::fprintf(stderr, " %s=%lld", fuse::cut_reason_name(static_cast<fuse::CutReason>(r)),
                   static_cast<long long>(p.cuts[r]));
  std::fprintf(stderr, "\n");
}

}  // namespace

// A flush, in order: install the optimized builds compiled since the last flush; order the
// pending nodes; replay a recorded plan if this flush's signature has one; else partition, run
// each group (recording a plan on a signature's second sighting), and store the plan.
void run(const std::vector<ir::Node*>& roots, const std::function<bool(const ir::Node&)>& wanted,
         const Options& opt, CacheStats& stats) {
  cache::global_cache().install_upgrades();
  // Kept from flush to flush (flushes do not nest: the caller holds the flush lock).
  thread_local std::vector<ir::Node*> order;
  ir::flush_order(roots, &order);
  if (order.empty()) return;
  std::chrono::steady_clock::time_point start;  // read only for the log: a clock read costs on some hosts
  if (opt.log_level >= 1) start = std::chrono::steady_clock::now();
  // Flush plans (flush_plan.h); off while logging, so that every flush shows its groups.
  static std::mutex plans_mu;
  // Never destroyed: a plan's CUDA graph must not be freed after the driver shut down at exit.
  static plan::PlanCache& plans = *new plan::PlanCache;
  static plan::Signature signature;  // reused: its buffers keep their capacity
  std::unique_lock<std::mutex> plans_lock(plans_mu, std::defer_lock);
  const plan::Signature* sig = nullptr;
  if (rt::config().flush_plans && opt.log_level == 0) {
    plans_lock.lock();
    plan::describe(order, wanted, opt.fusion, &signature);
    sig = &signature;
    if (plan::Plan* recorded = plans.find(*sig, cache::global_cache().generation()))
      return replay(*recorded, order, *sig, wanted, stats);
  }
  std::optional<Recorder> rec;
  if (sig && plans.seen_before(*sig)) {
    rec.emplace(*sig);
    rec->plan.generation = cache::global_cache().generation();
  }
  if (fuse::insert_reshape_copies(order) > 0) {
    ir::flush_order(roots, &order);
    rec.reset();  // the graph changed under the signature
  }
  materialize_held_views(order, wanted);
  std::erase_if(order, [](ir::Node* n) { return n->realized(); });
  fuse::Partition p = fuse::partition(order, wanted, opt.fusion);
  if (opt.log_level >= 1) log_partition(p, order.size());
  for (size_t i = 0; i < p.groups.size(); ++i)
    run_group({p.groups[i], p, static_cast<int>(i), opt, stats}, rec ? &*rec : nullptr);
  ++stats.flushes;
  stats.nodes_executed += order.size();
  if (rec && rec->ok && !rec->plan.steps.empty()) {
    rec->plan.nodes = order.size();
    plans.store(*sig, std::move(rec->plan));
  }
  if (opt.log_level >= 1) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "[lazyfuse] flush done in %.3f ms\n", ms);
  }
}

}  // namespace lf::exec
