// The CUDA emitter: pointwise kernels (scalar and 16-byte vector) and the generated matmul kernel
// with its epilogue.
#include "codegen/cuda/emitter.h"

namespace lf::cuda {

// One element of a pointwise kernel at `row` and column `col` (in scope).
void Emitter::emit_pointwise_element(const std::string& row, const std::string& indent) {
  emit_row_bases(row, indent);
  emit_element_offsets("col", indent);
  std::vector<int> roots;
  for (const kir::Output& o : k_.outputs) roots.push_back(o.instr);
  row_done_.assign(k_.instrs.size(), false);
  emit_element_values(roots, indent);
  for (const kir::Output& o : k_.outputs)
    os_ << indent << store(o.slot, "e" + std::to_string(o.slot), k_.operands[o.slot].dtype, v(o.instr)) << "\n";
}

void Emitter::emit_pointwise_rows2d() {
  const std::string R = std::to_string(opt_.rows2d), cols = size(rank_ - 1);
  os_ << "  const " << idx_ << " rows = 1";
  for (int d = 0; d < k_.outer_rank; ++d) os_ << " * " << size(d);
  os_ << ";\n";
  os_ << "  const " << idx_ << " col = (" << idx_ << ")(blockIdx.x * blockDim.x + threadIdx.x);\n";
  os_ << "  if (col >= " << cols << ") return;\n";
  os_ << "  for (i64 r64 = (i64)blockIdx.y * " << R << "; r64 < rows; r64 += (i64)gridDim.y * " << R << ") {\n";
  os_ << "    const " << idx_ << " r0_ = (" << idx_ << ")r64;\n";
  // Whole chunks unrolled without bounds checks (the loads of its rows in flight together), then
  // the last rows one at a time.
  os_ << "    if (r0_ + " << R << " <= rows) {\n";
  os_ << "      #pragma unroll\n";
  os_ << "      for (int u_ = 0; u_ < " << R << "; ++u_) {\n";
  os_ << "        const " << idx_ << " row = r0_ + u_;\n";
  emit_pointwise_element("row", "        ");
  os_ << "      }\n";
  os_ << "    } else {\n";
  os_ << "      for (" << idx_ << " row = r0_; row < rows; ++row) {\n";
  emit_pointwise_element("row", "        ");
  os_ << "      }\n";
  os_ << "    }\n";
  os_ << "  }\n";
}

void Emitter::emit_pointwise_kernel() {
  if (opt_.vec4) return emit_pointwise_vec4();
  if (opt_.rows2d > 0) return emit_pointwise_rows2d();
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
    os_ << "    " << divmod("t", rank_ - 1, "row", "col") << "\n";
  }
  emit_pointwise_element("row", "    ");
  os_ << "  }\n";
}

void Emitter::emit_matmul_kernel() {
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

// Four consecutive elements per thread: one 16-byte load per contiguous input, the element code
// four times (with the four loaded values), one 16-byte store per output.
void Emitter::emit_pointwise_vec4() {
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

}  // namespace lf::cuda
