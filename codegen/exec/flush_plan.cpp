#include "codegen/exec/flush_plan.h"

#include <bit>
#include <cstring>
#include <string>

#include "codegen/ir/view.h"
#include "runtime/config.h"

namespace lf::plan {
namespace {

int64_t bits(double v) { return std::bit_cast<int64_t>(v); }

void push_dims(std::vector<int64_t>& w, const Shape& dims) {
  w.push_back(static_cast<int64_t>(dims.size()));
  w.insert(w.end(), dims.begin(), dims.end());
}

int64_t device_word(Device d) { return int64_t{static_cast<uint8_t>(d.kind())} << 32 | static_cast<uint32_t>(d.index()); }

// Four independent lanes, so that their multiplies overlap: a signature is hundreds of words, and
// one serial chain of multiplies was the largest single cost of a replayed flush. (Equal hashes are
// confirmed by comparing the words.)
uint64_t hash_words(const std::vector<int64_t>& words) {
  constexpr uint64_t kMul = 0xff51afd7ed558ccdull;
  uint64_t h[4] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull, 0x27d4eb2f165667c5ull};
  const size_t n = words.size();
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; ++l) h[l] = std::rotl((h[l] ^ static_cast<uint64_t>(words[i + l])) * kMul, 31);
  for (int l = 0; i < n; ++i, ++l) h[l] = std::rotl((h[l] ^ static_cast<uint64_t>(words[i])) * kMul, 31);
  uint64_t r = n;
  for (uint64_t x : h) r = (r ^ x) * kMul;
  return r ^ (r >> 33);
}

// The settings that pick a library call's path or a kernel's arithmetic (rt::Config, which tests
// and programs may change between flushes): a plan recorded under other settings never replays.
int64_t settings_word() {
  const rt::Config& c = rt::config();
  auto mode = [](const std::string& m) { return m == "auto" ? 0 : m == "generated" ? 1 : m == "cublaslt" ? 2 : 3; };
  return int64_t{c.matmul_tf32} | int64_t{c.conv_tf32} << 1 | int64_t{c.conv_nhwc} << 2 |
         int64_t{c.conv_benchmark} << 3 | int64_t{c.deterministic} << 5 |
         int64_t{mode(c.matmul)} << 8 | int64_t{mode(c.conv)} << 12 | int64_t{c.attention_rows} << 16 |
         int64_t{c.attention_keys} << 32 | int64_t{c.attention_pairs + 1} << 48 | int64_t{c.attention_wgmma + 1} << 52;
}

// Whether `n` has numbers (a pending full, arange, rand or randn).
bool has_numbers(const ir::Node& n) {
  return !n.realized() &&
         (n.op == ir::Op::Full || n.op == ir::Op::Arange || n.op == ir::Op::Rand || n.op == ir::Op::Randn);
}

}  // namespace

void describe(const std::vector<ir::Node*>& order, const std::function<bool(const ir::Node&)>& wanted, bool fusion,
              Signature* out) {
  const uint64_t mark = ir::next_flush_mark();
  out->mark = mark;
  out->leaves.clear();
  out->nodes = order.size();
  size_t bound = 3;  // words needed, at most: resize once, then write through a pointer
  for (size_t i = 0; i < order.size(); ++i) {
    ir::Node* n = order[i];
    n->flush_mark = mark;
    n->flush_pos = static_cast<int32_t>(i);
    bound += 16 + n->shape.size() + n->attrs.dims.size() + n->inputs.size();
  }
  std::vector<int64_t>& words = out->words;
  words.resize(bound);
  int64_t* w = words.data();
  auto dims = [&w](const Shape& d) {
    *w++ = static_cast<int64_t>(d.size());
    for (int64_t x : d) *w++ = x;
  };
  *w++ = fusion;
  *w++ = settings_word();
  *w++ = static_cast<int64_t>(order.size());
  out->numbers.clear();
  out->number_at.assign(order.size(), -1);
  for (const ir::Node* n : order) {
    *w++ = static_cast<int64_t>(n->op) | static_cast<int64_t>(n->dtype) << 16 | int64_t{wanted(*n)} << 32;
    *w++ = device_word(n->device);
    dims(n->shape);
    const ir::Attrs& a = n->attrs;
    dims(a.dims);
    int64_t value = bits(a.value), value2 = bits(a.value2), ivalue = a.ivalue;
    int64_t seed = static_cast<int64_t>(a.seed), counter = static_cast<int64_t>(a.counter);
    if (has_numbers(*n)) {  // the numbers go apart, zeros in their place
      out->number_at[static_cast<size_t>(n->flush_pos)] = static_cast<int32_t>(out->numbers.size());
      int64_t* fields[kNumberFields] = {&value, &ivalue};
      if (n->op == ir::Op::Arange) fields[1] = &value2;
      if (n->op == ir::Op::Rand || n->op == ir::Op::Randn) fields[0] = &seed, fields[1] = &counter;
      for (int64_t* f : fields) {
        out->numbers.push_back(*f);
        *f = 0;
      }
    }
    for (int64_t x : {value, value2, ivalue, a.axis, a.start, a.step, int64_t{a.keepdim}, seed, counter}) *w++ = x;
    // A gather's kernel checks its indices unless they are known in range (lower.cpp), a fact of
    // the index's storage that the leaf words below do not hold.
    if (n->op == ir::Op::Gather) *w++ = ir::gather_indices_known_in_range(*n);
    // A GPU scatter reads its error word back unless its indices are known in range (likewise).
    if (n->op == ir::Op::ScatterAdd || n->op == ir::Op::Scatter) *w++ = ir::scatter_indices_known_in_range(*n);
    *w++ = static_cast<int64_t>(n->inputs.size());
    for (const ir::NodePtr& in : n->inputs) {
      // Pending inputs are all in the order; a realized one is a leaf, numbered below the nodes
      // (flush_pos -1 - leaf) at its first use.
      ir::Node* i = in.get();
      if (i->flush_mark != mark) {
        i->flush_mark = mark;
        i->flush_pos = -1 - static_cast<int32_t>(out->leaves.size());
        out->leaves.push_back(i);
      }
      *w++ = i->flush_pos;
    }
  }
  words.resize(static_cast<size_t>(w - words.data()));
  for (size_t l = 0; l < out->leaves.size(); ++l) {
    const ir::Node* leaf = out->leaves[l];
    words.push_back(static_cast<int64_t>(leaf->dtype));
    words.push_back(device_word(leaf->device));
    push_dims(words, leaf->shape);
    push_dims(words, leaf->layout.strides);
    words.push_back(leaf->layout.offset);
    // The first leaf at the same address (views of one buffer stay views of one buffer; a replay
    // binds pointers by address, so two storages over the same memory, such as two from_blob
    // wraps, count as one), and the address's alignment, which vectorized launches depend on.
    size_t alias = 0;
    while (out->leaves[alias]->storage->data() != leaf->storage->data()) ++alias;
    words.push_back(static_cast<int64_t>(alias));
    words.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(leaf->storage->data()) % 64));
  }
  out->hash = hash_words(words);
}

void mark_overwritten(Plan& plan) {
  // Slots in order, as the replay makes them: slot k is output i of its step; its buffer is its
  // own (reuse -1) or its root's. The latest slot on each root holds the buffer at the end.
  std::vector<std::pair<Step*, size_t>> where;
  std::vector<int64_t> latest;  // per root slot: the latest slot on its buffer
  for (Step& s : plan.steps) {
    s.overwritten.assign(s.outputs.size(), 0);
    for (size_t i = 0; i < s.outputs.size(); ++i) {
      const int64_t slot = static_cast<int64_t>(where.size()), root = s.reuse[i] >= 0 ? s.reuse[i] : slot;
      where.emplace_back(&s, i);
      latest.push_back(slot);
      if (root != slot) {
        auto [step, out] = where[static_cast<size_t>(latest[static_cast<size_t>(root)])];
        step->overwritten[out] = 1;
        latest[static_cast<size_t>(root)] = slot;
      }
    }
  }
}

void number_new(const Signature& sig, const std::vector<ir::Node*>& described, const std::vector<ir::Node*>& order) {
  for (size_t i = 0; i < described.size(); ++i) {
    described[i]->flush_mark = sig.mark;
    described[i]->flush_pos = static_cast<int32_t>(i);
  }
  for (size_t l = 0; l < sig.leaves.size(); ++l) {
    sig.leaves[l]->flush_mark = sig.mark;
    sig.leaves[l]->flush_pos = -1 - static_cast<int32_t>(l);
  }
  int32_t next = static_cast<int32_t>(sig.nodes);
  for (ir::Node* n : order)
    if (n->flush_mark != sig.mark) {
      n->flush_mark = sig.mark;
      n->flush_pos = next++;
    }
}

namespace {

// Whether `plan` was recorded for `sig`'s pinned numbers.
bool pins_match(const Plan& plan, const std::vector<int64_t>& numbers) {
  for (size_t i = 0; i < plan.numbers.size(); ++i)
    if (!plan.patched[i] && plan.numbers[i] != numbers[i]) return false;
  return true;
}

}  // namespace

namespace {

// A plan of an older cache generation, brought up to `generation`: each kernel step takes the
// entry its key has now (an optimized build swapped in for a quick one, as the GPU's tiered
// compiling does while a loop runs). False where a key was cleared or is being compiled again:
// the flush runs normally and records afresh. The same key is the same source and launch, so only
// the loaded kernel changes; the plan's graphs, built over the old kernels, go first.
bool refresh(Plan& plan, uint64_t generation) {
  std::vector<std::shared_ptr<const cache::Entry>> now(plan.steps.size());
  bool changed = false;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    if (!s.entry) continue;  // a library call
    now[i] = cache::global_cache().current(s.entry);
    if (!now[i]) return false;
    changed |= now[i] != s.entry;
  }
  if (changed) {
    plan.graphs.clear();
    plan.captured.clear();
    plan.captures = 0;
    for (size_t i = 0; i < plan.steps.size(); ++i)
      if (now[i]) plan.steps[i].entry = std::move(now[i]);
  }
  plan.generation = generation;
  return true;
}

}  // namespace

Plan* PlanCache::find(const Signature& sig, uint64_t generation) {
  auto it = plans_.find(sig.hash);
  if (it == plans_.end()) return nullptr;
  for (Plan& p : it->second)
    if (p.words == sig.words && pins_match(p, sig.numbers) && (p.generation == generation || refresh(p, generation)))
      return &p;
  return nullptr;
}

namespace {

void patch(Plan& plan, const std::vector<int64_t>& numbers) {
  for (Step& s : plan.steps)
    for (auto [param, number] : s.numbers) s.args.params[static_cast<size_t>(param)] = numbers[static_cast<size_t>(number)];
}

}  // namespace

bool bind_numbers(Plan& plan, const Signature& sig) {
  if (plan.numbers == sig.numbers) return true;
  patch(plan, sig.numbers);
  for (const Step& s : plan.steps)
    if (s.check_variant && !backend::backend_for(s.device).same_variant(s.kernel, s.args, *s.variant, s.device)) {
      patch(plan, plan.numbers);
      return false;
    }
  plan.numbers = sig.numbers;
  return true;
}

bool PlanCache::seen_before(const Signature& sig) {
  if (seen_.size() >= kMaxSeen) seen_.clear();
  return !seen_.insert(sig.hash).second;
}

void PlanCache::store(const Signature& sig, Plan plan) {
  if (count_ >= kMaxPlans) {
    plans_.clear();
    count_ = 0;
  }
  plan.words = sig.words;
  std::list<Plan>& same = plans_[sig.hash];
  // Destroyed, not assigned over: a plan's graph goes before its kernels.
  count_ -= same.size();
  same.remove_if([&](const Plan& p) {
    return p.generation != plan.generation ||
           (p.words == plan.words && pins_match(p, plan.numbers) && pins_match(plan, p.numbers));
  });
  same.push_front(std::move(plan));
  if (same.size() > kPlansPerStructure) same.pop_back();
  count_ += same.size();
}

}  // namespace lf::plan
