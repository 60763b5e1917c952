#include "codegen/kernel_ir.h"

#include <cstring>
#include <sstream>

namespace lf::kir {

std::string Kernel::key() const {
  std::ostringstream os;
  os << (row ? "row" : "pw") << '/' << outer_rank << '/' << inner_rank << "|ops:";
  for (const Operand& o : operands) {
    os << static_cast<int>(o.kind) << dtype_name(o.dtype) << (o.row ? "r" : "e");
    for (StrideClass s : o.strides) os << static_cast<int>(s);
    os << ',';
  }
  os << "|p:";
  for (ParamKind p : params) os << (p == ParamKind::Float ? 'f' : 'i');
  os << "|i:";
  for (const Instr& in : instrs) {
    os << static_cast<int>(in.kind) << '.' << static_cast<int>(in.op) << '.' << static_cast<int>(in.dtype) << '.'
       << (in.row ? 'r' : 'e') << '.' << in.slot;
    for (int a : in.args) os << ',' << a;
    for (int p : in.params) os << ';' << p;
    os << ' ';
  }
  os << "|o:";
  for (const Output& o : outputs) os << o.instr << '>' << o.slot << ' ';
  return os.str();
}

std::string Kernel::summary() const {
  std::string s;
  std::string reduces;
  for (const Instr& in : instrs) {
    if (in.kind == InstrKind::Op && in.op != ir::Op::Copy) s += std::string(s.empty() ? "" : ",") + ir::op_name(in.op);
    if (in.kind == InstrKind::Gen) s += std::string(s.empty() ? "" : ",") + ir::op_name(in.op);
    if (in.kind == InstrKind::Reduce) reduces += std::string(reduces.empty() ? "" : ",") + ir::op_name(in.op);
  }
  if (s.empty()) s = "copy";
  if (!reduces.empty()) s += " -> " + reduces + "[inner " + std::to_string(inner_rank) + "d]";
  return s;
}

int64_t LaunchArgs::rows() const {
  int64_t n = 1;
  for (int i = 0; i < outer_rank; ++i) n *= sizes[i];
  return n;
}

int64_t LaunchArgs::inner_numel() const {
  int64_t n = 1;
  for (size_t i = static_cast<size_t>(outer_rank); i < sizes.size(); ++i) n *= sizes[i];
  return n;
}

std::vector<int64_t> pack_meta(const Kernel& k, const LaunchArgs& a) {
  std::vector<int64_t> meta = a.sizes;
  size_t rank = a.sizes.size();
  for (size_t o = 0; o < k.operands.size(); ++o) {
    meta.push_back(a.offsets[o]);
    for (size_t d = 0; d < rank; ++d) meta.push_back(a.strides[o * rank + d]);
  }
  meta.insert(meta.end(), a.params.begin(), a.params.end());
  return meta;
}

}  // namespace lf::kir
