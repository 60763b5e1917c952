#include "codegen/exec/executor.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "codegen/exec/flush_plan.h"
#include "codegen/exec/groups.h"
#include "codegen/exec/replay.h"
#include "codegen/fuse/attention.h"
#include "codegen/fuse/nearest.h"
#include "codegen/fuse/conv_fold.h"
#include "codegen/fuse/fuser.h"
#include "codegen/reference/reference.h"
#include "runtime/config.h"
#include "runtime/profile.h"

namespace lf::exec {
namespace {

void run_host(const fuse::Group& g) {
  for (ir::Node* n : g.nodes) {
    std::vector<ir::Value> inputs;
    for (auto& in : n->inputs) inputs.push_back(ir::reference_eval(in.get()));
    backend::materialize_value(*n, ir::reference_op(*n, inputs));
  }
}

// A library call's profile row: the op and its output's shape name it; the dtype, the inputs'
// shapes and the epilogue's op count tell calls apart; bytes are what it reads and writes.
plan::LibraryRow library_row(const fuse::Group& g) {
  const ir::Node& n = *g.nodes[0];
  plan::LibraryRow row{std::string(ir::op_name(n.op)) + shape_str(n.shape), ""};
  row.bytes = static_cast<uint64_t>(n.numel()) * dtype_size(n.dtype);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const ir::Node& in = *n.inputs[i];
    row.ops += (i ? ", " : "") + std::string(dtype_name(in.dtype)) + shape_str(in.shape);
    row.bytes += static_cast<uint64_t>(in.numel()) * dtype_size(in.dtype);
  }
  if (n.inputs.empty() || n.inputs[0]->dtype != n.dtype) row.ops += std::string(" -> ") + dtype_name(n.dtype);
  if (g.nodes.size() > 1) row.ops += " + an epilogue of " + std::to_string(g.nodes.size() - 1) + " ops";
  return row;
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
  // Library calls (matmul, conv2d, pool2d, attention, scans, scatters, sorts, nearest) are replayed as
  // their backend recorded them.
  bool pool = g.kind == fuse::Group::Kind::Host && g.nodes[0]->op == ir::Op::Pool2d;
  bool attention = g.kind == fuse::Group::Kind::Host && g.nodes[0]->op == ir::Op::Attention;
  bool scan = g.kind == fuse::Group::Kind::Host && ir::is_scan(g.nodes[0]->op);
  bool sort = g.kind == fuse::Group::Kind::Host && (g.nodes[0]->op == ir::Op::ArgSort || g.nodes[0]->op == ir::Op::TopK);
  bool nearest = g.kind == fuse::Group::Kind::Host && g.nodes[0]->op == ir::Op::Nearest;
  // Scatters (issue 23): scatter_add, and the scatter row as ir::Op::Scatter.
  bool scatter =
      g.kind == fuse::Group::Kind::Host && (g.nodes[0]->op == ir::Op::ScatterAdd || g.nodes[0]->op == ir::Op::Scatter);
  if (pool || attention || scan || scatter || sort || nearest || g.kind == fuse::Group::Kind::Matmul || g.kind == fuse::Group::Kind::Conv) {
    backend::RecordedCall call;
    backend::RecordedCall* record = rec && rec->ok ? &call : nullptr;
    CacheStats before = run.stats;
    // Profiled or traced, the call is a row of its own (a replay's too: the plan keeps its row).
    plan::LibraryRow row;
    if (record || rt::obs::on()) row = library_row(g);
    std::optional<rt::obs::LibraryCall> observed;
    if (rt::obs::on()) [[unlikely]] {
      const Device device = g.nodes[0]->device;
      observed.emplace(row.name, row.ops, row.bytes,
                       rt::obs::profiling() ? backend::backend_for(device).start_timer(device) : nullptr);
    }
    if (pool) run_pool_group(run, record);
    else if (attention) run_attention_group(run, record);
    else if (scan) run_scan_group(run, record);
    else if (scatter) run_scatter_group(run, record);
    else if (sort) run_sort_group(run, record);
    else if (nearest) run_nearest_group(run, record);
    else if (g.kind == fuse::Group::Kind::Matmul) run_matmul_group(run, record);
    else run_conv_group(run, record);
    observed.reset();
    if (record)
      rec->add_library(call, run.stats.kernels_launched - before.kernels_launched,
                       run.stats.hits + run.stats.misses - before.hits - before.misses,
                       run.stats.bytes_moved - before.bytes_moved, std::move(row));
    return;
  }
  // Fused kernels and cat's copies are replayed; anything else runs through here every time.
  if (rec && g.kind != fuse::Group::Kind::Pointwise && g.kind != fuse::Group::Kind::Row) rec->ok = false;
  if (g.kind == fuse::Group::Kind::Host && g.nodes[0]->op == ir::Op::Linalg) return run_linalg_group(run);
  if (g.kind == fuse::Group::Kind::Host && g.nodes[0]->op == ir::Op::Fft) return run_fft_group(run);
  if (g.kind == fuse::Group::Kind::Host) {
    ir::Op op = g.nodes[0]->op;  // before it becomes a buffer
    run_host(g);
    if (run.options.log_level >= 1)
      std::fprintf(stderr, "[lazyfuse]   group %d: %s on the host (reference executor)\n", run.index,
                   ir::op_name(op));
    return;
  }
  backend::Prepared k = backend::prepare(run, g);
  if (!k.entry->kernel) {
    if (rec) rec->ok = false;
    return backend::run_fallback(k);
  }
  backend::launch(k, run.stats);
  if (rec && rec->ok) rec->add(k);  // with its gathers' error buffer: a replay checks it too
  if (k.low.error_storage) ++run.stats.index_checks;
  lower::check_gathers(k.low);
  backend::materialize_outputs(k);
}

const char* kind_name(fuse::Group::Kind k) {
  switch (k) {
    case fuse::Group::Kind::Pointwise: return "pointwise";
    case fuse::Group::Kind::Row: return "row";
    case fuse::Group::Kind::Matmul: return "matmul";
    case fuse::Group::Kind::Conv: return "conv";
    case fuse::Group::Kind::Host: return "host";
  }
  return "?";
}

// LAZYFUSE_LOG=1: the cut totals, then each group with its members, then each cut: which node
// started a new group, which group it would have joined, and why.
// ", from pad, softmax, sum": the ops the user called that a group's nodes came from, in order,
// where a composite's inner ops make up some of them (Node::user_op); empty where every node is an
// op the user called.
std::string as_called(const fuse::Group& group) {
  constexpr size_t kShown = 8;
  std::vector<const char*> names;
  bool composite = false;
  for (const ir::Node* n : group.nodes) {
    composite |= n->user_op != nullptr;
    const char* name = n->user_op ? n->user_op : ir::op_name(n->op);
    if (std::find_if(names.begin(), names.end(), [&](const char* m) { return std::strcmp(m, name) == 0; }) == names.end())
      names.push_back(name);
  }
  if (!composite) return "";
  std::string out = ", from";
  for (size_t i = 0; i < names.size() && i < kShown; ++i) out += std::string(i ? ", " : " ") + names[i];
  if (names.size() > kShown) out += ", ...";
  return out;
}

void log_partition(const fuse::Partition& p, size_t nodes) {
  std::fprintf(stderr, "[lazyfuse] flush: %zu nodes -> %zu groups; cuts:", nodes, p.groups.size());
  for (size_t r = 0; r < p.cuts.size(); ++r)
    if (p.cuts[r])
      std::fprintf(stderr, " %s=%lld", fuse::cut_reason_name(static_cast<fuse::CutReason>(r)),
                   static_cast<long long>(p.cuts[r]));
  std::fprintf(stderr, "\n");
  constexpr size_t kShown = 24;  // members named per group; a 512-node group would drown the log
  for (size_t g = 0; g < p.groups.size(); ++g) {
    const fuse::Group& group = p.groups[g];
    std::string members;
    for (size_t i = 0; i < group.nodes.size() && i < kShown; ++i) members += " " + ir::node_name(*group.nodes[i]);
    if (group.nodes.size() > kShown) members += " ... (+" + std::to_string(group.nodes.size() - kShown) + ")";
    std::fprintf(stderr, "[lazyfuse]   group %zu (%s, %zu ops%s):%s\n", g, kind_name(group.kind), group.nodes.size(),
                 as_called(group).c_str(), members.c_str());
  }
  for (const fuse::Cut& c : p.cut_log) {
    std::string node = c.node ? ir::node_name(*c.node) : "?";
    std::string to = c.group >= 0 ? "group " + std::to_string(c.group) : "a group of its own";
    if (c.would_join >= 0)
      std::fprintf(stderr, "[lazyfuse]   cut: %s not joined to group %d (%s); starts %s\n", node.c_str(), c.would_join,
                   fuse::cut_reason_name(c.reason), to.c_str());
    else
      std::fprintf(stderr, "[lazyfuse]   cut: %s starts %s (%s)\n", node.c_str(), to.c_str(),
                   fuse::cut_reason_name(c.reason));
  }
}

// The cost rule's questions to the backends, registered for the fuser as the library loads
// (LAZYFUSE_FEW_ROWS overrides their few-rows answer).
[[maybe_unused]] const bool costs_registered = (fuse::set_backend_costs([](Device d) {
                                 fuse::Costs c = backend::backend_for(d).fuse_costs(d);
                                 if (const int64_t few = rt::config().few_rows; few >= 0) c.few_rows = few;
                                 return c;
                               }),
                               true);

// LAZYFUSE_LOG=1, a replayed flush: a line at its plan's 1st, 10th, 100th, ... replay.
// Whether n is 1, 10, 100, ...: the counts at which a repeating event is logged again.
bool power_of_ten(uint64_t n) {
  uint64_t mark = 1;
  while (mark < n && mark <= UINT64_MAX / 10) mark *= 10;
  return n == mark;
}

void log_replay(const plan::Plan& plan) {
  if (!power_of_ten(plan.replayed)) return;
  std::fprintf(stderr, "[lazyfuse] flush: %llu nodes replayed from a plan of %zu steps (replay %llu of it%s)\n",
               static_cast<unsigned long long>(plan.nodes), plan.steps.size(),
               static_cast<unsigned long long>(plan.replayed),
               plan.replayed == 1 ? "; the next are logged at 10, 100, ..." : "");
}

}  // namespace

// The flush's graph rewrites, in the order they run: attention first (issue 21: it must see the
// ops as the user wrote them), then k-means' nearest-centroid pattern, cats as index math, batch
// norm folded into convolutions, reshape copies. Each returns how many changes it made; the nodes
// it unlinks go to `unlinked` (the caller frees them once it holds no raw pointer into the old
// graph). A pass that changed the graph leaves `order` stale: rewrite() derives it again from the
// roots, in one place, before the next pass reads it.
struct RewritePass {
  bool fusion_only;  // skipped with fusion off
  int (*run)(std::vector<ir::Node*>& order, const std::vector<ir::Node*>& roots, const Options& opt,
             std::vector<ir::NodePtr>& unlinked);
};

constexpr RewritePass kRewritePasses[] = {
    {true, [](std::vector<ir::Node*>& order, const std::vector<ir::Node*>&, const Options& opt,
              std::vector<ir::NodePtr>& unlinked) { return fuse::rewrite_attention(order, opt.log_level, &unlinked); }},
    // Issue 23: k-means' distances and argmin as one call (nearest.h).
    {true, [](std::vector<ir::Node*>& order, const std::vector<ir::Node*>&, const Options& opt,
              std::vector<ir::NodePtr>& unlinked) { return fuse::rewrite_nearest(order, opt.log_level, &unlinked); }},
    // Issue 23: cats with few parts as index math in their consumers (fuser.h, inline_cats).
    {true, [](std::vector<ir::Node*>& order, const std::vector<ir::Node*>&, const Options&,
              std::vector<ir::NodePtr>&) { return fuse::inline_cats(order); }},
    // Issue 22: inference batch norm into the convolution's weights and bias (conv_fold.h).
    {true,
     [](std::vector<ir::Node*>& order, const std::vector<ir::Node*>& roots, const Options& opt,
        std::vector<ir::NodePtr>& unlinked) {
       static const fuse::ConvAsks asks{
           [](const ir::Node& conv) { return backend::backend_for(conv.device).conv_scale_in_epilogue(conv); },
           [](const ir::Node& conv) { return backend::backend_for(conv.device).conv_reads_krsc_filter(conv); }};
       return fuse::fold_conv_affine(order, roots, opt.log_level, &unlinked, asks);
     }},
    {false, [](std::vector<ir::Node*>& order, const std::vector<ir::Node*>&, const Options&,
               std::vector<ir::NodePtr>& unlinked) { return fuse::insert_reshape_copies(order, &unlinked); }},
};

int rewrite(std::vector<ir::Node*>& order, const std::vector<ir::Node*>& roots, const Options& opt,
            std::vector<ir::NodePtr>& unlinked) {
  int made = 0;
  for (const RewritePass& pass : kRewritePasses) {
    if (pass.fusion_only && !opt.fusion) continue;
    if (int n = pass.run(order, roots, opt, unlinked); n > 0) {
      ir::flush_order(roots, &order);
      made += n;
    }
  }
  return made;
}

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
  static const bool obs_ready = (rt::obs::init(), true);  // LAZYFUSE_PROFILE, LAZYFUSE_TRACE_FILE
  (void)obs_ready;
  const bool observed = rt::obs::on();
  std::chrono::steady_clock::time_point start;  // read only for the log and the profile: a clock read costs on some hosts
  if (opt.log_level >= 1 || observed) start = std::chrono::steady_clock::now();
  // Flush plans (flush_plan.h), logged or not: a logged run runs what an unlogged one runs. The log
  // shows a flush's groups when it is fused; its replays say so in a line, at the 1st, 10th,
  // 100th, ... of each plan, so that a long run's log stays readable.
  static std::mutex plans_mu;
  // Never destroyed: a plan's CUDA graph must not be freed after the driver shut down at exit.
  static plan::PlanCache& plans = *new plan::PlanCache;
  static plan::Signature signature;  // reused: its buffers keep their capacity
  std::unique_lock<std::mutex> plans_lock(plans_mu, std::defer_lock);
  const plan::Signature* sig = nullptr;
  if (rt::config().flush_plans) {
    plans_lock.lock();
    plan::describe(order, wanted, opt.fusion, &signature);
    sig = &signature;
  }
  plan::Plan* recorded = nullptr;
  if (sig) {
    // A plan recorded over a rewritten graph replays over this one as it is (plan::number_new).
    recorded = plans.find(*sig, cache::global_cache().generation());
    if (recorded && plan::bind_numbers(*recorded, *sig)) {
      replay(*recorded, order, *sig, wanted, stats);
      ++recorded->replayed;
      if (observed) rt::obs::flush(start, rt::obs::now(), /*replayed=*/true);
      if (opt.log_level >= 1) log_replay(*recorded);
      return;
    }
  }
  // A structure logged in full twice (its first sighting, then its recording) that comes back
  // without replaying (a pinned number changed: a solver's scalars read each step) logs one line at
  // its 3rd, 10th, 100th, ... sighting instead of its groups again, so that a long run's log stays
  // readable; what it compiles anew is still logged (LAZYFUSE_LOG=2 logs every fused flush in full).
  Options quiet;
  const Options* o = &opt;
  if (sig && opt.log_level == 1) {
    static std::unordered_map<uint64_t, uint64_t>& logged = *new std::unordered_map<uint64_t, uint64_t>;
    if (logged.size() >= 4096) logged.clear();
    uint64_t seen = ++logged[sig->hash];
    if (seen > 2) {
      quiet = opt;
      quiet.log_level = 0;
      quiet.log_misses = true;
      o = &quiet;
      if (seen == 3 || power_of_ten(seen))
        std::fprintf(stderr,
                     "[lazyfuse] flush: %zu nodes, fused again as logged before (sighting %llu of its structure; not "
                     "replayed: %s%s)\n",
                     order.size(), static_cast<unsigned long long>(seen),
                     recorded ? "a kernel's variant does not hold for its numbers"
                              : "no plan for it: a pinned number changed, or a group plans do not replay",
                     seen == 3 ? "; the next sightings logged are the 10th, 100th, ..." : "");
    }
  }
  std::optional<Recorder> rec;
  if (sig && plans.seen_before(*sig)) {
    rec.emplace(*sig);
    rec->plan.generation = cache::global_cache().generation();
  }
  // While recording, every use of a number is noted: those the steps' parameters do not account
  // for pin it (flush_plan.h).
  std::optional<ir::NumberUses> number_uses;
  if (rec) number_uses.emplace();
  rt::obs::Clock::time_point fuse_start;
  if (observed) fuse_start = rt::obs::now();
  {
    std::vector<ir::NodePtr> unlinked;  // alive while `described` points into the old graph
    if (rec) {
      thread_local std::vector<ir::Node*> described;  // the order describe() numbered
      described = order;
      if (rewrite(order, roots, *o, unlinked) > 0) plan::number_new(*sig, described, order);
    } else {
      rewrite(order, roots, *o, unlinked);
    }
  }
  materialize_held_views(order, wanted);
  std::erase_if(order, [](ir::Node* n) { return n->realized(); });
  fuse::Partition p = fuse::partition(order, wanted, o->fusion, /*record_cuts=*/o->log_level >= 1);
  if (observed)
    rt::obs::span("fuse", "fuse", fuse_start, rt::obs::now(),
                  "\"nodes\": " + std::to_string(order.size()) + ", \"groups\": " + std::to_string(p.groups.size()));
  if (o->log_level >= 1) log_partition(p, order.size());
  for (size_t i = 0; i < p.groups.size(); ++i)
    run_group({p.groups[i], p, static_cast<int>(i), *o, stats}, rec ? &*rec : nullptr);
  ++stats.flushes;
  stats.nodes_executed += order.size();
  if (rec && rec->ok && !rec->plan.steps.empty()) {
    rec->plan.nodes = order.size();
    rec->finish(number_uses->uses());
    plan::mark_overwritten(rec->plan);
    if (o->log_level >= 1)
      std::fprintf(stderr, "[lazyfuse] flush recorded as a plan of %zu steps: its repeats replay it\n",
                   rec->plan.steps.size());
    plans.store(*sig, std::move(rec->plan));
  }
  if (observed) rt::obs::flush(start, rt::obs::now(), /*replayed=*/false);
  if (o->log_level >= 1) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "[lazyfuse] flush done in %.3f ms\n", ms);
  }
}

}  // namespace lf::exec
