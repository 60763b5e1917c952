// A matmul group on a GPU: cuBLASLt with its own epilogue where that is the whole epilogue; else
// the generated matmul kernel with the epilogue inside, or cuBLASLt's product followed by the
// epilogue kernel, as the cost rule picks (LAZYFUSE_MATMUL overrides it).
#include <algorithm>
#include <optional>

#include "codegen/backend/kernel.h"
#include "codegen/cuda/backend.h"
#include "codegen/cuda/gemm.h"
#include "codegen/ir/view.h"
#include "codegen/reference/reference.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"

namespace lf::cuda {
namespace {

// The generated matmul kernel with the epilogue inside, when it is the better choice. The cost
// rule compares it with cuBLASLt's product plus an epilogue pass, using rates measured on the H100
// (bench/RESULTS.md): cuBLASLt about 50 TFLOP/s in float32 and float64 and 600 in the 16-bit
// floats; the generated SIMT kernel 16.5 TFLOP/s once its 128x128 tiles fill every SM, and
// proportionally less with fewer tiles; the pass writes and reads the product once more at about
// 3 TB/s, plus a launch. So the generated kernel wins on wide products with a short k, cuBLASLt on
// the rest. Taken too whenever cuBLASLt declines the problem (integers, no unit stride, no cuBLASLt
// at all). A product that is kept (an output of the group, or a group that is the product alone)
// must be written anyway: cuBLASLt writes it when it can; when it cannot, the kernel stores it too,
// through a copy of the product among the epilogue's outputs. Returns false to go on.
constexpr double kGeneratedRate = 16.5e12;

// A replayed cuBLASLt call that fails (it ran when the plan was recorded, with the same layouts)
// is an error: its outputs were already handed out.
void check_replay(const lf::Status& st) {
  if (!st.ok()) throw lf::Error("lf::matmul: cuBLASLt failed in a replayed flush plan: " + std::string(st.message()));
}

bool run_generated(backend::MatmulCall& call, const std::string& lt_why, bool recordable) {
  const fuse::Group& g = call.run.group;
  const kir::GemmProblem& problem = call.problem;
  ir::Node* mm = call.product();
  const bool kept = !call.has_epilogue() || std::find(g.outputs.begin(), g.outputs.end(), mm) != g.outputs.end();
  lf::Status lt = lt_supports(problem);
  if (kept && lt.ok()) return false;
  if (problem.batch.size() > static_cast<size_t>(kGemmMaxBatchRank)) return false;
  int64_t batch = 1;
  for (int64_t s : problem.batch) batch *= s;
  if (batch > 65535 || (problem.m + kGemmTile - 1) / kGemmTile > 65535) return false;
  double flop = 2.0 * static_cast<double>(batch * problem.m) * static_cast<double>(problem.n) * static_cast<double>(problem.k);
  double out_bytes = static_cast<double>(batch * problem.m * problem.n) * static_cast<double>(dtype_size(mm->dtype));
  double lt_rate = dtype_size(mm->dtype) == 2                                       ? 600e12
                   : mm->dtype == DType::Float32 && rt::config().matmul_tf32 ? 300e12  // TF32 tensor cores
                                                                             : 50e12;
  double t_lt = flop / lt_rate + 2 * out_bytes / 3e12 + 5e-6;
  double tiles = static_cast<double>(batch) * static_cast<double>((problem.m + kGemmTile - 1) / kGemmTile) *
                 static_cast<double>((problem.n + kGemmTile - 1) / kGemmTile);
  double sms = rt::cu::context_of(mm->device.index()).info.multiprocessors;
  double t_gen = flop / (kGeneratedRate * std::min(1.0, tiles / std::max(sms, 1.0)));
  const std::string& choice = rt::config().matmul;  // LAZYFUSE_MATMUL
  std::string why;
  if (!lt.ok()) why = "cuBLASLt cannot take it: " + std::string(lt.message());
  else if (choice == "generated") why = "LAZYFUSE_MATMUL=generated";
  else if (choice == "auto" && t_gen < t_lt) why = "estimated faster than cuBLASLt plus an epilogue pass";
  else return false;
  Device device = mm->device;
  // The product is an input of the epilogue that the kernel never loads: lower with a stand-in
  // storage, then make the node pending again (its value lives only in registers).
  auto stand_in = rt::Storage::allocate(device, dtype_size(mm->dtype));
  mm->storage = stand_in;
  mm->layout = ir::Layout{ir::contiguous_strides(mm->shape), 0};
  fuse::Group epilogue = call.epilogue_group();
  // A kept product: a copy of it, an output of the kernel (stored from the accumulators). It reads
  // the product node itself (a non-owning pointer: the node outlives the call), so that it is the
  // same operand as the epilogue's reads of the product.
  ir::NodePtr copy;
  if (kept) {
    copy = ir::make_node(ir::Op::Copy, mm->dtype, device, Shape(mm->shape), {ir::NodePtr(ir::NodePtr(), mm)});
    epilogue.nodes.insert(epilogue.nodes.begin(), copy.get());
    epilogue.outputs.insert(epilogue.outputs.begin(), copy.get());
  }
  backend::Prepared k = backend::prepare(call.run, epilogue, {.keep_last_dim = true, .product = stand_in->data()});
  mm->storage = nullptr;
  mm->layout = ir::Layout{};
  if (!k.entry->kernel) return false;  // reported by prepare(); the other path runs it
  GemmParams gp;
  gp.a = problem.a.data;
  gp.b = problem.b.data;
  gp.m = problem.m;
  gp.n = problem.n;
  gp.k = problem.k;
  size_t r = problem.batch.size();
  gp.a_offset = problem.a.offset;
  gp.a_sm = problem.a.strides[r];
  gp.a_sk = problem.a.strides[r + 1];
  gp.b_offset = problem.b.offset;
  gp.b_sk = problem.b.strides[r];
  gp.b_sn = problem.b.strides[r + 1];
  gp.batch_rank = static_cast<int64_t>(r);
  for (size_t d = 0; d < r; ++d) {
    gp.batch[d] = problem.batch[d];
    gp.a_batch_stride[d] = problem.a.strides[d];
    gp.b_batch_stride[d] = problem.b.strides[d];
  }
  launch_matmul(static_cast<const CompiledKernel&>(*k.entry->kernel), k.low.kernel, k.low.args, gp, device.index());
  if (call.record && recordable && !k.low.error_storage) {
    // For a flush plan: A, B, then the kernel's operands; the product's operand is the stand-in,
    // which the kernel never loads: kept here and bound as it was.
    backend::RecordedCall& r = *call.record;
    r.add_outputs(k);
    for (auto& [node, storage] : r.outputs)
      if (node == copy.get()) node = mm;  // the plan hands the copy's buffer to the product
    r.addresses = {problem.a.data, problem.b.data};
    r.add_operands(k);
    std::vector<size_t> product_at;  // the stand-in's operands
    for (size_t i = 2; i < r.addresses.size(); ++i)
      if (r.addresses[i] == stand_in->data()) {
        r.addresses[i] = nullptr;
        product_at.push_back(i - 2);
      }
    auto kr = std::make_shared<backend::KernelReplay>(k);
    r.replay = [kr, gp, stand_in, product_at, device](void* const* p) mutable {
      gp.a = p[0];
      gp.b = p[1];
      kr->bind(p + 2);
      for (size_t i : product_at) kr->args.pointers[i] = stand_in->data();
      launch_matmul(static_cast<const CompiledKernel&>(*kr->entry->kernel), kr->kernel, kr->args, gp, device.index());
    };
  }
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += static_cast<uint64_t>(k.low.bytes);
  backend::materialize_outputs(k);
  if (copy) backend::materialize(*mm, copy->storage, copy->layout);
  std::string inside = !call.has_epilogue() ? "the product stored" : kept ? "the epilogue inside, the product stored too"
                                                                            : "the epilogue inside";
  call.log("generated matmul kernel " + k.name + " with " + inside + " (" + why + ")" +
           (lt_why.empty() ? "" : "; cuBLASLt's epilogue: " + lt_why));
  return true;
}

// Operand `which` of the product copied contiguous on the device by a generated copy kernel (its
// storage kept in *keep); false when that kernel did not compile.
bool copy_contiguous(backend::MatmulCall& call, int which, kir::GemmOperand* out, std::shared_ptr<rt::Storage>* keep) {
  const ir::NodePtr& in = call.product()->inputs[static_cast<size_t>(which)];
  *keep = backend::copy_contiguous(call.run, in);
  if (!*keep) return false;
  // In the problem's dims: batch dims folded into rows (exec's fold_batch_into_rows) are the node's
  // trailing batch dims; a contiguous A runs on across them at its row stride, and a B that was
  // broadcast over them is read at their first index.
  const Shape full = ir::contiguous_strides(in->shape);
  const size_t nb = call.problem.batch.size(), r = full.size();
  Shape strides(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(std::min(nb, r - 2)));
  strides.insert(strides.begin(), nb - strides.size(), 0);
  strides.insert(strides.end(), {full[r - 2], full[r - 1]});
  *out = {(*keep)->data(), 0, strides};
  return true;
}

// cuBLASLt reads operands with a unit stride in their last two dims and batch dims of one stride.
// Others (a permuted or sliced view over the batch dims, as attention's heads make) are copied
// contiguous first: one pass over the operand, against the product's pass over it per column
// block. Returns what was copied, for the log.
std::string make_lt_readable(backend::MatmulCall& call, std::shared_ptr<rt::Storage> keep[2]) {
  kir::GemmProblem& p = call.problem;
  kir::GemmProblem plain = p;  // contiguous operands: the dtype check alone
  Shape a_shape = p.batch, b_shape = p.batch;
  a_shape.insert(a_shape.end(), {p.m, p.k});
  b_shape.insert(b_shape.end(), {p.k, p.n});
  plain.a.strides = ir::contiguous_strides(a_shape);
  plain.b.strides = ir::contiguous_strides(b_shape);
  if (!lt_supports(plain).ok()) return "";
  std::string copied;
  if (!lt_reads(p.a, p.batch, p.m, p.k) && copy_contiguous(call, 0, &p.a, &keep[0])) copied += "A";
  if (!lt_reads(p.b, p.batch, p.k, p.n) && copy_contiguous(call, 1, &p.b, &keep[1]))
    copied += copied.empty() ? "B" : " and B";
  return copied.empty() ? "" : copied + " copied contiguous first (a layout cuBLASLt cannot read)";
}

}  // namespace

void run_matmul(backend::MatmulCall& call) {
  ir::Node* mm = call.product();
  Device device = mm->device;
  CacheStats& stats = call.run.stats;
  std::shared_ptr<rt::Storage> copies[2];
  std::string copied = make_lt_readable(call, copies);
  kir::GemmProblem problem = call.problem;
  size_t esize = dtype_size(mm->dtype);

  // The whole epilogue inside cuBLASLt: it writes the group's one output, nothing else runs.
  std::string lt_why;
  LtMatch match = match_lt_epilogue(call.run.group);
  if (match.whole && (match.epilogue != LtEpilogue::kNone || match.residual)) {
    auto out = rt::Storage::allocate(device, call.c_bytes);
    problem.c = out->data();
    auto at = [esize](const ir::Node* n, int64_t offset) -> const void* {
      return n ? static_cast<const char*>(n->storage->data()) + offset * static_cast<int64_t>(esize) : nullptr;
    };
    const void* bias = at(match.bias, match.bias_offset);
    const void* residual = at(match.residual, match.residual_offset);
    lf::Status st = problem.m * problem.n == 0 ? lf::OkStatus()
                                               : lt_matmul(problem, match.epilogue, bias, device.index(), residual);
    if (st.ok()) {
      ++stats.kernels_launched;
      stats.bytes_moved += call.gemm_bytes;
      if (call.record && copied.empty()) {  // for a flush plan: A, B, D, the bias's buffer, the residual's
        int64_t bias_offset = match.bias ? match.bias_offset * static_cast<int64_t>(esize) : 0;
        int64_t residual_offset = match.residual ? match.residual_offset * static_cast<int64_t>(esize) : 0;
        call.record->outputs.emplace_back(match.output, out);
        call.record->addresses = {problem.a.data, problem.b.data, out->data(),
                                  match.bias ? match.bias->storage->data() : nullptr,
                                  match.residual ? match.residual->storage->data() : nullptr};
        call.record->replay = [problem, epilogue = match.epilogue, bias_offset, residual_offset,
                               device](void* const* p) mutable {
          problem.a.data = p[0];
          problem.b.data = p[1];
          problem.c = p[2];
          const void* bias = p[3] ? static_cast<const char*>(p[3]) + bias_offset : nullptr;
          const void* residual = p[4] ? static_cast<const char*>(p[4]) + residual_offset : nullptr;
          check_replay(lt_matmul(problem, epilogue, bias, device.index(), residual));
        };
      }
      backend::materialize(*match.output, out, ir::Layout{ir::contiguous_strides(match.output->shape), 0});
      std::string epi = match.epilogue == LtEpilogue::kNone ? "" : lt_epilogue_name(match.epilogue);
      if (match.residual) epi += epi.empty() ? "residual" : " + residual";
      call.log("cuBLASLt with its " + epi + " epilogue (" + lt_status(mm->dtype) + "), product written once" +
               (copied.empty() ? "" : "; " + copied));
      return;
    }
    lt_why = std::string(st.message());
  }

  if (run_generated(call, lt_why, copied.empty())) return;

  auto c = rt::Storage::allocate(device, call.c_bytes);
  problem.c = c->data();
  std::string how;
  lf::Status st = problem.m * problem.n == 0 ? lf::OkStatus() : lt_matmul(problem, LtEpilogue::kNone, nullptr, device.index());
  if (st.ok()) {
    backend::materialize(*mm, c, ir::Layout{ir::contiguous_strides(mm->shape), 0});
    how = "cuBLASLt (" + lt_status(mm->dtype) + ")";
    if (!copied.empty()) how += "; " + copied;
    if (!lt_why.empty()) how += "; its epilogue could not: " + lt_why;
  } else {
    // The last resort (no cuBLASLt, and the generated kernel declined): the reference executor's
    // product, copied to the device.
    backend::materialize_value(*mm, ir::reference_eval(mm));
    how = "the reference executor's product copied to the device (cuBLASLt: " + std::string(st.message()) + ")";
  }
  // The epilogue, lowered now that the product is a realized input of it.
  std::optional<backend::Prepared> epilogue;
  if (call.has_epilogue()) {
    fuse::Group e = call.epilogue_group();
    if (!e.outputs.empty()) epilogue = backend::prepare(call.run, e, {.keep_last_dim = true});
  }
  ++stats.kernels_launched;
  stats.bytes_moved += call.gemm_bytes;
  if (epilogue && !epilogue->entry->kernel) {
    backend::run_fallback(*epilogue);
  } else if (epilogue) {
    backend::launch(*epilogue, stats);
    backend::materialize_outputs(*epilogue);
    how += ", then the epilogue kernel";
  }
  if (call.record && copied.empty() && st.ok() && !(epilogue && (!epilogue->entry->kernel || epilogue->low.error_storage))) {
    // For a flush plan: A, B, C, then the epilogue's operands.
    backend::RecordedCall& r = *call.record;
    r.outputs.emplace_back(mm, c);
    r.addresses = {problem.a.data, problem.b.data, c->data()};
    std::shared_ptr<backend::KernelReplay> kr;
    if (epilogue) {
      r.add_outputs(*epilogue);
      r.add_operands(*epilogue);
      kr = std::make_shared<backend::KernelReplay>(*epilogue);
    }
    r.replay = [problem, kr, device](void* const* p) mutable {
      problem.a.data = p[0];
      problem.b.data = p[1];
      problem.c = p[2];
      if (problem.m * problem.n != 0) check_replay(lt_matmul(problem, LtEpilogue::kNone, nullptr, device.index()));
      if (kr) {
        kr->bind(p + 3);
        kr->launch();
      }
    };
  }
  call.log(how);
}

}  // namespace lf::cuda
