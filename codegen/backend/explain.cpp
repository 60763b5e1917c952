#include "codegen/backend/explain.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "codegen/ir/op.h"

namespace lf::backend {
namespace {

std::string class_list(const std::vector<kir::StrideClass>& strides) {
  std::string s = "[";
  for (size_t i = 0; i < strides.size(); ++i) {
    kir::StrideClass c = strides[i];
    s += (i ? "," : "") + std::string(c == kir::StrideClass::Zero ? "0" : c == kir::StrideClass::Unit ? "1" : "n");
  }
  return s + "]";
}

std::string plural(size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

// What is new in `now` against `was`, one phrase per difference.
std::vector<std::string> differences(const KeyShape& now, const KeyShape& was) {
  std::vector<std::string> out;
  if (now.row != was.row) out.push_back(now.row ? "row kernel (was pointwise)" : "pointwise kernel (was row)");
  int rank = now.outer_rank + now.inner_rank, old_rank = was.outer_rank + was.inner_rank;
  if (rank != old_rank) {
    out.push_back("rank " + std::to_string(rank) + " (was " + std::to_string(old_rank) + ")");
  } else if (now.inner_rank != was.inner_rank) {
    out.push_back("inner rank " + std::to_string(now.inner_rank) + " (was " + std::to_string(was.inner_rank) + ")");
  }
  auto side = [](const KeyShape& k, bool output) {
    std::vector<const KeyShape::Operand*> v;
    for (const KeyShape::Operand& o : k.operands)
      if (o.output == output) v.push_back(&o);
    return v;
  };
  bool dtype_said = false;
  for (bool output : {false, true}) {
    auto a = side(now, output), b = side(was, output);
    const char* what = output ? "output" : "input";
    if (a.size() != b.size()) {
      out.push_back(plural(a.size(), what) + " (was " + std::to_string(b.size()) + ")");
      continue;
    }
    // One dtype change over every operand (x.double() + y.double()) is said once.
    bool all_changed = !a.empty() && !dtype_said;
    for (size_t i = 0; i < a.size() && all_changed; ++i)
      all_changed = a[i]->dtype != b[i]->dtype && a[i]->dtype == a[0]->dtype && b[i]->dtype == b[0]->dtype;
    if (all_changed && !output) {
      bool outputs_too = true;
      auto ao = side(now, true), bo = side(was, true);
      for (size_t i = 0; i < ao.size() && outputs_too && ao.size() == bo.size(); ++i)
        outputs_too = ao[i]->dtype == a[0]->dtype && bo[i]->dtype == b[0]->dtype;
      if (outputs_too && ao.size() == bo.size()) {
        out.push_back(std::string("dtype ") + dtype_name(a[0]->dtype) + " (was " + dtype_name(b[0]->dtype) + ")");
        dtype_said = true;
      }
    }
    for (size_t i = 0; i < a.size(); ++i) {
      std::string who = std::string(what) + " " + std::to_string(i) + ": ";
      if (a[i]->dtype != b[i]->dtype && !dtype_said)
        out.push_back(who + "dtype " + dtype_name(a[i]->dtype) + " (was " + dtype_name(b[i]->dtype) + ")");
      std::string la = layout_name(a[i]->strides), lb = layout_name(b[i]->strides);
      if (la != lb) out.push_back(who + la + " layout (was " + lb + ")");
      else if (a[i]->strides != b[i]->strides && rank == old_rank)
        out.push_back(who + "strides " + class_list(a[i]->strides) + " (was " + class_list(b[i]->strides) + ")");
    }
  }
  if (now.compute != was.compute && !dtype_said) out.push_back("computes in " + now.compute + " (was " + was.compute + ")");
  for (const auto& [name, value] : now.variant) {
    auto it = std::find_if(was.variant.begin(), was.variant.end(), [&](const auto& p) { return p.first == name; });
    if (it == was.variant.end()) out.push_back("variant: " + name + " " + value + " (new)");
    else if (it->second != value) out.push_back("variant: " + name + " " + value + " (was " + it->second + ")");
  }
  return out;
}

struct Registry {
  std::mutex mu;
  std::unordered_map<std::string, std::vector<KeyShape>> by_ops;  // backend + "|" + ops
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: compiles may run at exit
  return *r;
}

// Kernels remembered per op list: enough for any model's variants, bounded for a long process.
constexpr size_t kRemembered = 256;

}  // namespace

std::string layout_name(const std::vector<kir::StrideClass>& strides) {
  bool zero = false, unit = false;
  for (kir::StrideClass c : strides) {
    zero |= c == kir::StrideClass::Zero;
    unit |= c == kir::StrideClass::Unit;
  }
  bool all_zero = std::all_of(strides.begin(), strides.end(), [](kir::StrideClass c) { return c == kir::StrideClass::Zero; });
  if (strides.empty() || all_zero) return "scalar";
  if (zero) return "broadcast";
  if (strides.back() == kir::StrideClass::Unit) return "contiguous";
  return unit ? "transposed" : "strided";
}

KeyShape key_shape(const kir::Kernel& kernel, const Variant& variant, const char* backend, const std::string& key) {
  KeyShape k;
  k.backend = backend;
  k.key = key;
  k.row = kernel.row;
  k.outer_rank = kernel.outer_rank;
  k.inner_rank = kernel.inner_rank;
  std::vector<DType> computed;
  for (const kir::Instr& in : kernel.instrs) {
    bool named = (in.kind == kir::InstrKind::Op && in.op != ir::Op::Copy) || in.kind == kir::InstrKind::Gen ||
                 in.kind == kir::InstrKind::Reduce;
    if (named) k.ops += (k.ops.empty() ? "" : ",") + std::string(ir::op_name(in.op));
    if (in.kind == kir::InstrKind::Op && std::find(computed.begin(), computed.end(), in.dtype) == computed.end())
      computed.push_back(in.dtype);
  }
  if (k.ops.empty()) k.ops = "copy";
  for (DType d : computed) k.compute += (k.compute.empty() ? "" : ",") + std::string(dtype_name(d));
  for (const kir::Operand& o : kernel.operands) {
    if (o.kind == kir::Operand::Kind::Index) continue;
    k.operands.push_back({o.kind == kir::Operand::Kind::Output, o.dtype, o.strides});
  }
  k.variant = variant.describe();
  return k;
}

std::string explain_new(const KeyShape& shape) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_ops.find(shape.backend + "|" + shape.ops);
  if (it == r.by_ops.end() || it->second.empty()) return "";
  std::vector<std::string> best;
  bool found = false, same_key = false;
  for (auto k = it->second.rbegin(); k != it->second.rend(); ++k) {  // the most recent wins a tie
    if (k->key == shape.key) same_key = true;
    std::vector<std::string> d = differences(shape, *k);
    if (!found || d.size() < best.size()) best = std::move(d), found = true;
  }
  if (same_key) return "the same key again (the kernel cache was cleared since it was compiled)";
  if (best.empty()) return "other instructions over the same ops, dtypes, layouts and ranks";
  std::string s;
  for (const std::string& d : best) s += (s.empty() ? "" : "; ") + d;
  return s;
}

void remember(KeyShape shape) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<KeyShape>& v = r.by_ops[shape.backend + "|" + shape.ops];
  for (const KeyShape& k : v)
    if (k.key == shape.key) return;
  if (v.size() >= kRemembered) v.erase(v.begin());
  v.push_back(std::move(shape));
}

}  // namespace lf::backend
