// Kernel IR -> CUDA C (emit.h): the emitter's metadata and values, and the entry point (the host's
// analyses of a kernel and its launch are in emit_analysis.cpp).
#include "codegen/cuda/emitter.h"

namespace lf::cuda {

std::string Emitter::stride(size_t o, int d) const {
  switch (k_.operands[o].strides[d]) {
    case kir::StrideClass::Zero: return "0";
    case kir::StrideClass::Unit: return "1";
    case kir::StrideClass::Any: break;
  }
  return "s" + std::to_string(o) + "_" + std::to_string(d);
}

void Emitter::emit_metadata() {
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
  // With 32-bit index math, each size's fast division word (pack_kernel_meta), for the sizes the
  // kernel divides by.
  for (int d = 0; d < rank_; ++d, ++at)
    if (opt_.index32 && divides_by(d)) os_ << "  const i64 dw" << d << " = meta.v[" << at << "];\n";
}

// Whether the kernel's index math divides by size d: the outer dims but the first (row bases),
// the inner dims but the first (element offsets), and a pointwise kernel's column count (the flat
// grid-stride loop, without vec4 or rows2d).
bool Emitter::divides_by(int d) const {
  if (d < k_.outer_rank) return d > 0;
  if (d > k_.outer_rank) return true;
  return !k_.row && opt_.matmul_product < 0 && !opt_.vec4 && opt_.rows2d == 0 && k_.outer_rank > 0 && d == rank_ - 1;
}

// "q = x / n<d>; r = x - q * n<d>" as declarations (idx_ typed), by lf_div with 32-bit index math.
std::string Emitter::divmod(const std::string& x, int d, const std::string& q, const std::string& r) const {
  std::string n = size(d);
  std::string quot = opt_.index32 ? "lf_div(" + x + ", " + n + ", dw" + std::to_string(d) + ")" : x + " / " + n;
  return idx_ + " " + q + " = " + quot + "; " + idx_ + " " + r + " = " + x + " - " + q + " * " + n + ";";
}

// Declares b<o> = the offset of operand o at the outer index held in `row`.
void Emitter::emit_row_bases(const std::string& row, const std::string& indent) {
  os_ << indent << idx_ << " rest_ = " << row << ";\n";
  std::vector<std::string> idx(k_.outer_rank);
  for (int d = 1; d < k_.outer_rank; ++d) os_ << indent << idx_ << " o" << d << ";\n";
  for (int d = k_.outer_rank - 1; d >= 0; --d) {
    std::string v = "o" + std::to_string(d);
    if (d == 0) {
      os_ << indent << idx_ << " " << v << " = rest_;\n";
    } else {
      os_ << indent << "{ " << divmod("rest_", d, "q_", "m_") << " rest_ = q_; " << v << " = m_; }\n";
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
void Emitter::emit_element_offsets(const std::string& j, const std::string& indent) {
  int inner = k_.inner_rank;
  std::vector<std::string> idx(inner);
  if (inner == 1) {
    idx[0] = j;
  } else {
    os_ << indent << idx_ << " r_ = " << j << ";\n";
    for (int d = inner - 1; d >= 0; --d) {
      idx[d] = "i" + std::to_string(d);
      if (d == 0) os_ << indent << idx_ << " " << idx[d] << " = r_;\n";
      else
        os_ << indent << idx_ << " " << idx[d] << ";\n"
            << indent << "{ " << divmod("r_", k_.outer_rank + d, "q_", "m_") << " r_ = q_; " << idx[d] << " = m_; }\n";
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

// Emits `body` (which declares nothing outside its scope) for each of this thread's elements of
// the row in [lo, hi), with j64 and j in scope. Register-cached rows walk k_ over the thread's
// row_cache slots (unrolled, so the cache stays in registers). Others stride over the range, four
// elements a step with no bounds check between them, so four loads are in flight, then the rest.
void Emitter::emit_pass(const std::string& lo, const std::string& hi, const std::string& indent,
               const std::function<void(const std::string&)>& body) {
  auto element = [&](const std::string& in) {
    os_ << in << "const " << idx_ << " j = (" << idx_ << ")j64;\n";
    body(in);
  };
  if (opt_.row_sweep > 0 && opt_.vec4) {  // the same, 16 bytes of each contiguous input at a time
    os_ << indent << "#pragma unroll\n";
    os_ << indent << "for (int g_ = 0; g_ < " << opt_.row_sweep / 4 << "; ++g_) {\n";
    if (!opt_.row_full) {
      os_ << indent << "  if (4 * g_ < " << lo << ") continue;\n";
      os_ << indent << "  if (4 * g_ >= " << hi << ") break;\n";
    }
    std::vector<bool> vec(k_.operands.size(), false);
    for (const Instr& in : k_.instrs)
      if (in.kind == InstrKind::Load && !in.row && unit_inner(in.slot) && !cached(in.slot)) vec[in.slot] = true;
    for (size_t o = 0; o < vec.size(); ++o) {
      if (!vec[o]) continue;
      DType d = k_.operands[o].dtype;
      std::string L = "L" + std::to_string(o);
      os_ << indent << "  " << ctype(d) << " " << L << "[1][4];\n";
      os_ << indent << "  { const " << vec_type(d) << " t_ = __ldg((const " << vec_type(d) << "*)(p" << o << " + b" << o
          << " + 4 * g_)); " << L << "[0][0] = t_.x; " << L << "[0][1] = t_.y; " << L << "[0][2] = t_.z; " << L
          << "[0][3] = t_.w; }\n";
    }
    os_ << indent << "  #pragma unroll\n";
    os_ << indent << "  for (int u_ = 0; u_ < 4; ++u_) {\n";
    os_ << indent << "    const int k_ = 4 * g_ + u_;\n";
    os_ << indent << "    const i64 j64 = (i64)k_;\n";
    lane_ = "[0][u_]";
    element(indent + "    ");
    lane_.clear();
    os_ << indent << "  }\n";
    os_ << indent << "}\n";
    return;
  }
  if (opt_.row_sweep > 0) {  // a thread a row of at most row_sweep elements, unrolled
    os_ << indent << "#pragma unroll\n";
    os_ << indent << "for (int k_ = 0; k_ < " << opt_.row_sweep << "; ++k_) {\n";
    os_ << indent << "  const i64 j64 = (i64)k_;\n";
    if (!opt_.row_full) {
      os_ << indent << "  if (j64 < " << lo << ") continue;\n";
      os_ << indent << "  if (j64 >= " << hi << ") break;\n";
    }
    element(indent + "  ");
    os_ << indent << "}\n";
    return;
  }
  if (opt_.row_group > 0 && k_.has_scan()) {
    // Scans: every lane of the group takes every step (their shuffles need the whole warp); a lane
    // past the row's end reads the row's last element, which only later lanes and the carry out of
    // the row's last step see, and stores nothing (in_).
    os_ << indent << "#pragma unroll 4\n";
    os_ << indent << "for (i64 jb_ = " << lo << "; jb_ < " << hi << "; jb_ += " << opt_.row_group << ") {\n";
    os_ << indent << "  const bool in_ = jb_ + lane_ < " << hi << ";\n";
    os_ << indent << "  const i64 j64 = in_ ? jb_ + lane_ : " << hi << " - 1;\n";
    element(indent + "  ");
    os_ << indent << "}\n";
    return;
  }
  if (opt_.row_group > 0 && opt_.vec4) return emit_pass_vec4(lo, hi, indent, element);
  if (opt_.row_group > 0) {  // the row's lanes stride over it
    os_ << indent << "for (i64 j64 = " << lo << " + lane_; j64 < " << hi << "; j64 += " << opt_.row_group << ") {\n";
    element(indent + "  ");
    os_ << indent << "}\n";
    return;
  }
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
void Emitter::emit_pass_vec4(const std::string& lo, const std::string& hi, const std::string& indent,
                    const std::function<void(const std::string&)>& element) {
  // The threads that share the row: the block, or a row_group's lanes.
  const bool group = opt_.row_group > 0;
  const std::string tid = group ? "(i64)lane_" : "(i64)threadIdx.x";
  const std::string width = group ? std::to_string(opt_.row_group) : "(i64)blockDim.x";
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
          << base << " + g_ * 4 * " << width << "));\n";
      os_ << in << "  " << L << "[g_][0] = t_.x; " << L << "[g_][1] = t_.y; " << L << "[g_][2] = t_.z; " << L << "[g_][3] = t_.w;\n";
      os_ << in << "}\n";
    }
  };
  auto lanes = [&](int groups, const std::string& in) {
    os_ << in << "#pragma unroll\n" << in << "for (int g_ = 0; g_ < " << groups << "; ++g_) {\n";
    os_ << in << "  #pragma unroll\n" << in << "  for (int u_ = 0; u_ < 4; ++u_) {\n";
    os_ << in << "    const i64 j64 = jb_ + g_ * 4 * " << width << " + u_;\n";
    element(in + "    ");
    os_ << in << "  }\n" << in << "}\n";
  };
  lane_ = "[g_][u_]";
  os_ << indent << "{\n";
  os_ << indent << "  i64 jb_ = " << lo << " + 4 * " << tid << ";\n";
  os_ << indent << "  for (; jb_ + 12 * " << width << " < " << hi << "; jb_ += 16 * " << width << ") {\n";
  loads("jb_", 4, indent + "    ");
  lanes(4, indent + "    ");
  os_ << indent << "  }\n";
  os_ << indent << "  for (; jb_ < " << hi << "; jb_ += 4 * " << width << ") {\n";
  loads("jb_", 1, indent + "    ");
  lanes(1, indent + "    ");
  os_ << indent << "  }\n";
  os_ << indent << "}\n";
  lane_.clear();
}

std::string Emitter::load(int slot, const std::string& off, DType d) {
  std::string x = "p" + std::to_string(slot) + "[" + off + "]";
  switch (d) {
    case DType::Bool: return "(" + x + " != 0)";
    case DType::Float16: return "lf_h2f(" + x + ")";
    case DType::BFloat16: return "lf_b2f(" + x + ")";
    default: return "__ldg(&" + x + ")";
  }
}

std::string Emitter::store(int slot, const std::string& off, DType d, const std::string& val) {
  std::string x = "p" + std::to_string(slot) + "[" + off + "]";
  switch (d) {
    case DType::Bool: return x + " = (unsigned char)(" + val + ");";
    case DType::Float16: return x + " = lf_f2h(" + val + ");";
    case DType::BFloat16: return x + " = lf_f2b(" + val + ");";
    default: return x + " = " + val + ";";
  }
}

std::string Emitter::round16(const std::string& e, DType d) {
  if (d == DType::Float16) return "lf_r16h(" + e + ")";
  if (d == DType::BFloat16) return "lf_r16b(" + e + ")";
  return e;
}

// A conversion with the reference executor's rules (float->int saturates, NaN -> 0).
std::string Emitter::convert(const std::string& x, DType from, DType to) {
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

std::string Emitter::generate(const Instr& in, const std::string& index) {
  std::string d = "(double)";
  if (in.op == Op::Arange && opt_.int_arange > 0 && in.dtype == DType::Int64) {
    std::string start = "(i64)__longlong_as_double(q" + std::to_string(in.params[0]) + ")";
    if (opt_.int_arange == 2) return "(" + start + " + (i64)(" + index + "))";
    std::string step = "(i64)__longlong_as_double(q" + std::to_string(in.params[1]) + ")";
    return "(" + start + " + (i64)(" + index + ") * " + step + ")";
  }
  if (in.op == Op::Arange) {
    std::string start = "__longlong_as_double(q" + std::to_string(in.params[0]) + ")";
    std::string step = "__longlong_as_double(q" + std::to_string(in.params[1]) + ")";
    if (!is_integral(in.dtype))
      return convert("(" + start + " + (double)(" + index + ") * " + step + ")", DType::Float64, in.dtype);
    // Integral bounds (ir::arange_is_integral) in integer arithmetic, exact past 2^53 (a test of
    // the parameters, uniform across the launch); others in float64, converted as a cast.
    std::string exact = "(i64)((u64)(i64)s_ + (u64)(" + index + ") * (u64)(i64)t_)";
    std::string fp = "(s_ + (double)(" + index + ") * t_)";
    return "([&]{ double s_ = " + start + ", t_ = " + step + "; return lf_integral(s_) && lf_integral(t_) ? " +
           convert(exact, DType::Int64, in.dtype) + " : " + convert(fp, DType::Float64, in.dtype) + "; }())";
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
std::string Emitter::compute(int i, const std::string& prefix) {
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
    case InstrKind::Scan: throw Error("cuda emitter: a scan outside its row's ordered pass (internal error)");
    case InstrKind::Gather: {
      if (prefix == "e" && gather_cached(i)) return "g" + std::to_string(i) + "[k_]";
      // A load at a data-dependent index (kir::InstrKind::Gather): an index out of range stores
      // {tag, index} into the error operand, which the executor reads after the launch, and reads
      // element 0 instead.
      std::string q = [&](int p) { return "q" + std::to_string(in.params[p]); }(0);
      std::string stride = "q" + std::to_string(in.params[1]);
      std::string off = "(" + prefix + std::to_string(in.slot) + " + i_ * " + stride + ")";
      if (in.params.size() < 3)  // indices known in range: no check (kir::InstrKind::Gather)
        return "([&]{ const i64 r_ = (i64)(" + v(in.args[0]) + "); const i64 i_ = r_ < 0 ? r_ + " + q +
               " : r_; return " + load(in.slot, off, in.dtype) + "; }())";
      std::string tag = "q" + std::to_string(in.params[2]), err = "p" + std::to_string(k_.error_slot);
      return "([&]{ const i64 r_ = (i64)(" + v(in.args[0]) + "); i64 i_ = r_ < 0 ? r_ + " + q + " : r_;"
             " if ((unsigned long long)i_ >= (unsigned long long)" + q + ") { " + err + "[0] = " + tag + "; " +
             err + "[1] = r_; i_ = 0; } return " + load(in.slot, off, in.dtype) + "; }())";
    }
    case InstrKind::Remap: {
      // Indices computed in the kernel and in range by construction (kir::InstrKind::Remap).
      // With 32-bit index math the source's reach fits too (options_for checks its last param),
      // so each index times its stride is a 32-bit multiply-add.
      std::string off = "(" + prefix + std::to_string(in.slot);
      for (size_t k = 0; k < in.args.size(); ++k)
        off += opt_.index32 ? " + " + (narrowed(in.args[k]) ? v(in.args[k]) + "_" : "lf_i32(" + v(in.args[k]) + ")") +
                                  " * lf_i32(q" + std::to_string(in.params[k]) + ")"
                            : " + (i64)(" + v(in.args[k]) + ") * q" + std::to_string(in.params[k]);
      return load(in.slot, off + ")", in.dtype);
    }
    case InstrKind::Op: break;
  }
  std::vector<std::string> args;
  for (int a : in.args) args.push_back(v(a));
  if (is_comparison(in.op) && std::all_of(in.args.begin(), in.args.end(), [&](int a) { return narrowed(a); })) {
    for (std::string& a : args) a += "_";
    return elementwise(in.op, args, DType::Int32);
  }
  if (in.op == Op::Where) return "(" + args[0] + " ? " + args[1] + " : " + args[2] + ")";
  if (in.op == Op::Cast) return convert(args[0], k_.instrs[in.args[0]].dtype, in.dtype);
  std::string e = elementwise(in.op, args, k_.instrs[in.args.back()].dtype);
  return is_floating(in.dtype) ? round16(e, in.dtype) : e;
}

void Emitter::declare(int i, const std::string& prefix, const std::string& indent) {
  const Instr& in = k_.instrs[i];
  if (in.kind == InstrKind::Scan && kir::scan_extreme(in.op)) return declare_extreme_scan(i, indent);
  if (in.kind == InstrKind::Scan) {  // the running total s<i> (emit_element_outputs declares it)
    const std::string acc = "s" + std::to_string(i), t = ctype(in.dtype);
    auto step = [&](const std::string& a, const std::string& b) { return scan_step(in, a, b); };
    if (opt_.row_group > 1) {
      // The row's lanes hold consecutive elements: an inclusive scan across them (shuffles up
      // within the lane group), then the running total before them added, and the group's last
      // lane's total carried to the next step.
      const std::string g = std::to_string(opt_.row_group), x = "x" + std::to_string(i) + "_";
      os_ << indent << t << " " << x << " = " << v(in.args[0]) << ";\n";
      os_ << indent << "#pragma unroll\n";
      os_ << indent << "for (int d_ = 1; d_ < " << g << "; d_ <<= 1) {\n";
      os_ << indent << "  const " << t << " y_ = __shfl_up_sync(0xffffffffu, " << x << ", d_, " << g << ");\n";
      os_ << indent << "  if (lane_ >= d_) " << x << " = " << step("y_", x) << ";\n";
      os_ << indent << "}\n";
      os_ << indent << x << " = " << step(acc, x) << ";\n";
      os_ << indent << acc << " = __shfl_sync(0xffffffffu, " << x << ", " << opt_.row_group - 1 << ", " << g << ");\n";
      os_ << indent << "const " << t << " " << v(i) << " = " << (is_floating(in.dtype) ? round16(x, in.dtype) : x)
          << ";\n";
      return;
    }
    os_ << indent << acc << " = " << step(acc, v(in.args[0])) << ";\n";
    os_ << indent << "const " << t << " " << v(i) << " = " << (is_floating(in.dtype) ? round16(acc, in.dtype) : acc)
        << ";\n";
    return;
  }
  if (narrowed(i)) {
    os_ << indent << "const int " << v(i) << "_ = " << compute_narrow(i, prefix) << ";\n";
    os_ << indent << "const i64 " << v(i) << " = " << v(i) << "_;\n";
    return;
  }
  os_ << indent << "const " << ctype(k_.instrs[i].dtype) << " " << v(i) << " = " << compute(i, prefix) << ";\n";
}

std::string Emitter::scan_step(const Instr& in, const std::string& a, const std::string& b) {
  if (in.op == Op::LogCumSumExp) return std::string("lf_logaddexp<") + ctype(in.dtype) + ">(" + a + ", " + b + ")";
  Instr r = in;
  r.op = in.op == Op::CumSum ? Op::Sum : Op::Prod;
  return combine(r, in.dtype, a, b);
}

std::string Emitter::extreme_wins(const Instr& in, DType xt, const std::string& a, const std::string& b) {
  const std::string cmp = in.op == Op::CumMax ? " >= " : " <= ";
  if (!is_floating(xt)) return "(" + b + cmp + a + ")";
  return "(" + b + " != " + b + " || (" + a + " == " + a + " && " + b + cmp + a + "))";
}

std::string Emitter::scan_identity(const Instr& in) {
  const double identity = kir::scan_identity(in.op);
  const std::string t = ctype(in.dtype);
  return std::isinf(identity)       ? "(-(" + t + ")INFINITY)"
         : is_floating(in.dtype)    ? lit(identity, in.dtype)
                                    : "(" + t + ")" + std::to_string(static_cast<int>(identity));
}

// A value every element beats.
std::string Emitter::extreme_start(const Instr& in) {
  const DType xt = k_.instrs[in.args[0]].dtype;
  const bool max = in.op == Op::CumMax;
  return is_floating(xt)         ? std::string(max ? "-" : "") + "(" + extreme_type(xt) + ")INFINITY"
         : xt == DType::Bool     ? (max ? "0" : "1")
         : xt == DType::Int32    ? (max ? "(-2147483647 - 1)" : "2147483647")
                                 : (max ? "(-9223372036854775807LL - 1)" : "9223372036854775807LL");
}

// cummax / cummin (kir::scan_extreme): s<i> is the running extreme's position and sb<i> its value
// (emit_element_outputs declares both), the element's position j along the scanned dim (the row's
// only inner dim). A later (value, position) wins over an earlier one where its value is NaN, or
// at least (most) as large (small) and the earlier one is not NaN: the reference's order, which
// is associative, so a lane group combines its consecutive elements by shuffles as a sum's.
void Emitter::declare_extreme_scan(int i, const std::string& indent) {
  const Instr& in = k_.instrs[i];
  const DType xt = k_.instrs[in.args[0]].dtype;
  const std::string t = extreme_type(xt), pos = "s" + std::to_string(i), best = "sb" + std::to_string(i);
  // Whether (b, at b) wins over (a, at a), b the later.
  auto wins = [&](const std::string& a, const std::string& b) { return extreme_wins(in, xt, a, b); };
  const std::string xv = "xv" + std::to_string(i) + "_", xi = "xi" + std::to_string(i) + "_";
  os_ << indent << t << " " << xv << " = (" << t << ")" << v(in.args[0]) << ";\n";
  os_ << indent << "i64 " << xi << " = (i64)j;\n";
  if (opt_.row_group > 1) {
    const std::string g = std::to_string(opt_.row_group);
    os_ << indent << "#pragma unroll\n";
    os_ << indent << "for (int d_ = 1; d_ < " << g << "; d_ <<= 1) {\n";
    os_ << indent << "  const " << t << " yv_ = __shfl_up_sync(0xffffffffu, " << xv << ", d_, " << g << ");\n";
    os_ << indent << "  const i64 yi_ = __shfl_up_sync(0xffffffffu, " << xi << ", d_, " << g << ");\n";
    os_ << indent << "  if (lane_ >= d_ && !" << wins("yv_", xv) << ") { " << xv << " = yv_; " << xi << " = yi_; }\n";
    os_ << indent << "}\n";
    os_ << indent << "if (!" << wins(best, xv) << ") { " << xv << " = " << best << "; " << xi << " = " << pos << "; }\n";
    os_ << indent << best << " = __shfl_sync(0xffffffffu, " << xv << ", " << opt_.row_group - 1 << ", " << g << ");\n";
    os_ << indent << pos << " = __shfl_sync(0xffffffffu, " << xi << ", " << opt_.row_group - 1 << ", " << g << ");\n";
    os_ << indent << "const i64 " << v(i) << " = " << xi << ";\n";
    return;
  }
  os_ << indent << "if (" << wins(best, xv) << ") { " << best << " = " << xv << "; " << pos << " = " << xi << "; }\n";
  os_ << indent << "const i64 " << v(i) << " = " << pos << ";\n";
}

// The type a fused cummax / cummin carries its extreme's value in: the compute type, int for bool
// (shuffles move 32 or 64 bits).
std::string Emitter::extreme_type(DType d) { return d == DType::Bool ? "int" : ctype(d); }

// A narrowed instruction (EmitOptions::narrow) in 32-bit math over its arguments' 32-bit values
// (v<a>_). Adds, subtracts and multiplies wrap (unsigned), so an intermediate beyond int32 (an
// arange's index times its step) still gives the exact result the analysis bounded.
std::string Emitter::compute_narrow(int i, const std::string& prefix) {
  const Instr& in = k_.instrs[i];
  auto q = [](int p) { return "q" + std::to_string(p); };
  switch (in.kind) {
    case InstrKind::Param: return "((int)" + q(in.slot) + ")";
    case InstrKind::Gen: {  // an arange in integer math (int_arange > 0)
      std::string start = "(unsigned)(int)__longlong_as_double(" + q(in.params[0]) + ")";
      std::string index = "(unsigned)(" + prefix + std::to_string(in.slot) + ")";
      if (opt_.int_arange == 2) return "((int)(" + start + " + " + index + "))";
      return "((int)(" + start + " + " + index + " * (unsigned)(int)__longlong_as_double(" + q(in.params[1]) + ")))";
    }
    default: break;
  }
  std::vector<std::string> args;
  for (int a : in.args) args.push_back(v(a) + (narrowed(a) ? "_" : ""));
  if (in.op == Op::Where) return "(" + v(in.args[0]) + " ? " + args[1] + " : " + args[2] + ")";
  if (in.op == Op::Cast || in.op == Op::Copy) return "((int)(" + args[0] + "))";
  return elementwise(in.op, args, DType::Int32);
}

// Emits, in order, the instructions of the cone of `roots` that have phase `row`; for element
// cones, row values they use are emitted first at row scope (emit_row_values).
std::vector<int> Emitter::cone(const std::vector<int>& roots, bool row) {
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
void Emitter::emit_row_values(const std::vector<int>& roots, const std::string& indent) {
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
    declare(r, "b", indent);
  }
}

void Emitter::emit_element_values(const std::vector<int>& roots, const std::string& indent) {
  for (int i : cone(roots, false))
    declare(i, "e", indent);
}

std::string emit_cuda(const kir::Kernel& kernel, const std::string& name, const EmitOptions& options) {
  return Emitter(kernel, name, options).run();
}

}  // namespace lf::cuda
