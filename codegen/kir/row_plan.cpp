// How a row kernel's passes share work (see RowPlan in row_plan.h): an analysis of the kernel IR
// alone, for the emitter.
#include <algorithm>
#include <vector>

#include "codegen/kir/row_plan.h"

namespace lf::kir {
namespace {

using Op = ir::Op;

// Whether element value `root` costs more than a load: a transcendental, a division or a
// generator in its element cone.
bool costly(const Kernel& k, int root) {
  std::vector<int> stack{root};
  while (!stack.empty()) {
    const Instr& in = k.instrs[static_cast<size_t>(stack.back())];
    stack.pop_back();
    if (in.row) continue;
    if (in.kind == InstrKind::Gen) return true;
    if (in.kind != InstrKind::Op) continue;
    switch (in.op) {
      case Op::Add: case Op::Sub: case Op::Mul: case Op::Neg: case Op::Abs: case Op::Relu: case Op::Where:
      case Op::Cast: case Op::Copy: case Op::Maximum: case Op::Minimum: case Op::Square: case Op::Sign:
      case Op::Floor: case Op::Ceil: case Op::Round: case Op::IsNan: case Op::IsInf: case Op::IsFinite:
      case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::LogicalNot:
      case Op::LogicalAnd: case Op::LogicalOr: break;
      default: return true;
    }
    for (int a : in.args) stack.push_back(a);
  }
  return false;
}

}  // namespace

bool RowPlan::is_row_division(int i) const {
  return std::find(row_divisions.begin(), row_divisions.end(), i) != row_divisions.end();
}

RowPlan row_plan(const Kernel& k) {
  RowPlan plan;
  if (!k.row) return plan;
  size_t n = k.instrs.size();
  // The element values of the output pass.
  std::vector<bool> needed(n, false);
  std::vector<int> stack;
  for (const Output& o : k.outputs)
    if (!k.instrs[static_cast<size_t>(o.instr)].row) stack.push_back(o.instr);
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    const Instr& in = k.instrs[static_cast<size_t>(i)];
    if (needed[static_cast<size_t>(i)] || in.row) continue;
    needed[static_cast<size_t>(i)] = true;
    for (int a : in.args) stack.push_back(a);
  }
  // Kept values: a reduction's costly element value that the output pass needs again, in an
  // element output of its dtype (its own, if it is one). The emitter writes outputs only after
  // reading every value of the element, so the output pass can overwrite what it has read.
  std::vector<bool> taken(k.operands.size(), false);
  for (const Instr& in : k.instrs) {
    if (in.kind != InstrKind::Reduce) continue;
    int v = in.args[0];
    const Instr& val = k.instrs[static_cast<size_t>(v)];
    if (!needed[static_cast<size_t>(v)] || plan.keep.count(v) || !is_floating(val.dtype) || !costly(k, v)) continue;
    int slot = -1;
    for (const Output& o : k.outputs) {
      if (k.instrs[static_cast<size_t>(o.instr)].row || taken[static_cast<size_t>(o.slot)] ||
          k.operands[static_cast<size_t>(o.slot)].dtype != val.dtype)
        continue;
      if (slot < 0 || o.instr == v) slot = o.slot;
    }
    if (slot < 0) continue;
    taken[static_cast<size_t>(slot)] = true;
    plan.keep[v] = slot;
  }
  for (size_t i = 0; i < n; ++i) {
    const Instr& in = k.instrs[i];
    if (!needed[i] || in.kind != InstrKind::Op || in.op != Op::Div || !is_floating(in.dtype)) continue;
    if (!k.instrs[static_cast<size_t>(in.args[1])].row || k.instrs[static_cast<size_t>(in.args[0])].row) continue;
    plan.row_divisions.push_back(static_cast<int>(i));
  }
  return plan;
}

}  // namespace lf::kir
