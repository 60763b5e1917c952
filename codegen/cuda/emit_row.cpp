// The CUDA emitter: row kernels (a block per row, register-cached rows, split rows).
#include "codegen/cuda/emitter.h"
#include "codegen/kir/split.h"

namespace lf::cuda {

Emitter::Combine Emitter::reduction_init(const Instr& in, DType src) {
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
std::string Emitter::combine(const Instr& in, DType src, const std::string& acc, const std::string& x) {
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
std::string Emitter::arg_better(const Instr& in, DType src, const std::string& x, const std::string& xi, const std::string& a,
                       const std::string& ai) {
  bool mx = in.op == Op::ArgMax;
  std::string cmp = mx ? x + " > " + a : x + " < " + a;
  std::string tie = "(" + x + " == " + a + " && " + xi + " < " + ai + ")";
  if (!is_floating(src)) return "(" + cmp + " || " + tie + ")";
  std::string xn = "(" + x + " != " + x + ")", an = "(" + a + " != " + a + ")";
  return "((" + xn + " && (!" + an + " || " + xi + " < " + ai + ")) || (!" + xn + " && !" + an + " && (" + cmp + " || " + tie + ")))";
}

// arg_better where x comes after everything acc has seen (a thread's pass over its row: its
// elements in increasing order, from the start value at index 0): a tie keeps acc, so the index
// compares drop out; NaN still beats every number, and the first NaN stays.
std::string Emitter::arg_better_in_order(const Instr& in, DType src, const std::string& x, const std::string& a) {
  std::string cmp = "(" + x + (in.op == Op::ArgMax ? " > " : " < ") + a + ")";
  if (!is_floating(src)) return cmp;
  return "(" + cmp + " || (" + x + " != " + x + " && " + a + " == " + a + "))";
}

// Combines `acc` (and acc_i) across the 32 lanes of each warp by shuffling down; lane 0 ends
// with the warp's result, in a fixed order.
void Emitter::emit_warp_reduce(const Instr& in, DType src, const std::string& acc, const std::string& acc_i,
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

void Emitter::emit_block_reduce(const Instr& in, DType src, const std::string& acc, const std::string& acc_i,
                       const std::string& indent) {
  std::string t = ctype(src);
  bool arg = in.op == Op::ArgMax || in.op == Op::ArgMin;
  if (opt_.row_group > 0) {
    // The row's lanes: shuffle down inside the group (a fixed tree: deterministic), then every lane
    // takes the group leader's result. Every lane of the warp runs the shuffles (rows past the end
    // compute the last row again and store nothing).
    if (opt_.row_group > 1) {
      os_ << indent << "for (int d_ = " << opt_.row_group / 2 << "; d_ > 0; d_ >>= 1) {\n";
      os_ << indent << "  " << t << " x_ = lf_shfl_down(" << acc << ", d_);\n";
      if (arg) {
        os_ << indent << "  i64 xi_ = lf_shfl_down(" << acc_i << ", d_);\n";
        os_ << indent << "  if (" << arg_better(in, src, "x_", "xi_", acc, acc_i) << ") { " << acc << " = x_; " << acc_i << " = xi_; }\n";
      } else {
        os_ << indent << "  " << acc << " = " << combine(in, src, acc, "x_") << ";\n";
      }
      os_ << indent << "}\n";
      os_ << indent << acc << " = lf_shfl(" << acc << ", leader_);\n";
      if (arg) os_ << indent << acc_i << " = lf_shfl(" << acc_i << ", leader_);\n";
    }
    return;
  }
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

void Emitter::emit_block_reduce_level(const std::vector<int>& is, const std::string& indent) {
  constexpr int kWarps = kBlockThreads / 32;
  struct Red {
    const Instr* in;
    DType src;
    std::string acc, acc_i, slot, slot_i;
    bool arg;
  };
  std::vector<Red> rs;
  for (size_t r = 0; r < is.size(); ++r) {
    const Instr& in = k_.instrs[static_cast<size_t>(is[r])];
    const DType src = k_.instrs[in.args[0]].dtype;
    const std::string n = std::to_string(is[r]), base = std::to_string(r * kWarps);
    rs.push_back({&in, src, "acc" + n, "acci" + n, "((" + std::string(ctype(src)) + "*)(red_v + " + base + "))",
                  "(red_i + " + base + ")", in.op == Op::ArgMax || in.op == Op::ArgMin});
  }
  for (const Red& r : rs) emit_warp_reduce(*r.in, r.src, r.acc, r.acc_i, indent);
  os_ << indent << "if ((threadIdx.x & 31) == 0) {\n";
  for (const Red& r : rs) {
    os_ << indent << "  " << r.slot << "[threadIdx.x >> 5] = " << r.acc << ";\n";
    if (r.arg) os_ << indent << "  " << r.slot_i << "[threadIdx.x >> 5] = " << r.acc_i << ";\n";
  }
  os_ << indent << "}\n";
  os_ << indent << "__syncthreads();\n";
  os_ << indent << "if (threadIdx.x < 32) {\n";
  for (const Red& r : rs) {
    os_ << indent << "  " << r.acc << " = threadIdx.x < (blockDim.x >> 5) ? " << r.slot << "[threadIdx.x] : "
        << reduction_init(*r.in, r.src).init << ";\n";
    if (r.arg)
      os_ << indent << "  " << r.acc_i << " = threadIdx.x < (blockDim.x >> 5) ? " << r.slot_i
          << "[threadIdx.x] : (i64)0x7fffffffffffffffll;\n";
    emit_warp_reduce(*r.in, r.src, r.acc, r.acc_i, indent + "  ");
  }
  os_ << indent << "  if (threadIdx.x == 0) {\n";
  for (const Red& r : rs) {
    os_ << indent << "    " << r.slot << "[0] = " << r.acc << ";\n";
    if (r.arg) os_ << indent << "    " << r.slot_i << "[0] = " << r.acc_i << ";\n";
  }
  os_ << indent << "  }\n";
  os_ << indent << "}\n";
  os_ << indent << "__syncthreads();\n";
  for (const Red& r : rs) {
    os_ << indent << r.acc << " = " << r.slot << "[0];\n";
    if (r.arg) os_ << indent << r.acc_i << " = " << r.slot_i << "[0];\n";
  }
  os_ << indent << "__syncthreads();\n";
}

// Loads this thread's elements of every per-element input of the row into registers, once.
void Emitter::emit_row_cache(const std::string& indent) {
  cache_.assign(k_.operands.size(), false);
  std::vector<DType> types(k_.operands.size());
  for (const Instr& in : k_.instrs) {
    if (in.kind != InstrKind::Load || in.row) continue;
    cache_[in.slot] = true;
    types[in.slot] = in.dtype;
  }
  gather_cache_.assign(k_.instrs.size(), false);
  for (size_t i = 0; i < k_.instrs.size(); ++i) {
    const Instr& in = k_.instrs[i];
    if (in.kind != InstrKind::Gather || in.row) continue;
    const Instr& index = k_.instrs[static_cast<size_t>(in.args[0])];
    gather_cache_[i] = index.kind == InstrKind::Load && !index.row;
  }
  for (size_t o = 0; o < cache_.size(); ++o)
    if (cache_[o]) os_ << indent << ctype(types[o]) << " c" << o << "[" << opt_.row_cache << "];\n";
  for (size_t i = 0; i < gather_cache_.size(); ++i)
    if (gather_cache_[i]) os_ << indent << ctype(k_.instrs[i].dtype) << " g" << i << "[" << opt_.row_cache << "];\n";
  os_ << indent << "#pragma unroll\n";
  os_ << indent << "for (int k_ = 0; k_ < " << opt_.row_cache << "; ++k_) {\n";
  os_ << indent << "  const i64 j64 = (i64)threadIdx.x + (i64)k_ * " << kBlockThreads << ";\n";
  if (!opt_.row_full) os_ << indent << "  if (j64 >= inner) break;\n";
  os_ << indent << "  const " << idx_ << " j = (" << idx_ << ")j64;\n";
  emit_element_offsets("j", indent + "  ");
  for (size_t o = 0; o < cache_.size(); ++o)
    if (cache_[o]) os_ << indent << "  c" << o << "[k_] = " << load(static_cast<int>(o), "e" + std::to_string(o), types[o]) << ";\n";
  for (size_t i = 0; i < gather_cache_.size(); ++i) {
    if (!gather_cache_[i]) continue;
    int index = k_.instrs[i].args[0];
    os_ << indent << "  {\n";
    os_ << indent << "    const " << ctype(k_.instrs[static_cast<size_t>(index)].dtype) << " " << v(index) << " = "
        << compute(index, "e") << ";\n";
    gather_cache_[i] = false;  // computed here from the index, not read back from the cache
    os_ << indent << "    g" << i << "[k_] = " << compute(static_cast<int>(i), "e") << ";\n";
    gather_cache_[i] = true;
    os_ << indent << "  }\n";
  }
  os_ << indent << "}\n";
}

// Declares acc<i> (and acci<i> for arg reductions) and folds in this thread's elements of the row
// in [lo, hi), in increasing order, for reduction instruction i.
void Emitter::emit_thread_reduce(int i, const std::string& lo, const std::string& hi, const std::string& indent) {
  const Instr& in = k_.instrs[static_cast<size_t>(i)];
  DType src = k_.instrs[in.args[0]].dtype;
  Combine c = reduction_init(in, src);
  std::string acc = "acc" + std::to_string(i), acc_i = "acci" + std::to_string(i);
  emit_row_values({in.args[0]}, indent);
  os_ << indent << ctype(src) << " " << acc << " = " << c.init << ";\n";
  if (c.arg) os_ << indent << "i64 " << acc_i << " = 0;\n";
  emit_pass(lo, hi, indent, [&](const std::string& ind) {
    emit_element_offsets("j", ind);
    emit_element_values({in.args[0]}, ind);
    if (c.arg) {
      os_ << ind << "if (" << arg_better_in_order(in, src, v(in.args[0]), acc) << ") { " << acc << " = " << v(in.args[0])
          << "; " << acc_i << " = j; }\n";
    } else {
      os_ << ind << acc << " = " << combine(in, src, acc, v(in.args[0])) << ";\n";
    }
  });
}

// Declares v<i>, reduction i's value, from its finished accumulator.
void Emitter::emit_reduce_result(int i, const std::string& indent) {
  const Instr& in = k_.instrs[static_cast<size_t>(i)];
  DType src = k_.instrs[in.args[0]].dtype;
  std::string acc = "acc" + std::to_string(i);
  std::string value = reduction_init(in, src).arg ? "acci" + std::to_string(i)
                      : is_floating(in.dtype)     ? round16(acc, in.dtype)
                                                  : convert(acc, src, in.dtype);
  os_ << indent << "const " << ctype(in.dtype) << " " << v(i) << " = " << value << ";\n";
  row_done_[static_cast<size_t>(i)] = true;
}

// A pass over the row writing its per-element outputs, each store behind `guard`; returns the
// per-row outputs' instructions, for the caller to store.
std::vector<int> Emitter::emit_element_outputs(const std::string& indent, const std::string& guard) {
  std::vector<int> elem_roots, row_roots;
  for (const kir::Output& o : k_.outputs) (k_.instrs[o.instr].row ? row_roots : elem_roots).push_back(o.instr);
  if (elem_roots.empty()) return row_roots;
  emit_row_values(elem_roots, indent);
  // Scans: a running total a row (the host runs scan kernels a thread a row, or a lane group a
  // row whose steps take consecutive elements: emit_pass visits the row in order), or a chunk of
  // it that starts from the chunks before it (scan_chunks).
  const bool chunks = opt_.scan_chunks > 0;
  if (chunks) {
    emit_chunk_prefix(indent);
  } else {
    for (size_t i = 0; i < k_.instrs.size(); ++i) {
      const Instr& in = k_.instrs[i];
      if (in.kind != InstrKind::Scan) continue;
      os_ << indent << ctype(in.dtype) << " s" << i << " = " << scan_identity(in) << ";\n";
      if (kir::scan_extreme(in.op))  // the extreme's value beside its position
        os_ << indent << extreme_type(k_.instrs[in.args[0]].dtype) << " sb" << i << " = " << extreme_start(in) << ";\n";
    }
  }
  emit_pass(chunks ? "clo_" : "0", chunks ? "chi_" : "inner", indent, [&](const std::string& ind) {
    emit_element_offsets("j", ind);
    emit_element_values(elem_roots, ind);
    for (const kir::Output& o : k_.outputs)
      if (!k_.instrs[o.instr].row)
        os_ << ind << guard << store(o.slot, "e" + std::to_string(o.slot), k_.operands[o.slot].dtype, v(o.instr)) << "\n";
  });
  return row_roots;
}

// EmitOptions::scan_chunks: this thread's chunk [clo_, chi_) of its line combined (a pass that
// computes only the scans' inputs), the chunk totals of the block's lines through shared memory,
// and s<i> (sb<i>) declared as the combination of the chunks before this one, in order.
void Emitter::emit_chunk_prefix(const std::string& indent) {
  const std::string C = std::to_string(opt_.scan_chunks);
  std::vector<int> scans, args;
  for (size_t i = 0; i < k_.instrs.size(); ++i)
    if (k_.instrs[i].kind == InstrKind::Scan) {
      scans.push_back(static_cast<int>(i));
      args.push_back(k_.instrs[i].args[0]);
    }
  for (int i : scans) {
    const Instr& in = k_.instrs[i];
    const std::string n = std::to_string(i);
    os_ << indent << ctype(in.dtype) << " c" << n << "_ = " << scan_identity(in) << ";\n";
    if (kir::scan_extreme(in.op)) {
      os_ << indent << "i64 ci" << n << "_ = -1;\n";
      os_ << indent << extreme_type(k_.instrs[in.args[0]].dtype) << " cb" << n << "_ = " << extreme_start(in) << ";\n";
    }
  }
  os_ << indent << "{\n";
  emit_pass("clo_", "chi_", indent + "  ", [&](const std::string& ind) {
    emit_element_offsets("j", ind);
    emit_element_values(args, ind);
    for (int i : scans) {
      const Instr& in = k_.instrs[i];
      const std::string n = std::to_string(i), x = v(in.args[0]);
      if (kir::scan_extreme(in.op)) {
        const DType xt = k_.instrs[in.args[0]].dtype;
        const std::string xv = "(" + extreme_type(xt) + ")" + x;
        os_ << ind << "if (" << extreme_wins(in, xt, "cb" + n + "_", xv) << ") { cb" << n << "_ = " << xv << "; ci" << n
            << "_ = (i64)j; }\n";
      } else {
        os_ << ind << "c" << n << "_ = " << scan_step(in, "c" + n + "_", x) << ";\n";
      }
    }
  });
  os_ << indent << "}\n";
  for (int i : scans) {
    const Instr& in = k_.instrs[i];
    const std::string n = std::to_string(i);
    const bool extreme = kir::scan_extreme(in.op);
    const std::string xt = extreme ? extreme_type(k_.instrs[in.args[0]].dtype) : ctype(in.dtype);
    os_ << indent << "__shared__ " << xt << " cs" << n << "_[" << C << "][32];\n";
    os_ << indent << "cs" << n << "_[threadIdx.x >> 5][threadIdx.x & 31] = " << (extreme ? "cb" : "c") << n << "_;\n";
    if (extreme) {
      os_ << indent << "__shared__ i64 csi" << n << "_[" << C << "][32];\n";
      os_ << indent << "csi" << n << "_[threadIdx.x >> 5][threadIdx.x & 31] = ci" << n << "_;\n";
    }
  }
  os_ << indent << "__syncthreads();\n";
  for (int i : scans) {
    const Instr& in = k_.instrs[i];
    const std::string n = std::to_string(i);
    os_ << indent << ctype(in.dtype) << " s" << n << " = " << scan_identity(in) << ";\n";
    if (kir::scan_extreme(in.op)) {
      const DType xt = k_.instrs[in.args[0]].dtype;
      const std::string t = extreme_type(xt);
      os_ << indent << t << " sb" << n << " = " << extreme_start(in) << ";\n";
      os_ << indent << "for (int c_ = 0; c_ < (int)(threadIdx.x >> 5); ++c_) {\n";
      os_ << indent << "  const i64 yi_ = csi" << n << "_[c_][threadIdx.x & 31];\n";
      os_ << indent << "  const " << t << " yv_ = cs" << n << "_[c_][threadIdx.x & 31];\n";
      os_ << indent << "  if (yi_ >= 0 && (s" << n << " < 0 || " << extreme_wins(in, xt, "sb" + n, "yv_") << ")) { sb" << n
          << " = yv_; s" << n << " = yi_; }\n";
      os_ << indent << "}\n";
    } else {
      os_ << indent << "for (int c_ = 0; c_ < (int)(threadIdx.x >> 5); ++c_) s" << n << " = "
          << scan_step(in, "s" + n, "cs" + n + "_[c_][threadIdx.x & 31]") << ";\n";
    }
  }
}

void Emitter::emit_row_kernel() {
  const bool group = opt_.row_group > 0;
  // A block a row whose rows are never split (register-cached rows): the reductions of a level
  // share one block exchange (emit_block_reduce_level), each with its own shared slots.
  const bool by_level = opt_.row_cache > 0 && !group;
  const std::vector<int> level = kir::reduction_levels(k_);
  std::vector<std::vector<int>> levels;
  for (size_t i = 0; i < level.size(); ++i) {
    if (level[i] < 0) continue;
    if (levels.size() <= static_cast<size_t>(level[i])) levels.resize(static_cast<size_t>(level[i]) + 1);
    levels[static_cast<size_t>(level[i])].push_back(static_cast<int>(i));
  }
  size_t widest = 1;
  if (by_level)
    for (const auto& l : levels) widest = std::max(widest, l.size());
  os_ << "  __shared__ double red_v[" << widest * kBlockThreads / 32 << "];\n";
  os_ << "  __shared__ i64 red_i[" << widest * kBlockThreads / 32 << "];\n";
  os_ << "  __shared__ bool last_block;\n";
  os_ << "  " << idx_ << " rows = 1";
  for (int d = 0; d < k_.outer_rank; ++d) os_ << " * " << size(d);
  os_ << ";\n";
  os_ << "  " << idx_ << " inner = 1";
  for (int d = k_.outer_rank; d < rank_; ++d) os_ << " * " << size(d);
  os_ << ";\n";
  // Split rows (blockIdx.y = segment) cover [seg_lo, seg_hi) of the inner range.
  // (vec4: at multiples of 4, so that every vector lies in one segment; inner is a multiple of 4.)
  // Unsplit launches skip the two 64-bit divisions: in a short-row kernel every thread makes them,
  // and they cost more than its few elements.
  std::string inner = opt_.vec4 ? "(inner / 4)" : "inner", scale = opt_.vec4 ? "4 * " : "";
  os_ << "  const " << idx_ << " seg_lo = gridDim.y == 1 ? 0 : " << scale << "(" << idx_ << ")(((i64)" << inner
      << " * blockIdx.y) / gridDim.y);\n";
  os_ << "  const " << idx_ << " seg_hi = gridDim.y == 1 ? inner : " << scale << "(" << idx_ << ")(((i64)" << inner
      << " * (blockIdx.y + 1)) / gridDim.y);\n";
  if (group) {
    // row_group lanes a row; the grid strides over the rows a warp at a time (the loop's test is
    // the warp's first row, the same in every lane, so that the shuffles see the whole warp);
    // past the last row a group reads the last row again and stores nothing.
    const int g = opt_.row_group;
    os_ << "  const int lane_ = threadIdx.x & " << g - 1 << ";\n";
    os_ << "  const int leader_ = (threadIdx.x & 31) & ~" << g - 1 << ";\n";
    os_ << "  (void)leader_;\n";
    if (opt_.scan_chunks > 0) {
      // A thread a line (g is 1) and a chunk: the block's lanes take 32 lines side by side, its
      // warps the lines' chunks in order (emit_chunk_prefix).
      const std::string C = std::to_string(opt_.scan_chunks);
      os_ << "  const i64 clen_ = ((i64)inner + " << C << " - 1) / " << C << ";\n";
      os_ << "  const i64 clo_ = min((i64)inner, (i64)(threadIdx.x >> 5) * clen_);\n";
      os_ << "  const i64 chi_ = min((i64)inner, clo_ + clen_);\n";
      os_ << "  for (i64 warp_row_ = (i64)blockIdx.x * 32; warp_row_ < rows; warp_row_ += (i64)gridDim.x * 32) {\n";
      os_ << "    const i64 grow_ = warp_row_ + (threadIdx.x & 31);\n";
    } else {
      os_ << "  const i64 grid_rows_ = (i64)gridDim.x * blockDim.x / " << g << ";\n";
      os_ << "  for (i64 warp_row_ = ((i64)blockIdx.x * blockDim.x + (threadIdx.x & ~31)) / " << g
          << "; warp_row_ < rows; warp_row_ += grid_rows_) {\n";
      os_ << "    const i64 grow_ = warp_row_ + (threadIdx.x & 31) / " << g << ";\n";
    }
    os_ << "    const bool valid_ = grow_ < rows;\n";
    os_ << "    const " << idx_ << " row = (" << idx_ << ")(valid_ ? grow_ : rows - 1);\n";
  } else {
    os_ << "  for (" << idx_ << " row = blockIdx.x; row < rows; row += gridDim.x) {\n";
  }
  std::string in4 = "    ";
  emit_row_bases("row", in4);
  row_done_.assign(k_.instrs.size(), false);
  if (opt_.row_cache > 0) emit_row_cache(in4);
  for (const std::vector<int>& is : by_level ? levels : std::vector<std::vector<int>>{}) {
    for (int i : is) emit_thread_reduce(i, "seg_lo", "seg_hi", in4);
    if (is.size() == 1) {
      const Instr& in = k_.instrs[static_cast<size_t>(is[0])];
      const std::string n = std::to_string(is[0]);
      emit_block_reduce(in, k_.instrs[in.args[0]].dtype, "acc" + n, "acci" + n, in4);
    } else {
      emit_block_reduce_level(is, in4);
    }
    for (int i : is) emit_reduce_result(i, in4);
  }
  for (size_t i = 0; i < k_.instrs.size(); ++i) {
    const Instr& in = k_.instrs[i];
    if (in.kind != InstrKind::Reduce || row_done_[i]) continue;
    DType src = k_.instrs[in.args[0]].dtype;
    Combine c = reduction_init(in, src);
    bool arg = c.arg;
    std::string acc = "acc" + std::to_string(i), acc_i = "acci" + std::to_string(i);
    emit_thread_reduce(static_cast<int>(i), "seg_lo", "seg_hi", in4);
    emit_block_reduce(in, src, acc, acc_i, in4);
    // Split rows: publish this segment's partial; the last block of the row combines them in order.
    // (Never for register-cached rows, which the host does not split: no code for it there.)
    if (opt_.row_cache == 0 && !group) {
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
    emit_reduce_result(static_cast<int>(i), in4);
  }
  std::vector<int> row_roots =
      emit_element_outputs(in4, group && k_.has_scan() ? "if (valid_ && in_) " : group ? "if (valid_) " : "");
  if (!row_roots.empty()) {
    emit_row_values(row_roots, in4);
    os_ << in4 << (group ? "if (lane_ == 0 && valid_) {\n" : "if (threadIdx.x == 0) {\n");
    for (const kir::Output& o : k_.outputs)
      if (k_.instrs[o.instr].row)
        os_ << in4 << "  " << store(o.slot, "b" + std::to_string(o.slot), k_.operands[o.slot].dtype, v(o.instr)) << "\n";
    os_ << in4 << "}\n";
  }
  if (!group || opt_.scan_chunks > 0) os_ << in4 << "__syncthreads();\n";  // before the next row's shared memory
  os_ << "  }\n";
}

// EmitOptions::row_sweep. Thread t takes column t % cols of the last outer dim and rows t,
// t + stride, ... (stride: the grid's threads, rounded down to whole sweeps of cols), so the threads
// of a warp hold consecutive rows: their row outputs are written side by side. The sweep's
// invariant inputs (sweep_invariant) are the same at every row a thread takes: read once into
// c<o>[k_]; every other load is per element. A thread holds its whole row: no shuffles.
void Emitter::emit_sweep_kernel() {
  const int S = opt_.row_sweep;
  if (k_.outer_rank < 2 || k_.inner_rank != 1) throw Error("cuda emitter: a row sweep needs two outer dims and one inner (internal error)");
  os_ << "  const " << idx_ << " rows = 1";
  for (int d = 0; d < k_.outer_rank; ++d) os_ << " * " << size(d);
  os_ << ";\n";
  os_ << "  const " << idx_ << " inner = " << size(k_.outer_rank) << ";\n";
  os_ << "  const i64 cols_ = " << size(k_.outer_rank - 1) << ";\n";
  os_ << "  const i64 t_ = (i64)blockIdx.x * blockDim.x + threadIdx.x;\n";
  os_ << "  const i64 stride_ = (i64)gridDim.x * blockDim.x / cols_ * cols_;\n";
  os_ << "  if (t_ >= stride_) return;\n";
  cache_ = sweep_invariant(k_);
  std::vector<DType> types(k_.operands.size());
  for (const Instr& in : k_.instrs)
    if (in.kind == InstrKind::Load && !in.row) types[in.slot] = in.dtype;
  for (size_t o = 0; o < cache_.size(); ++o)
    if (cache_[o]) os_ << "  " << ctype(types[o]) << " c" << o << "[" << S << "];\n";
  os_ << "  {\n";
  os_ << "    const " << idx_ << " row = (" << idx_ << ")(t_ % cols_);\n";
  emit_row_bases("row", "    ");
  os_ << "    #pragma unroll\n";
  os_ << "    for (int k_ = 0; k_ < " << S << "; ++k_) {\n";
  if (!opt_.row_full) os_ << "      if (k_ >= inner) break;\n";
  os_ << "      const " << idx_ << " j = k_;\n";
  emit_element_offsets("j", "      ");
  for (size_t o = 0; o < cache_.size(); ++o)
    if (cache_[o]) os_ << "      c" << o << "[k_] = " << load(static_cast<int>(o), "e" + std::to_string(o), types[o]) << ";\n";
  os_ << "    }\n";
  os_ << "  }\n";
  // kSweepRows rows a step, unrolled into one block of code: a row past the end computes the last
  // row again and stores nothing, so no branch separates the steps' loads and the compiler may
  // issue them together. (On the H100 this measured within noise of a row a step: 0.35 against
  // 0.36 ms for k-means' distances, in separate calls.)
  os_ << "  for (i64 base_ = t_; base_ < rows; base_ += " << kSweepRows << " * stride_) {\n";
  os_ << "  #pragma unroll\n";
  os_ << "  for (int u_ = 0; u_ < " << kSweepRows << "; ++u_) {\n";
  os_ << "    const i64 row64_ = base_ + u_ * stride_;\n";
  os_ << "    const bool valid_ = row64_ < rows;\n";
  os_ << "    const " << idx_ << " row = (" << idx_ << ")(valid_ ? row64_ : rows - 1);\n";
  const std::string in4 = "    ";
  emit_row_bases("row", in4);
  row_done_.assign(k_.instrs.size(), false);
  for (size_t i = 0; i < k_.instrs.size(); ++i) {
    const Instr& in = k_.instrs[i];
    if (in.kind != InstrKind::Reduce) continue;
    emit_thread_reduce(static_cast<int>(i), "0", "inner", in4);
    emit_reduce_result(static_cast<int>(i), in4);
  }
  std::vector<int> row_roots = emit_element_outputs(in4, "if (valid_) ");
  emit_row_values(row_roots, in4);
  for (const kir::Output& o : k_.outputs)
    if (k_.instrs[o.instr].row)
      os_ << in4 << "if (valid_) " << store(o.slot, "b" + std::to_string(o.slot), k_.operands[o.slot].dtype, v(o.instr)) << "\n";
  os_ << "  }\n";
  os_ << "  }\n";
}

}  // namespace lf::cuda
