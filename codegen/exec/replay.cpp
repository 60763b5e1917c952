#include "codegen/exec/replay.h"

#include <algorithm>
#include <cstring>
#include <exception>

#include "codegen/ir/indexing.h"
#include "codegen/ir/view.h"
#include "runtime/profile.h"

namespace lf::exec {

Recorder::Recorder(const plan::Signature& s) : sig(s) {
  for (size_t l = 0; l < sig.leaves.size(); ++l)
    pointer_from.emplace(sig.leaves[l]->storage->data(), static_cast<int64_t>(l));
  claims.assign(sig.numbers.size() / plan::kNumberFields, 0);
}

namespace {

// The index in Signature::numbers of the first number of the node numbered (mark, pos), or -1.
int first_number(const plan::Signature& sig, uint64_t mark, int32_t pos) {
  if (mark != sig.mark || pos < 0 || static_cast<size_t>(pos) >= sig.nodes) return -1;
  return sig.number_at[static_cast<size_t>(pos)];
}

}  // namespace

void Recorder::claim_numbers(const backend::Prepared& k, plan::Step& s) {
  for (const lower::Lowered::Number& n : k.low.numbers) {
    int first = first_number(sig, n.mark, n.pos);
    if (first < 0) continue;  // a node a rewrite made: its numbers follow from the structure
    ++claims[static_cast<size_t>(first / plan::kNumberFields)];
    s.numbers.emplace_back(n.param, first + n.field);
    s.check_variant = s.check_variant || k.backend->specializes_on_param(k.low.kernel, n.param);
  }
}

void Recorder::finish(const std::vector<ir::NumberUses::Use>& uses) {
  // Patched where every use of the node's numbers was a launch parameter a step claimed.
  std::vector<int32_t> used(claims.size(), 0);
  for (const ir::NumberUses::Use& u : uses)
    if (int first = first_number(sig, u.mark, u.pos); first >= 0) ++used[static_cast<size_t>(first / plan::kNumberFields)];
  plan.numbers = sig.numbers;
  plan.patched.assign(sig.numbers.size(), 0);
  // A use noted under another numbering (a graph rewrite's walk: remapped_coordinate folding an
  // arange's start into the nodes it makes) names no node of the signature: the number it read
  // cannot be told apart, so every number must repeat (none is patched). Before, such a use was
  // dropped, the number counted as patched, and a replay kept the folded start: a flip of
  // arange(p, p + n) replayed the recorded p.
  if (std::any_of(uses.begin(), uses.end(), [&](const ir::NumberUses::Use& u) { return u.mark != sig.mark; })) {
    for (plan::Step& s : plan.steps) s.numbers.clear(), s.check_variant = false;
    return;
  }
  for (size_t q = 0; q < claims.size(); ++q)
    for (int f = 0; f < plan::kNumberFields; ++f)
      plan.patched[q * plan::kNumberFields + static_cast<size_t>(f)] = claims[q] > 0 && claims[q] == used[q];
  for (plan::Step& s : plan.steps) {
    std::erase_if(s.numbers, [&](const std::pair<int, int>& n) { return !plan.patched[static_cast<size_t>(n.second)]; });
    if (s.numbers.empty()) s.check_variant = false;
  }
}

void Recorder::add(const backend::Prepared& k) {
  plan::Step s;
  if (k.low.error_storage) {  // still zero: the check after this launch throws before the plan is stored
    s.error = k.low.error_storage;
    for (const ir::Node* g : k.low.gathers)
      s.gathers.push_back({g->attrs.start, g->attrs.axis, g->inputs[0]->shape[static_cast<size_t>(g->attrs.axis)]});
    pointer_from.insert_or_assign(s.error->data(), plan::kErrorPointer);
  }
  for (size_t i = 0; i < k.low.outputs.size() && ok; ++i) {
    int position = plan::position(sig, k.low.outputs[i]);
    const void* data = k.low.out_storage[i]->data();
    if (position < 0 || data == nullptr) ok = false;
    else s.outputs.push_back(position);
    s.out_strides.push_back(k.low.out_strides[i]);
    // An address seen before belonged to a buffer freed during this flush (an intermediate whose
    // last reader ran): from here on it names this output, and when that buffer was an earlier
    // output at least as large, the replay hands its buffer on to this one too.
    s.reuse.push_back(new_slot(data, k.low.out_storage[i]->nbytes(), s.outputs.size() - 1));
    s.alloc_bytes.push_back(k.low.out_storage[i]->nbytes());
  }
  if (ok && bind_pointers(k, s)) {
    claim_numbers(k, s);
    push(k, std::move(s));
  }
}

void Recorder::add_cat(const ir::Node& cat, const std::vector<backend::Prepared>& copies) {
  int position = plan::position(sig, &cat);
  const void* data = cat.storage ? cat.storage->data() : nullptr;
  if (copies.empty() || position < 0 || data == nullptr) ok = false;
  if (!ok) return;
  int64_t reuse = new_slot(data, cat.storage->nbytes(), 0);  // as in add()
  for (size_t c = 0; c < copies.size() && ok; ++c) {
    plan::Step s;
    if (c == 0) {  // allocates the cat's buffer; every copy writes a slab of it
      s.outputs.push_back(position);
      s.out_strides.push_back(cat.layout.strides);
      s.reuse.push_back(reuse);
      s.alloc_bytes.push_back(cat.storage->nbytes());
    }
    if (bind_pointers(copies[c], s)) {
      claim_numbers(copies[c], s);
      push(copies[c], std::move(s));
    }
  }
}

void Recorder::add_library(const backend::RecordedCall& call, uint64_t launches, uint64_t lookups, uint64_t bytes,
                           plan::LibraryRow row) {
  if (!call.replay) ok = false;
  plan::Step s;
  for (size_t i = 0; i < call.outputs.size() && ok; ++i) {  // as in add()
    int position = plan::position(sig, call.outputs[i].first);
    const rt::Storage& storage = *call.outputs[i].second;
    if (position < 0 || storage.data() == nullptr) ok = false;
    s.outputs.push_back(position);
    s.out_strides.push_back(i < call.out_strides.size() ? call.out_strides[i] : Shape{});
    s.reuse.push_back(new_slot(storage.data(), storage.nbytes(), s.outputs.size() - 1));
    s.alloc_bytes.push_back(storage.nbytes());
  }
  for (size_t i = 0; i < call.addresses.size() && ok; ++i) {
    const void* ptr = call.addresses[i];
    auto it = ptr ? pointer_from.find(ptr) : pointer_from.end();
    if (ptr == nullptr) s.pointer_from.push_back(plan::kNoPointer);
    else if (it != pointer_from.end()) s.pointer_from.push_back(it->second);
    else ok = false;  // memory neither a leaf nor written by this flush
  }
  if (!ok) return;
  s.args.pointers.assign(call.addresses.size(), nullptr);
  s.library = call.replay;
  s.library_row = std::move(row);
  s.check = call.check;
  s.device = call.outputs.empty() ? Device::cpu() : call.outputs[0].first->device;
  s.launches = launches;
  s.lookups = lookups;
  s.bytes = static_cast<int64_t>(bytes);
  plan.steps.push_back(std::move(s));
}

int64_t Recorder::reused_slot(const void* data) const {
  auto it = pointer_from.find(data);
  if (it == pointer_from.end() || it->second >= 0 || it->second == plan::kNoPointer) return -1;  // new, or a leaf's
  return slot_root[static_cast<size_t>(plan::output_slot(it->second))];
}

int64_t Recorder::new_slot(const void* data, size_t bytes, size_t output) {
  int64_t root = reused_slot(data);
  if (root >= 0) {  // the root's buffer must hold this output too
    auto [step, out] = root_where[static_cast<size_t>(root)];
    size_t& alloc = step < plan.steps.size() ? plan.steps[step].alloc_bytes[out] : slot_bytes[static_cast<size_t>(root)];
    alloc = std::max(alloc, bytes);
  }
  int64_t slot = slots++;
  slot_root.push_back(root >= 0 ? root : slot);
  root_where.emplace_back(plan.steps.size(), output);
  slot_bytes.push_back(bytes);
  pointer_from.insert_or_assign(data, plan::from_output(slot));
  return root;
}

bool Recorder::bind_pointers(const backend::Prepared& k, plan::Step& s) {
  for (size_t o = 0; o < k.low.args.pointers.size() && ok; ++o) {
    const void* ptr = k.low.args.pointers[o];
    if (k.low.kernel.operands[o].kind == kir::Operand::Kind::Index) {
      s.pointer_from.push_back(plan::kNoPointer);
    } else if (auto it = pointer_from.find(ptr); ptr != nullptr && it != pointer_from.end()) {
      s.pointer_from.push_back(it->second);
    } else {
      ok = false;  // memory neither a leaf nor written by this flush (or empty)
    }
  }
  return ok;
}

void Recorder::push(const backend::Prepared& k, plan::Step s) {
  s.entry = k.entry;
  s.kernel = k.low.kernel;
  s.args = k.low.args;
  s.variant = k.spec.variant;
  s.device = k.device;
  s.bytes = k.low.bytes;
  plan.steps.push_back(std::move(s));
}

void materialize_held_views(const std::vector<ir::Node*>& order, const std::function<bool(const ir::Node&)>& wanted) {
  for (ir::Node* n : order) {
    if (!ir::is_view(n->op) || !wanted(*n)) continue;
    auto [source, chain] = ir::resolve_views(n);
    if (!source->realized()) continue;
    if (auto v = ir::view_of_chain(*source, chain)) {
      auto storage = source->storage;
      backend::materialize(*n, std::move(storage), ir::Layout{v->strides, v->offset});
    }
  }
}

namespace {

backend::Launch launch_of(const plan::Step& s) {
  return {s.entry->kernel.get(), &s.kernel, &s.args, s.variant.get()};
}

// The steps as one graph of their backend with their current pointers (null when the steps run
// on several devices or the backend gives none).
std::unique_ptr<backend::LaunchGraph> build_graph(const plan::Plan& plan) {
  if (plan.steps.empty()) return nullptr;
  Device device = plan.steps[0].device;
  std::vector<backend::Launch> launches;
  for (const plan::Step& s : plan.steps) {
    if (s.device != device) return nullptr;
    launches.push_back(launch_of(s));
  }
  return backend::backend_for(device).graph(launches, device);
}

// Every step's operand pointers of this replay, in order: what a graph of the plan was built or
// captured with (a per-thread buffer, valid until the next call).
const std::vector<void*>& replay_pointers(const plan::Plan& plan) {
  thread_local std::vector<void*> pointers;
  pointers.clear();
  for (const plan::Step& s : plan.steps) pointers.insert(pointers.end(), s.args.pointers.begin(), s.args.pointers.end());
  return pointers;
}

// A kernel-only plan launched as one graph (Plan::graphs): the one built for this replay's
// pointers and numbers; else one for its pointers with the numbers updated (a loop whose scalars
// change every step alternates between two graphs updated in place, so that it never waits for
// the launch it queued just before); else a new one while there are fewer than kMaxGraphsPerPlan;
// else the least recently used, updated. False when there is none: launch step by step.
constexpr size_t kMaxGraphsPerPlan = 4;
bool launch_graph(plan::Plan& plan, CacheStats& stats) {
  if (plan.graph_off) return false;
  ++plan.replays;
  const std::vector<void*>& pointers = replay_pointers(plan);
  // The graph for these pointers and numbers; else the least recent for these pointers, unless
  // that is the previous replay's (its launch may still be queued: updating it would wait for it).
  plan::Plan::Graph *hit = nullptr, *same_pointers = nullptr;
  for (plan::Plan::Graph& g : plan.graphs) {
    if (g.pointers != pointers) continue;
    if (g.numbers == plan.numbers) hit = &g;
    else if (same_pointers == nullptr || g.used < same_pointers->used) same_pointers = &g;
  }
  if (hit == nullptr && same_pointers != nullptr && same_pointers->used + 1 < plan.replays) hit = same_pointers;
  if (hit == nullptr && plan.graphs.size() < kMaxGraphsPerPlan) {
    std::unique_ptr<backend::LaunchGraph> graph = build_graph(plan);
    if (!graph) {
      plan.graph_off = true;
      plan.graphs.clear();
      return false;
    }
    plan.graphs.push_back({pointers, plan.numbers, std::move(graph)});
    hit = &plan.graphs.back();
  }
  if (hit == nullptr) hit = same_pointers;
  if (hit == nullptr)
    hit = &*std::min_element(plan.graphs.begin(), plan.graphs.end(),
                             [](const plan::Plan::Graph& x, const plan::Plan::Graph& y) { return x.used < y.used; });
  if (hit->pointers != pointers || hit->numbers != plan.numbers) {
    bool set = true;
    for (size_t i = 0; i < plan.steps.size() && set; ++i) set = hit->graph->update(i, launch_of(plan.steps[i]));
    if (!set) {  // the backend refused an update: no graphs from now on
      plan.graph_off = true;
      plan.graphs.clear();
      return false;
    }
    hit->pointers = pointers;
    hit->numbers = plan.numbers;
  }
  hit->used = plan.replays;
  if (hit->graph->launch()) ++stats.queued_launches;
  ++stats.graph_launches;
  return true;
}

// Runs the steps in order; *at is the step running (a CPU library call throws its data-dependent
// errors as it meets them: the steps before it may have met errors of their own).
void run_steps(plan::Plan& plan, size_t* at = nullptr) {
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    plan::Step& s = plan.steps[i];
    if (at) *at = i;
    if (s.library) s.library(s.args.pointers.data());
    else backend::backend_for(s.device).launch(launch_of(s), s.device);
  }
}

// A plan with library calls launched as one captured graph (Backend::capture): the one captured
// with this replay's pointers, or a new capture. False when there is none: launch step by step.
constexpr size_t kMaxCapturedPerPlan = 4;
constexpr int kMaxCaptures = 16;
bool launch_captured(plan::Plan& plan, CacheStats& stats) {
  if (plan.capture_off || plan.steps.empty()) return false;
  const std::vector<void*>& pointers = replay_pointers(plan);
  plan::Plan::Captured* hit = nullptr;
  for (plan::Plan::Captured& c : plan.captured)
    if (c.pointers == pointers && c.numbers == plan.numbers) hit = &c;
  if (hit == nullptr) {
    Device device = plan.steps[0].device;
    std::vector<backend::Launch> kernels;
    for (const plan::Step& s : plan.steps) {
      if (s.device != device) plan.capture_off = true;
      if (!s.library) kernels.push_back(launch_of(s));
    }
    if (plan.capture_off || ++plan.captures > kMaxCaptures) {
      plan.capture_off = true;
      plan.captured.clear();
      return false;
    }
    std::unique_ptr<backend::LaunchGraph> graph =
        backend::backend_for(device).capture(kernels, [&plan] { run_steps(plan); }, device);
    if (!graph) {  // nothing ran: step by step from now on
      plan.capture_off = true;
      plan.captured.clear();
      return false;
    }
    if (plan.captured.size() >= kMaxCapturedPerPlan) plan.captured.erase(plan.captured.begin());  // the oldest
    plan.captured.push_back({pointers, plan.numbers, std::move(graph)});
    hit = &plan.captured.back();
  }
  if (hit->graph->launch()) ++stats.queued_launches;
  ++stats.graph_launches;
  return true;
}

std::vector<std::shared_ptr<rt::Storage>>& replay_slots() {
  thread_local std::vector<std::shared_ptr<rt::Storage>> slots;  // its memory kept between replays
  return slots;
}

// Drops the replay's references to its buffers, last-allocated first: the buffers no node holds
// (the flush's intermediates) go back to the caching allocator in that order, and its free lists
// are last in, first out, so the next replay's allocations get the same blocks in the same order
// and a loop's intermediates keep their addresses. Dropped in allocation order, a plan's blocks
// of one size came back permuted, another pointer set every replay: past a few sets a plan with
// library calls stopped capturing its replays as graphs (the GPU's MLP, fused, then replayed step
// by step: 1.5x slower than unfused; bench/RESULTS.md, 2026-11-27).
void release_slots(std::vector<std::shared_ptr<rt::Storage>>& slots) {
  while (!slots.empty()) slots.pop_back();
}

void finish_replay(plan::Plan& plan, const std::vector<ir::Node*>& order);
void check_errors(const plan::Plan& plan, size_t steps);

// A replay's step `at` threw: the error an earlier step met comes first (as outside plans, where
// each step's check follows it), and every error buffer is cleared for the next replay. Rethrows.
[[noreturn]] void fail_replay(const plan::Plan& plan, size_t at, std::vector<std::shared_ptr<rt::Storage>>& slots) {
  std::exception_ptr thrown = std::current_exception();
  try {
    check_errors(plan, at);
  } catch (...) {
    release_slots(slots);
    throw;
  }
  release_slots(slots);
  std::rethrow_exception(thrown);
}

// Counts a replay as it starts: one that then meets a data-dependent error (an index out of
// range) ran all the same.
void count_replay(const plan::Plan& plan, CacheStats& stats) {
  for (const plan::Step& s : plan.steps) {
    stats.hits += s.lookups;
    stats.kernels_launched += s.launches;
    stats.bytes_moved += static_cast<uint64_t>(s.bytes);
    stats.index_checks += (s.error ? 1 : 0) + (s.check ? 1 : 0);
  }
  ++stats.flushes;
  ++stats.plans_replayed;
  stats.nodes_executed += plan.nodes;
}

}  // namespace

void replay(plan::Plan& plan, const std::vector<ir::Node*>& order, const plan::Signature& sig,
            const std::function<bool(const ir::Node&)>& wanted, CacheStats& stats) {
  // The leaves' addresses first: storing a held view may free the node of the buffer it views
  // (the view was its only holder; the view keeps the storage itself).
  thread_local std::vector<void*> leaf_data;
  leaf_data.clear();
  for (const ir::Node* leaf : sig.leaves) leaf_data.push_back(leaf->storage->data());
  materialize_held_views(order, wanted);
  std::vector<std::shared_ptr<rt::Storage>>& slots = replay_slots();
  slots.clear();
  for (plan::Step& s : plan.steps) {
    for (size_t i = 0; i < s.outputs.size(); ++i) {
      int64_t reuse = s.reuse[i];
      slots.push_back(reuse >= 0 ? slots[static_cast<size_t>(reuse)] : rt::Storage::allocate(s.device, s.alloc_bytes[i]));
    }
    for (size_t i = 0; i < s.pointer_from.size(); ++i) {
      int64_t from = s.pointer_from[i];
      s.args.pointers[i] = from == plan::kNoPointer      ? nullptr
                           : from == plan::kErrorPointer ? s.error->data()
                           : from >= 0                  ? leaf_data[static_cast<size_t>(from)]
                                                        : slots[static_cast<size_t>(plan::output_slot(from))]->data();
    }
  }
  count_replay(plan, stats);
  // Profiled or traced, a replay launches its steps one by one, each timed (a graph is one launch).
  if (rt::obs::on()) [[unlikely]] {
    size_t at = 0;
    try {
      for (; at < plan.steps.size(); ++at) {
        plan::Step& s = plan.steps[at];
        if (s.library) {
          const plan::LibraryRow& row = s.library_row;
          rt::obs::LibraryCall observed(row.name, row.ops, row.bytes,
                                        rt::obs::profiling() ? backend::backend_for(s.device).start_timer(s.device)
                                                             : nullptr);
          s.library(s.args.pointers.data());
        } else
          backend::launch_observed(backend::backend_for(s.device), launch_of(s), s.device, s.entry->kernel->name,
                                   static_cast<uint64_t>(s.bytes));
      }
    } catch (...) {
      fail_replay(plan, at, slots);
    }
    return finish_replay(plan, order);
  }
  bool library = false;
  for (const plan::Step& s : plan.steps) library |= static_cast<bool>(s.library);
  if (library) {
    size_t at = 0;
    try {  // a CPU call throws its data-dependent errors as it meets them (a scatter's bad index)
      if (!launch_captured(plan, stats)) run_steps(plan, &at);
    } catch (...) {
      fail_replay(plan, at, slots);
    }
    return finish_replay(plan, order);
  }
  if (!launch_graph(plan, stats)) run_steps(plan);
  finish_replay(plan, order);
}

namespace {

// The index errors the first `steps` steps of the replay met (Step::error, Step::check): every
// error buffer read and the set ones zeroed for the next replay (a library call clears its own as
// it runs), then the first error in step order throws, as check_gathers and the calls do outside
// plans, before any node gets its buffer (the values stay pending).
void check_errors(const plan::Plan& plan, size_t steps) {
  std::exception_ptr first;
  for (size_t i = 0; i < steps && i < plan.steps.size(); ++i) {
    const plan::Step& s = plan.steps[i];
    if (s.check) {
      try {
        s.check();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (!s.error) continue;
    int64_t err[2] = {0, 0};
    rt::read_flags(*s.error, 0, err, sizeof err);  // waits for the launches
    if (err[0] == 0 && err[1] == 0) continue;
    auto zero = rt::Storage::allocate(Device::cpu(), sizeof err);
    std::memset(zero->data(), 0, sizeof err);
    rt::copy(*zero, 0, *s.error, 0, sizeof err);
    if (first || err[0] <= 0 || err[0] > static_cast<int64_t>(s.gathers.size())) continue;
    const plan::Step::Gather& g = s.gathers[static_cast<size_t>(err[0] - 1)];
    first = std::make_exception_ptr(Error(ir::gather_index_error(g.op, err[1], g.axis, g.size)));
  }
  if (first) std::rethrow_exception(first);
}

// Hands the replay's buffers to their nodes (count_replay counted it).
void finish_replay(plan::Plan& plan, const std::vector<ir::Node*>& order) {
  std::vector<std::shared_ptr<rt::Storage>>& slots = replay_slots();
  try {
    check_errors(plan, plan.steps.size());
  } catch (...) {
    release_slots(slots);
    throw;
  }
  size_t slot = 0;
  for (plan::Step& s : plan.steps) {
    for (size_t i = 0; i < s.outputs.size(); ++i) {
      // Past the order: an intermediate a rewrite made (plan::number_new), read by later steps
      // only. Overwritten: a later output took its buffer over (the node stays pending).
      if (static_cast<size_t>(s.outputs[i]) >= order.size() || s.overwritten[i]) {
        ++slot;
        continue;
      }
      ir::Node* n = order[static_cast<size_t>(s.outputs[i])];
      const Shape& st = s.out_strides[i];  // empty: contiguous
      backend::materialize(*n, slots[slot++], ir::Layout{st.empty() ? ir::contiguous_strides(n->shape) : st, 0});
    }
  }
  release_slots(slots);  // the nodes hold the buffers now
}

}  // namespace

}  // namespace lf::exec
