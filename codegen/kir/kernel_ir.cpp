#include "codegen/kir/kernel_ir.h"

#include <charconv>
#include <cstring>
#include <sstream>

namespace lf::kir {

namespace {

// The key is built on every flush (it is what a cache hit costs), so it is appended by hand
// rather than through a stream.
void put(std::string& s, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, end);
}

}  // namespace

std::string Kernel::key() const {
  std::string s;
  s.reserve(64 + 16 * operands.size() + 24 * instrs.size());
  s += row ? "row/" : "pw/";
  put(s, outer_rank);
  s += '/';
  put(s, inner_rank);
  s += "|ops:";
  for (const Operand& o : operands) {
    put(s, static_cast<int>(o.kind));
    s += dtype_name(o.dtype);
    s += o.row ? 'r' : 'e';
    for (StrideClass c : o.strides) s += static_cast<char>('0' + static_cast<int>(c));
    s += ',';
  }
  s += "|p:";
  for (ParamKind p : params) s += p == ParamKind::Float ? 'f' : 'i';
  s += "|i:";
  for (const Instr& in : instrs) {
    put(s, static_cast<int>(in.kind));
    s += '.';
    put(s, static_cast<int>(in.op));
    s += '.';
    put(s, static_cast<int>(in.dtype));
    s += '.';
    s += in.row ? 'r' : 'e';
    s += '.';
    put(s, in.slot);
    for (int a : in.args) {
      s += ',';
      put(s, a);
    }
    for (int p : in.params) {
      s += ';';
      put(s, p);
    }
    s += ' ';
  }
  s += "|o:";
  for (const Output& o : outputs) {
    put(s, o.instr);
    s += '>';
    put(s, o.slot);
    s += ' ';
  }
  if (error_slot >= 0) {
    s += "|err:";
    put(s, error_slot);
  }
  return s;
}

bool Kernel::has_scan() const {
  for (const Instr& in : instrs)
    if (in.kind == InstrKind::Scan) return true;
  return false;
}

std::string Kernel::summary() const {
  std::string s;
  std::string reduces;
  for (const Instr& in : instrs) {
    if (in.kind == InstrKind::Op && in.op != ir::Op::Copy) s += std::string(s.empty() ? "" : ",") + ir::op_name(in.op);
    if (in.kind == InstrKind::Gen) s += std::string(s.empty() ? "" : ",") + ir::op_name(in.op);
    if (in.kind == InstrKind::Gather) s += std::string(s.empty() ? "" : ",") + "gather";
    if (in.kind == InstrKind::Remap) s += std::string(s.empty() ? "" : ",") + "remap";
    if (in.kind == InstrKind::Scan) s += std::string(s.empty() ? "" : ",") + ir::op_name(in.op) + "[scan]";
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
  std::vector<int64_t> meta;
  pack_meta(k, a, &meta);
  return meta;
}

void pack_meta(const Kernel& k, const LaunchArgs& a, std::vector<int64_t>* out) {
  std::vector<int64_t>& meta = *out;
  size_t rank = a.sizes.size();
  meta.clear();
  meta.reserve(rank + k.operands.size() * (1 + rank) + a.params.size());  // one allocation at most
  meta.insert(meta.end(), a.sizes.begin(), a.sizes.end());
  for (size_t o = 0; o < k.operands.size(); ++o) {
    meta.push_back(a.offsets[o]);
    for (size_t d = 0; d < rank; ++d) meta.push_back(a.strides[o * rank + d]);
  }
  meta.insert(meta.end(), a.params.begin(), a.params.end());
}

}  // namespace lf::kir
