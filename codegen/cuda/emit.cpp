#include "codegen/cuda/emit.h"
#include "codegen/cuda/ops.h"

#include <algorithm>
#include <functional>
#include <cmath>
#include <sstream>
#include <vector>

#include "lazyfuse/types.h"

// GCC 12 reports false -Wrestrict warnings inside std::string concatenation (GCC bug 105329).
#pragma GCC diagnostic ignored "-Wrestrict"

namespace lf::cuda {
namespace {

using kir::Instr;
using kir::InstrKind;
using Op = ir::Op;

class Emitter {
 public:
  Emitter(const kir::Kernel& k, const std::string& name, const EmitOptions& opt) : k_(k), name_(name), opt_(opt) {
    rank_ = k.outer_rank + k.inner_rank;
    idx_ = opt.index32 ? "int" : "i64";
  }

  std::string run() {
    int nmeta = rank_ + static_cast<int>(k_.operands.size()) * (1 + rank_) + static_cast<int>(k_.params.size());
    os_ << kPrelude;
    os_ << "struct Meta { i64 v[" << std::max(nmeta, 1) << "]; };\n";
    os_ << "struct Ptrs { void* p[" << std::max<size_t>(k_.operands.size(), 1) << "]; };\n";
    os_ << "struct Scratch { void* partial; void* partial_index; unsigned* counters; };\n";
    if (opt_.matmul_product >= 0) {
      os_ << "struct Gemm { const void* a; const void* b; i64 m, n, k, a_off, a_sm, a_sk, b_off, b_sk, b_sn, batch_rank; i64 batch["
          << kGemmMaxBatchRank << "], a_bs[" << kGemmMaxBatchRank << "], b_bs[" << kGemmMaxBatchRank << "]; };\n";
    }
    os_ << "extern \"C\" __global__ void __launch_bounds__(" << kBlockThreads << ") " << name_
        << "(const Meta meta, const Ptrs ptrs, const Scratch scratch"
        << (opt_.matmul_product >= 0 ? ", const Gemm g" : "") << ") {\n";
    emit_metadata();
    if (opt_.matmul_product >= 0) emit_matmul_kernel();
    else if (k_.row) emit_row_kernel();
    else emit_pointwise_kernel();
    os_ << "}\n";
    return os_.str();
  }

 private:
  // ---- metadata

  std::string size(int d) const { return "n" + std::to_string(d); }
  std::string stride(size_t o, int d) const {
    switch (k_.operands[o].strides[d]) {
      case kir::StrideClass::Zero: return "0";
      case kir::StrideClass::Unit: return "1";
      case kir::StrideClass::Any: break;
    }
    return "s" + std::to_string(o) + "_" + std::to_string(d);
  }

  void emit_metadata() {
    int at = 0;
    for (int d = 0; d < rank_; ++d) os_ << "  const " << idx_ << " " << size(d) << " = (" << idx_ << ")meta.v[" << at++ << "];\n";
    for (size_t o = 0; o < k_.operands.size(); ++o) {
      os_ << "  const " << idx_ << " off" << o << " = (" << idx_ << ")meta.v[" << at++ << "];\n";
      for (int d = 0; d < rank_; ++d) {
        if (k_.operands[o].strides[d] == kir::StrideClass::Any)
          os_ << "  const " << idx_ << " " << stride(o, d) << " = (" << idx_ << ")meta.v[" << at << "];\n";
        ++at;
      }
      if (k_.operands[o].kind != kir::Operand::Kind::Index) {
        const char* qual = k_.operands[o].kind == kir::Operand::Kind::Input ? "const " : "";
        os_ << "  " << qual << stype(k_.operands[o].dtype) << "* __restrict__ p" << o << " = (" << qual
            << stype(k_.operands[o].dtype) << "*)ptrs.p[" << o << "];\n";
      }
    }
    for (size_t p = 0; p < k_.params.size(); ++p) os_ << "  const i64 q" << p << " = meta.v[" << at++ << "];\n";
  }

  // Declares b<o> = the offset of operand o at the outer index held in `row`.
  void emit_row_bases(const std::string& row, const std::string& indent) {
    os_ << indent << idx_ << " rest_ = " << row << ";\n";
    std::vector<std::string> idx(k_.outer_rank);
    for (int d = k_.outer_rank - 1; d >= 0; --d) {
      std::string v = "o" + std::to_string(d);
      if (d == 0) {
        os_ << indent << idx_ << " " << v << " = rest_;\n";
      } else {
        os_ << indent << idx_ << " " << v << " = rest_ % " << size(d) << "; rest_ /= " << size(d) << ";\n";
      }
    }
    os_ << indent << "(void)rest_;\n";
    for (size_t o = 0; o < k_.operands.size(); ++o) {
      os_ << indent << idx_ << " b" << o << " = off" << o;
      for (int d = 0; d < k_.outer_rank; ++d)
        if (stride(o, d) != "0") os_ << " + o" << d << " * " << stride(o, d);
      os_ << ";\n";
    }
  }

  // Declares e<o> = the offset of operand o at inner linear index `j` (row bases b<o> in scope).
  void emit_element_offsets(const std::string& j, const std::string& indent) {
    int inner = k_.inner_rank;
    std::vector<std::string> idx(inner);
    if (inner == 1) {
      idx[0] = j;
    } else {
      os_ << indent << idx_ << " r_ = " << j << ";\n";
      for (int d = inner - 1; d >= 0; --d) {
        idx[d] = "i" + std::to_string(d);
        if (d == 0) os_ << indent << idx_ << " " << idx[d] << " = r_;\n";
        else os_ << indent << idx_ << " " << idx[d] << " = r_ % " << size(k_.outer_rank + d) << "; r_ /= " << size(k_.outer_rank + d) << ";\n";
      }
    }
    for (size_t o = 0; o < k_.operands.size(); ++o) {
      os_ << indent << idx_ << " e" << o << " = b" << o;
      for (int d = 0; d < inner; ++d) {
        std::string s = stride(o, k_.outer_rank + d);
        if (s == "0") continue;
        os_ << " + " << idx[d] << (s == "1" ? "" : " * " + s);
      }
      os_ << ";\n";
    }
  }

  // ---- values

  std::string v(int i) const { return "v" + std::to_string(i); }

  bool cached(int slot) const { return opt_.row_cache > 0 && slot < static_cast<int>(cache_.size()) && cache_[slot]; }

  // Emits `body` (which declares nothing outside its scope) for each of this thread's elements of
  // the row in [lo, hi), with j64 and j in scope. Register-cached rows walk k_ over the thread's
  // row_cache slots (unrolled, so the cache stays in registers). Others stride over the range, four
  // elements a step with no bounds check between them, so four loads are in flight, then the rest.
  void emit_pass(const std::string& lo, const std::string& hi, const std::string& indent,
                 const std::function<void(const std::string&)>& body) {
    auto element = [&](const std::string& in) {
      os_ << in << "const " << idx_ << " j = (" << idx_ << ")j64;\n";
      body(in);
    };
    if (opt_.row_cache > 0) {
      os_ << indent << "#pragma unroll\n";
      os_ << indent << "for (int k_ = 0; k_ < " << opt_.row_cache << "; ++k_) {\n";
      os_ << indent << "  const i64 j64 = (i64)threadIdx.x + (i64)k_ * " << kBlockThreads << ";\n";
      if (!opt_.row_full) os_ << indent << "  if (j64 >= " << hi << ") break;\n";
      element(indent + "  ");
      os_ << indent << "}\n";
      return;
    }
    if (opt_.vec4) return emit_pass_vec4(lo, hi, indent, element);
    os_ << indent << "{\n";
    os_ << indent << "  i64 jb_ = " << lo << " + threadIdx.x;\n";
    os_ << indent << "  for (; jb_ + 3 * (i64)blockDim.x < " << hi << "; jb_ += 4 * (i64)blockDim.x) {\n";
    os_ << indent << "    #pragma unroll\n";
    os_ << indent << "    for (int u_ = 0; u_ < 4; ++u_) {\n";
    os_ << indent << "      const i64 j64 = jb_ + u_ * (i64)blockDim.x;\n";
    element(indent + "      ");
    os_ << indent << "    }\n";
    os_ << indent << "  }\n";
    os_ << indent << "  for (; jb_ < " << hi << "; jb_ += blockDim.x) {\n";
    os_ << indent << "    const i64 j64 = jb_;\n";
    element(indent + "    ");
    os_ << indent << "  }\n";
    os_ << indent << "}\n";
  }

  // emit_pass for vec4 row kernels: each thread reads 4 consecutive elements of every contiguous
  // per-element input with one 16-byte load, 4 such loads (16 elements) in flight a step, then
  // whole vectors for the rest ([lo, hi) are multiples of 4). Lane u_ of vector g_ is L<o>[g_][u_].
  void emit_pass_vec4(const std::string& lo, const std::string& hi, const std::string& indent,
                      const std::function<void(const std::string&)>& element) {
    std::vector<bool> vec(k_.operands.size(), false);
    for (const Instr& in : k_.instrs)
      if (in.kind == InstrKind::Load && !in.row && unit_inner(in.slot)) vec[in.slot] = true;
    auto loads = [&](const std::string& base, int groups, const std::string& in) {
      for (size_t o = 0; o < vec.size(); ++o) {
        if (!vec[o]) continue;
        DType d = k_.operands[o].dtype;
        std::string L = "L" + std::to_string(o);
        os_ << in << ctype(d) << " " << L << "[" << groups << "][4];\n";
        if (groups > 1) os_ << in << "#pragma unroll\n" << in << "for (int g_ = 0; g_ < " << groups << "; ++g_) {\n";
        else os_ << in << "{\n" << in << "  const int g_ = 0;\n";
        os_ << in << "  const " << vec_type(d) << " t_ = __ldg((const " << vec_type(d) << "*)(p" << o << " + b" << o << " + "
            << base << " + g_ * 4 * (i64)blockDim.x));\n";
        os_ << in << "  " << L << "[g_][0] = t_.x; " << L << "[g_][1] = t_.y; " << L << "[g_][2] = t_.z; " << L << "[g_][3] = t_.w;\n";
        os_ << in << "}\n";
      }
    };
    auto lanes = [&](int groups, const std::string& in) {
      os_ << in << "#pragma unroll\n" << in << "for (int g_ = 0; g_ < " << groups << "; ++g_) {\n";
      os_ << in << "  #pragma unroll\n" << in << "  for (int u_ = 0; u_ < 4; ++u_) {\n";
      os_ << in << "    const i64 j64 = jb_ + g_ * 4 * (i64)blockDim.x + u_;\n";
      element(in + "    ");
      os_ << in << "  }\n" << in << "}\n";
    };
    lane_ = "[g_][u_]";
    os_ << indent << "{\n";
    os_ << indent << "  i64 jb_ = " << lo << " + 4 * (i64)threadIdx.x;\n";
    os_ << indent << "  for (; jb_ + 12 * (i64)blockDim.x < " << hi << "; jb_ += 16 * (i64)blockDim.x) {\n";
    loads("jb_", 4, indent + "    ");
    lanes(4, indent + "    ");
    os_ << indent << "  }\n";
    os_ << indent << "  for (; jb_ < " << hi << "; jb_ += 4 * (i64)blockDim.x) {\n";
    loads("jb_", 1, indent + "    ");
    lanes(1, indent + "    ");
    os_ << indent << "  }\n";
    os_ << indent << "}\n";
    lane_.clear();
  }

  bool unit_inner(int slot) const { return k_.operands[slot].strides[rank_ - 1] == kir::StrideClass::Unit; }

  std::string load(int slot, const std::string& off, DType d) {
    std::string x = "p" + std::to_string(slot) + "[" + off + "]";
    switch (d) {
      case DType::Bool: return "(" + x + " != 0)";
      case DType::Float16: return "lf_h2f(" + x + ")";
      case DType::BFloat16: return "lf_b2f(" + x + ")";
      default: return "__ldg(&" + x + ")";
    }
  }
  std::string store(int slot, const std::string& off, DType d, const std::string& val) {
    std::string x = "p" + std::to_string(slot) + "[" + off + "]";
    switch (d) {
      case DType::Bool: return x + " = (unsigned char)(" + val + ");";
      case DType::Float16: return x + " = lf_f2h(" + val + ");";
      case DType::BFloat16: return x + " = lf_f2b(" + val + ");";
      default: return x + " = " + val + ";";
    }
  }
  static std::string round16(const std::string& e, DType d) {
    if (d == DType::Float16) return "lf_r16h(" + e + ")";
    if (d == DType::BFloat16) return "lf_r16b(" + e + ")";
    return e;
  }

  // A conversion with the reference executor's rules (float->int saturates, NaN -> 0).
  std::string convert(const std::string& x, DType from, DType to) {
    if (from == to) return x;
    if (to == DType::Bool) return "(" + x + " != 0)";
    std::string r;
    if (is_floating(from) && !is_floating(to)) {
      // cvt.rzi saturates out-of-range values; NaN must give 0 (the hardware gives INT_MIN).
      r = std::string("([&]{ auto f_ = ") + x + "; return f_ != f_ ? (" + ctype(to) + ")0 : (" + ctype(to) + ")f_; }())";
    } else {
      r = std::string("((") + ctype(to) + ")(" + x + "))";
    }
    return is_floating(to) ? round16(r, to) : r;
  }

  std::string generate(const Instr& in, const std::string& index) {
    std::string d = "(double)";
    if (in.op == Op::Arange) {
      std::string start = "__longlong_as_double(q" + std::to_string(in.params[0]) + ")";
      std::string step = "__longlong_as_double(q" + std::to_string(in.params[1]) + ")";
      return convert("(" + start + " + (double)(" + index + ") * " + step + ")", DType::Float64, in.dtype);
    }
    std::string h = "lf_mix((u64)q" + std::to_string(in.params[0]) + ", (u64)q" + std::to_string(in.params[1]) +
                    " + (u64)(" + index + "))";
    if (in.op == Op::Rand) {
      int bits = in.dtype == DType::Float64 ? 53 : in.dtype == DType::Float16 ? 11 : in.dtype == DType::BFloat16 ? 8 : 24;
      std::string u = "((double)(" + h + " >> " + std::to_string(64 - bits) + ") * " + lit(std::ldexp(1.0, -bits), DType::Float64) + ")";
      return convert(u, DType::Float64, in.dtype);
    }
    if (in.dtype == DType::Float64) {
      return "([&]{ u64 h_ = " + h + "; double u1 = (double)((h_ >> 32) + 1) * 2.3283064365386962890625e-10;"
             " double u2 = (double)(h_ & 0xffffffffull) * 2.3283064365386962890625e-10;"
             " return sqrt(-2.0 * log(u1)) * cos(6.28318530717958647692 * u2); }())";
    }
    return round16("([&]{ u64 h_ = " + h + "; float u1 = (float)((h_ >> 40) + 1) * 5.9604644775390625e-8f;"
                   " float u2 = (float)(h_ & 0xffffffull) * 5.9604644775390625e-8f;"
                   " return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2); }())",
                   in.dtype);
  }

  // The expression of instruction i; offsets come from `prefix` ("e" for elements, "b" for rows).
  std::string compute(int i, const std::string& prefix) {
    const Instr& in = k_.instrs[i];
    switch (in.kind) {
      case InstrKind::Load:
        if (in.slot == opt_.matmul_product) return "mmv_";
        if (prefix == "e" && cached(in.slot)) return "c" + std::to_string(in.slot) + "[k_]";
        if (prefix == "e" && !lane_.empty() && unit_inner(in.slot)) return "L" + std::to_string(in.slot) + lane_;
        return load(in.slot, prefix + std::to_string(in.slot), in.dtype);
      case InstrKind::Param: {
        std::string q = "q" + std::to_string(in.slot);
        if (k_.params[in.slot] == kir::ParamKind::Float) return convert("__longlong_as_double(" + q + ")", DType::Float64, in.dtype);
        return convert(q, DType::Int64, in.dtype);
      }
      case InstrKind::Gen: return generate(in, prefix + std::to_string(in.slot));
      case InstrKind::Reduce: throw Error("cuda emitter: reduction used before it was computed (internal error)");
      case InstrKind::Op: break;
    }
    std::vector<std::string> args;
    for (int a : in.args) args.push_back(v(a));
    if (in.op == Op::Where) return "(" + args[0] + " ? " + args[1] + " : " + args[2] + ")";
    if (in.op == Op::Cast) return convert(args[0], k_.instrs[in.args[0]].dtype, in.dtype);
    std::string e = elementwise(in.op, args, k_.instrs[in.args.back()].dtype);
    return is_floating(in.dtype) ? round16(e, in.dtype) : e;
  }

  // Emits, in order, the instructions of the cone of `roots` that have phase `row`; for element
  // cones, row values they use are emitted first at row scope (emit_row_values).
  std::vector<int> cone(const std::vector<int>& roots, bool row) {
    std::vector<bool> seen(k_.instrs.size(), false);
    std::vector<int> stack(roots.begin(), roots.end()), out;
    while (!stack.empty()) {
      int i = stack.back();
      stack.pop_back();
      if (seen[i]) continue;
      seen[i] = true;
      if (k_.instrs[i].row != row) continue;
      out.push_back(i);
      if (k_.instrs[i].kind == InstrKind::Reduce) continue;
      for (int a : k_.instrs[i].args) stack.push_back(a);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // Row values (not yet emitted) needed by the element cone of `roots`.
  void emit_row_values(const std::vector<int>& roots, const std::string& indent) {
    std::vector<int> elems = cone(roots, false);
    std::vector<int> row_roots;
    for (int i : roots)
      if (k_.instrs[i].row) row_roots.push_back(i);
    for (int e : elems)
      for (int a : k_.instrs[e].args)
        if (k_.instrs[a].row) row_roots.push_back(a);
    for (int r : cone(row_roots, true)) {
      if (row_done_[r]) continue;
      if (k_.instrs[r].kind == InstrKind::Reduce) continue;  // computed by its pass
      row_done_[r] = true;
      os_ << indent << "const " << ctype(k_.instrs[r].dtype) << " " << v(r) << " = " << compute(r, "b") << ";\n";
    }
  }

  void emit_element_values(const std::vector<int>& roots, const std::string& indent) {
    for (int i : cone(roots, false))
      os_ << indent << "const " << ctype(k_.instrs[i].dtype) << " " << v(i) << " = " << compute(i, "e") << ";\n";
  }

  // ---- pointwise

  void emit_pointwise_kernel() {
    if (opt_.vec4) return emit_pointwise_vec4();
    std::string cols = size(rank_ - 1);
    os_ << "  " << idx_ << " rows = 1";
    for (int d = 0; d < k_.outer_rank; ++d) os_ << " * " << size(d);
    os_ << ";\n";
    os_ << "  const " << idx_ << " total = rows * " << cols << ";\n";
    // The loop counter is 64-bit even with 32-bit index math, so that stepping past the end cannot wrap.
    os_ << "  for (i64 t64 = (i64)blockIdx.x * blockDim.x + threadIdx.x; t64 < total; t64 += (i64)gridDim.x * blockDim.x) {\n";
    os_ << "    const " << idx_ << " t = (" << idx_ << ")t64;\n";
    if (k_.outer_rank == 0) {
      os_ << "    const " << idx_ << " row = 0, col = t;\n";
    } else {
      os_ << "    const " << idx_ << " row = t / " << cols << ", col = t - row * " << cols << ";\n";
    }
    emit_row_bases("row", "    ");
    emit_element_offsets("col", "    ");
    std::vector<int> roots;
    for (const kir::Output& o : k_.outputs) roots.push_back(o.instr);
    row_done_.assign(k_.instrs.size(), false);
    emit_element_values(roots, "    ");
    for (const kir::Output& o : k_.outputs)
      os_ << "    " << store(o.slot, "e" + std::to_string(o.slot), k_.operands[o.slot].dtype, v(o.instr)) << "\n";
    os_ << "  }\n";
  }

  // ---- matmul (see cuda_emit.h)

  void emit_matmul_kernel() {
    DType d = k_.operands[static_cast<size_t>(opt_.matmul_product)].dtype;
    bool integer = !is_floating(d);
    std::string acc = d == DType::Float64 ? "double" : integer ? "u64" : "float";
    std::string elem = stype(d);
    auto widen = [&](const std::string& x) {
      if (d == DType::Float16) return "lf_h2f(" + x + ")";
      if (d == DType::BFloat16) return "lf_b2f(" + x + ")";
      return "(" + acc + ")(" + x + ")";
    };
    constexpr int T = kGemmTile;
    os_ << "  __shared__ " << acc << " As_[8][" << T << "], Bs_[8][" << T << "];\n";
    os_ << "  const int tx_ = threadIdx.x % 16, ty_ = threadIdx.x / 16;\n";
    os_ << "  const i64 bb_ = blockIdx.z, m0_ = (i64)blockIdx.y * " << T << ", n0_ = (i64)blockIdx.x * " << T << ";\n";
    os_ << "  i64 ab_ = g.a_off, bb0_ = g.b_off;\n";
    os_ << "  { i64 r_ = bb_; for (int d_ = (int)g.batch_rank - 1; d_ >= 0; --d_) { i64 i_ = r_ % g.batch[d_]; r_ /= g.batch[d_];"
           " ab_ += i_ * g.a_bs[d_]; bb0_ += i_ * g.b_bs[d_]; } }\n";
    os_ << "  const " << elem << "* __restrict__ A_ = (const " << elem << "*)g.a;\n";
    os_ << "  const " << elem << "* __restrict__ B_ = (const " << elem << "*)g.b;\n";
    os_ << "  " << acc << " acc_[8][8];\n";
    os_ << "  #pragma unroll\n  for (int i = 0; i < 8; ++i)\n    #pragma unroll\n    for (int j = 0; j < 8; ++j) acc_[i][j] = 0;\n";
    os_ << "  for (i64 k0_ = 0; k0_ < g.k; k0_ += 8) {\n";
    // A tile: 128 rows x 8 k, consecutive threads along k; B tile: 8 k x 128 columns, along n.
    os_ << "    #pragma unroll\n    for (int l_ = 0; l_ < 4; ++l_) {\n";
    os_ << "      const int t_ = threadIdx.x + " << kBlockThreads << " * l_;\n";
    os_ << "      const int kk_ = t_ % 8, mm_ = t_ / 8;\n";
    os_ << "      const i64 gm_ = m0_ + mm_, gk_ = k0_ + kk_;\n";
    os_ << "      As_[kk_][mm_] = (gm_ < g.m && gk_ < g.k) ? " << widen("A_[ab_ + gm_ * g.a_sm + gk_ * g.a_sk]") << " : (" << acc << ")0;\n";
    os_ << "      const int nn_ = t_ % " << T << ", kb_ = t_ / " << T << ";\n";
    os_ << "      const i64 gn_ = n0_ + nn_, gkb_ = k0_ + kb_;\n";
    os_ << "      Bs_[kb_][nn_] = (gn_ < g.n && gkb_ < g.k) ? " << widen("B_[bb0_ + gkb_ * g.b_sk + gn_ * g.b_sn]") << " : (" << acc << ")0;\n";
    os_ << "    }\n";
    os_ << "    __syncthreads();\n";
    os_ << "    #pragma unroll\n    for (int kk_ = 0; kk_ < 8; ++kk_) {\n";
    os_ << "      " << acc << " a_[8], b_[8];\n";
    os_ << "      #pragma unroll\n      for (int i = 0; i < 8; ++i) a_[i] = As_[kk_][ty_ + 16 * i];\n";
    os_ << "      #pragma unroll\n      for (int j = 0; j < 8; ++j) b_[j] = Bs_[kk_][tx_ + 16 * j];\n";
    os_ << "      #pragma unroll\n      for (int i = 0; i < 8; ++i)\n        #pragma unroll\n"
           "        for (int j = 0; j < 8; ++j) acc_[i][j] += a_[i] * b_[j];\n";
    os_ << "    }\n";
    os_ << "    __syncthreads();\n";
    os_ << "  }\n";
    // The epilogue per element, the product rounded to its dtype as the unfused path stores it.
    std::string product = integer ? std::string("(") + ctype(d) + ")(acc_[ii_][jj_])" : round16("acc_[ii_][jj_]", d);
    os_ << "  #pragma unroll\n  for (int ii_ = 0; ii_ < 8; ++ii_) {\n";
    os_ << "    const i64 i64_ = m0_ + ty_ + 16 * ii_;\n";
    os_ << "    if (i64_ >= g.m) continue;\n";
    os_ << "    const " << idx_ << " row = (" << idx_ << ")(bb_ * g.m + i64_);\n";
    emit_row_bases("row", "    ");
    os_ << "    #pragma unroll\n    for (int jj_ = 0; jj_ < 8; ++jj_) {\n";
    os_ << "      const i64 j64_ = n0_ + tx_ + 16 * jj_;\n";
    os_ << "      if (j64_ >= g.n) continue;\n";
    os_ << "      const " << idx_ << " col = (" << idx_ << ")j64_;\n";
    os_ << "      const " << ctype(d) << " mmv_ = " << product << ";\n";
    emit_element_offsets("col", "      ");
    std::vector<int> roots;
    for (const kir::Output& o : k_.outputs) roots.push_back(o.instr);
    row_done_.assign(k_.instrs.size(), false);
    emit_element_values(roots, "      ");
    for (const kir::Output& o : k_.outputs)
      os_ << "      " << store(o.slot, "e" + std::to_string(o.slot), k_.operands[o.slot].dtype, v(o.instr)) << "\n";
    os_ << "    }\n";
    os_ << "  }\n";
  }

  static const char* vec_type(DType d) { return d == DType::Int32 ? "int4" : "float4"; }

  // Four consecutive elements per thread: one 16-byte load per contiguous input, the element code
  // four times (with the four loaded values), one 16-byte store per output.
  void emit_pointwise_vec4() {
    std::string cols = size(rank_ - 1);
    os_ << "  " << idx_ << " rows = 1";
    for (int d = 0; d < k_.outer_rank; ++d) os_ << " * " << size(d);
    os_ << ";\n";
    os_ << "  const " << idx_ << " cols4 = " << cols << " / 4;\n";
    os_ << "  const " << idx_ << " total = rows * cols4;\n";
    os_ << "  for (i64 t64 = (i64)blockIdx.x * blockDim.x + threadIdx.x; t64 < total; t64 += (i64)gridDim.x * blockDim.x) {\n";
    os_ << "    const " << idx_ << " t = (" << idx_ << ")t64;\n";
    if (k_.outer_rank == 0) {
      os_ << "    const " << idx_ << " row = 0, col = t * 4;\n";
    } else {
      os_ << "    const " << idx_ << " row = t / cols4, col = (t - row * cols4) * 4;\n";
    }
    emit_row_bases("row", "    ");
    int inner_dim = rank_ - 1;
    auto unit = [&](size_t o) { return k_.operands[o].strides[inner_dim] == kir::StrideClass::Unit; };
    for (size_t o = 0; o < k_.operands.size(); ++o) {
      os_ << "    const " << idx_ << " eb" << o << " = b" << o << (unit(o) ? " + col" : "") << ";\n";
      if (k_.operands[o].kind == kir::Operand::Kind::Input && unit(o)) {
        DType d = k_.operands[o].dtype;
        os_ << "    const " << vec_type(d) << " L" << o << "v = *(const " << vec_type(d) << "*)(p" << o << " + eb" << o << ");\n";
        os_ << "    const " << ctype(d) << " L" << o << "[4] = {L" << o << "v.x, L" << o << "v.y, L" << o << "v.z, L" << o << "v.w};\n";
      }
    }
    std::vector<int> roots;
    for (const kir::Output& o : k_.outputs) roots.push_back(o.instr);
    for (const kir::Output& o : k_.outputs) os_ << "    " << ctype(k_.operands[o.slot].dtype) << " R" << o.slot << "[4];\n";
    row_done_.assign(k_.instrs.size(), false);
    lane_ = "[u_]";
    os_ << "    #pragma unroll\n";
    os_ << "    for (int u_ = 0; u_ < 4; ++u_) {\n";
    for (size_t o = 0; o < k_.operands.size(); ++o)
      os_ << "      const " << idx_ << " e" << o << " = eb" << o << (unit(o) ? " + u_" : "") << ";\n";
    emit_element_values(roots, "      ");
    for (const kir::Output& o : k_.outputs) os_ << "      R" << o.slot << "[u_] = " << v(o.instr) << ";\n";
    os_ << "    }\n";
    lane_.clear();
    for (const kir::Output& o : k_.outputs) {
      const char* vt = vec_type(k_.operands[o.slot].dtype);
      os_ << "    *(" << vt << "*)(p" << o.slot << " + eb" << o.slot << ") = make_" << vt << "(R" << o.slot << "[0], R"
          << o.slot << "[1], R" << o.slot << "[2], R" << o.slot << "[3]);\n";
    }
    os_ << "  }\n";
  }

  // ---- row kernels

  struct Combine {
    std::string init;  // accumulator start
    bool arg = false;
  };

  Combine reduction_init(const Instr& in, DType src) {
    std::string t = ctype(src);
    bool fl = is_floating(src);
    switch (in.op) {
      case Op::Sum: return {fl ? lit(0.0, src) : "(" + t + ")0"};
      case Op::Prod: return {fl ? lit(1.0, src) : "(" + t + ")1"};
      case Op::Max:
      case Op::ArgMax:
        return {fl ? "(-(" + t + ")INFINITY)" : src == DType::Bool ? "false" : src == DType::Int32 ? "(int)0x80000000" : "(i64)0x8000000000000000ull",
                in.op == Op::ArgMax};
      default:
        return {fl ? "((" + t + ")INFINITY)" : src == DType::Bool ? "true" : src == DType::Int32 ? "(int)0x7fffffff" : "(i64)0x7fffffffffffffffll",
                in.op == Op::ArgMin};
    }
  }

  // acc (and acc_i for arg reductions) combined with value x (at inner index j).
  std::string combine(const Instr& in, DType src, const std::string& acc, const std::string& x) {
    bool fl = is_floating(src);
    std::string t = ctype(src);
    switch (in.op) {
      case Op::Sum: return src == DType::Bool ? acc + " || " + x : fl ? acc + " + " + x : "(" + t + ")((u64)" + acc + " + (u64)" + x + ")";
      case Op::Prod: return fl ? acc + " * " + x : "(" + t + ")((u64)" + acc + " * (u64)" + x + ")";
      case Op::Max: return src == DType::Bool ? acc + " || " + x : fl ? "lf_max<" + t + ">(" + acc + ", " + x + ")" : "lf_imax<" + t + ">(" + acc + ", " + x + ")";
      case Op::Min: return src == DType::Bool ? acc + " && " + x : fl ? "lf_min<" + t + ">(" + acc + ", " + x + ")" : "lf_imin<" + t + ">(" + acc + ", " + x + ")";
      default: return "";
    }
  }

  // Whether (x, xi) beats (a, ai) for argmax/argmin: a strictly better value, or an equal value
  // (or both NaN) at a smaller index; NaN beats every number.
  std::string arg_better(const Instr& in, DType src, const std::string& x, const std::string& xi, const std::string& a,
                         const std::string& ai) {
    bool mx = in.op == Op::ArgMax;
    std::string cmp = mx ? x + " > " + a : x + " < " + a;
    std::string tie = "(" + x + " == " + a + " && " + xi + " < " + ai + ")";
    if (!is_floating(src)) return "(" + cmp + " || " + tie + ")";
    std::string xn = "(" + x + " != " + x + ")", an = "(" + a + " != " + a + ")";
    return "((" + xn + " && (!" + an + " || " + xi + " < " + ai + ")) || (!" + xn + " && !" + an + " && (" + cmp + " || " + tie + ")))";
  }

  // Combines `acc` (and acc_i) across the 32 lanes of each warp by shuffling down; lane 0 ends
  // with the warp's result, in a fixed order.
  void emit_warp_reduce(const Instr& in, DType src, const std::string& acc, const std::string& acc_i,
                        const std::string& indent) {
    bool arg = in.op == Op::ArgMax || in.op == Op::ArgMin;
    os_ << indent << "for (int d_ = 16; d_ > 0; d_ >>= 1) {\n";
    os_ << indent << "  " << ctype(src) << " x_ = lf_shfl_down(" << acc << ", d_);\n";
    if (arg) {
      os_ << indent << "  i64 xi_ = lf_shfl_down(" << acc_i << ", d_);\n";
      os_ << indent << "  if (" << arg_better(in, src, "x_", "xi_", acc, acc_i) << ") { " << acc << " = x_; " << acc_i << " = xi_; }\n";
    } else {
      os_ << indent << "  " << acc << " = " << combine(in, src, acc, "x_") << ";\n";
    }
    os_ << indent << "}\n";
  }

  void emit_block_reduce(const Instr& in, DType src, const std::string& acc, const std::string& acc_i,
                         const std::string& indent) {
    std::string t = ctype(src);
    bool arg = in.op == Op::ArgMax || in.op == Op::ArgMin;
    // Warp: shuffle down; then warp leaders through shared memory; the first warp finishes.
    emit_warp_reduce(in, src, acc, acc_i, indent);
    os_ << indent << "if ((threadIdx.x & 31) == 0) { ((" << t << "*)red_v)[threadIdx.x >> 5] = " << acc << ";"
        << (arg ? " red_i[threadIdx.x >> 5] = " + acc_i + ";" : "") << " }\n";
    os_ << indent << "__syncthreads();\n";
    os_ << indent << "if (threadIdx.x < 32) {\n";
    os_ << indent << "  " << acc << " = threadIdx.x < (blockDim.x >> 5) ? ((" << t << "*)red_v)[threadIdx.x] : " << reduction_init(in, src).init << ";\n";
    if (arg) os_ << indent << "  " << acc_i << " = threadIdx.x < (blockDim.x >> 5) ? red_i[threadIdx.x] : (i64)0x7fffffffffffffffll;\n";
    emit_warp_reduce(in, src, acc, acc_i, indent + "  ");
    os_ << indent << "  if (threadIdx.x == 0) { ((" << t << "*)red_v)[0] = " << acc << ";" << (arg ? " red_i[0] = " + acc_i + ";" : "") << " }\n";
    os_ << indent << "}\n";
    os_ << indent << "__syncthreads();\n";
    os_ << indent << acc << " = ((" << t << "*)red_v)[0];" << (arg ? " " + acc_i + " = red_i[0];" : "") << "\n";
    os_ << indent << "__syncthreads();\n";
  }

  // Loads this thread's elements of every per-element input of the row into registers, once.
  void emit_row_cache(const std::string& indent) {
    cache_.assign(k_.operands.size(), false);
    std::vector<DType> types(k_.operands.size());
    for (const Instr& in : k_.instrs) {
      if (in.kind != InstrKind::Load || in.row) continue;
      cache_[in.slot] = true;
      types[in.slot] = in.dtype;
    }
    for (size_t o = 0; o < cache_.size(); ++o)
      if (cache_[o]) os_ << indent << ctype(types[o]) << " c" << o << "[" << opt_.row_cache << "];\n";
    os_ << indent << "#pragma unroll\n";
    os_ << indent << "for (int k_ = 0; k_ < " << opt_.row_cache << "; ++k_) {\n";
    os_ << indent << "  const i64 j64 = (i64)threadIdx.x + (i64)k_ * " << kBlockThreads << ";\n";
    if (!opt_.row_full) os_ << indent << "  if (j64 >= inner) break;\n";
    os_ << indent << "  const " << idx_ << " j = (" << idx_ << ")j64;\n";
    emit_element_offsets("j", indent + "  ");
    for (size_t o = 0; o < cache_.size(); ++o)
      if (cache_[o]) os_ << indent << "  c" << o << "[k_] = " << load(static_cast<int>(o), "e" + std::to_string(o), types[o]) << ";\n";
    os_ << indent << "}\n";
  }

  void emit_row_kernel() {
    os_ << "  __shared__ double red_v[" << kBlockThreads / 32 << "];\n";
    os_ << "  __shared__ i64 red_i[" << kBlockThreads / 32 << "];\n";
    os_ << "  __shared__ bool last_block;\n";
    os_ << "  " << idx_ << " rows = 1";
    for (int d = 0; d < k_.outer_rank; ++d) os_ << " * " << size(d);
    os_ << ";\n";
    os_ << "  " << idx_ << " inner = 1";
    for (int d = k_.outer_rank; d < rank_; ++d) os_ << " * " << size(d);
    os_ << ";\n";
    // Split rows (blockIdx.y = segment) cover [seg_lo, seg_hi) of the inner range.
    // (vec4: at multiples of 4, so that every vector lies in one segment; inner is a multiple of 4.)
    std::string inner = opt_.vec4 ? "(inner / 4)" : "inner", scale = opt_.vec4 ? "4 * " : "";
    os_ << "  const " << idx_ << " seg_lo = " << scale << "(" << idx_ << ")(((i64)" << inner << " * blockIdx.y) / gridDim.y);\n";
    os_ << "  const " << idx_ << " seg_hi = " << scale << "(" << idx_ << ")(((i64)" << inner << " * (blockIdx.y + 1)) / gridDim.y);\n";
    os_ << "  for (" << idx_ << " row = blockIdx.x; row < rows; row += gridDim.x) {\n";
    std::string in4 = "    ";
    emit_row_bases("row", in4);
    row_done_.assign(k_.instrs.size(), false);
    if (opt_.row_cache > 0) emit_row_cache(in4);
    for (size_t i = 0; i < k_.instrs.size(); ++i) {
      const Instr& in = k_.instrs[i];
      if (in.kind != InstrKind::Reduce) continue;
      DType src = k_.instrs[in.args[0]].dtype;
      Combine c = reduction_init(in, src);
      bool arg = c.arg;
      std::string acc = "acc" + std::to_string(i), acc_i = "acci" + std::to_string(i);
      emit_row_values({in.args[0]}, in4);
      os_ << in4 << ctype(src) << " " << acc << " = " << c.init << ";\n";
      if (arg) os_ << in4 << "i64 " << acc_i << " = 0;\n";
      emit_pass("seg_lo", "seg_hi", in4, [&](const std::string& ind) {
        emit_element_offsets("j", ind);
        emit_element_values({in.args[0]}, ind);
        if (arg) {
          os_ << ind << "if (" << arg_better(in, src, v(in.args[0]), "(i64)j", acc, acc_i) << ") { " << acc << " = "
              << v(in.args[0]) << "; " << acc_i << " = j; }\n";
        } else {
          os_ << ind << acc << " = " << combine(in, src, acc, v(in.args[0])) << ";\n";
        }
      });
      emit_block_reduce(in, src, acc, acc_i, in4);
      // Split rows: publish this segment's partial; the last block of the row combines them in order.
      // (Never for register-cached rows, which the host does not split: no code for it there.)
      if (opt_.row_cache == 0) {
      os_ << in4 << "if (gridDim.y > 1) {\n";
      os_ << in4 << "  " << ctype(src) << "* part_ = (" << ctype(src) << "*)scratch.partial;\n";
      os_ << in4 << "  i64* parti_ = (i64*)scratch.partial_index;\n";
      os_ << in4 << "  if (threadIdx.x == 0) {\n";
      os_ << in4 << "    part_[(i64)row * gridDim.y + blockIdx.y] = " << acc << ";\n";
      if (arg) os_ << in4 << "    parti_[(i64)row * gridDim.y + blockIdx.y] = " << acc_i << ";\n";
      os_ << in4 << "    __threadfence();\n";
      os_ << in4 << "    unsigned done_ = atomicAdd(&scratch.counters[row], 1u);\n";
      os_ << in4 << "    last_block = done_ == gridDim.y - 1;\n";
      os_ << in4 << "  }\n";
      os_ << in4 << "  __syncthreads();\n";
      os_ << in4 << "  if (!last_block) continue;\n";
      os_ << in4 << "  __threadfence();\n";
      // The last block combines the partials: each thread a fixed strided subset, then the same
      // fixed reduction tree (deterministic). __ldcg reads L2, where the other blocks' writes are.
      os_ << in4 << "  " << acc << " = " << c.init << ";\n";
      if (arg) os_ << in4 << "  " << acc_i << " = (i64)0x7fffffffffffffffll;\n";
      os_ << in4 << "  for (unsigned s_ = threadIdx.x; s_ < gridDim.y; s_ += blockDim.x) {\n";
      if (src == DType::Bool) {  // __ldcg has no bool overload
        os_ << in4 << "    bool x_ = ((volatile bool*)part_)[(i64)row * gridDim.y + s_];\n";
      } else {
        os_ << in4 << "    " << ctype(src) << " x_ = __ldcg(&part_[(i64)row * gridDim.y + s_]);\n";
      }
      if (arg) {
        os_ << in4 << "    i64 xi_ = __ldcg(&parti_[(i64)row * gridDim.y + s_]);\n";
        os_ << in4 << "    if (s_ == threadIdx.x || " << arg_better(in, src, "x_", "xi_", acc, acc_i) << ") { " << acc << " = x_; " << acc_i << " = xi_; }\n";
      } else {
        os_ << in4 << "    " << acc << " = " << combine(in, src, acc, "x_") << ";\n";
      }
      os_ << in4 << "  }\n";
      emit_block_reduce(in, src, acc, acc_i, in4 + "  ");
      os_ << in4 << "  if (threadIdx.x == 0) scratch.counters[row] = 0;\n";
      os_ << in4 << "}\n";
      }
      std::string result = arg ? acc_i : acc;
      os_ << in4 << "const " << ctype(in.dtype) << " " << v(static_cast<int>(i)) << " = "
          << (arg ? result : (is_floating(in.dtype) ? round16(result, in.dtype) : convert(result, src, in.dtype))) << ";\n";
      row_done_[i] = true;
    }
    std::vector<int> elem_roots, row_roots;
    for (const kir::Output& o : k_.outputs) (k_.instrs[o.instr].row ? row_roots : elem_roots).push_back(o.instr);
    if (!elem_roots.empty()) {
      emit_row_values(elem_roots, in4);
      emit_pass("0", "inner", in4, [&](const std::string& ind) {
        emit_element_offsets("j", ind);
        emit_element_values(elem_roots, ind);
        for (const kir::Output& o : k_.outputs)
          if (!k_.instrs[o.instr].row)
            os_ << ind << store(o.slot, "e" + std::to_string(o.slot), k_.operands[o.slot].dtype, v(o.instr)) << "\n";
      });
    }
    if (!row_roots.empty()) {
      emit_row_values(row_roots, in4);
      os_ << in4 << "if (threadIdx.x == 0) {\n";
      for (const kir::Output& o : k_.outputs)
        if (k_.instrs[o.instr].row)
          os_ << in4 << "  " << store(o.slot, "b" + std::to_string(o.slot), k_.operands[o.slot].dtype, v(o.instr)) << "\n";
      os_ << in4 << "}\n";
    }
    os_ << in4 << "__syncthreads();\n";
    os_ << "  }\n";
  }

  const kir::Kernel& k_;
  std::string name_;
  EmitOptions opt_;
  int rank_;
  std::string idx_;
  std::ostringstream os_;
  std::vector<bool> row_done_;
  std::vector<bool> cache_;  // operands held in registers (row_cache)
  // While emitting one lane of a vec4 kernel's 4-element vectors: the lane's index into L<o>
  // (pointwise: [u_]; row passes: [g_][u_]); empty otherwise.
  std::string lane_;
};

}  // namespace

bool can_split_rows(const kir::Kernel& k) {
  if (!k.row) return false;
  int reductions = 0;
  for (const kir::Instr& in : k.instrs) reductions += in.kind == kir::InstrKind::Reduce;
  for (const kir::Output& o : k.outputs)
    if (!k.instrs[o.instr].row) return false;
  return reductions == 1;
}

std::string emit_cuda(const kir::Kernel& kernel, const std::string& name, const EmitOptions& options) {
  return Emitter(kernel, name, options).run();
}

}  // namespace lf::cuda
