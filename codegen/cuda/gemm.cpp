// cuBLASLt through dlopen (see cuda_gemm.h). Our tensors are row-major; cuBLASLt's matrices are
// column-major, and a row-major [m, n] matrix is the column-major [n, m] one, so C = A @ B is run
// as C^T = B^T @ A^T: cuBLASLt's first operand is our B, its second our A, and its "rows" of D
// are our columns, which is also why its bias vector (one value per row of D) is our [n] bias.
#include "codegen/cuda/gemm.h"

#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "codegen/ir/view.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"
#include "runtime/shared_library.h"
#include "runtime/storage.h"

namespace lf::cuda {
namespace {

// The ABI subset of cublasLt.h, cublas_api.h and library_types.h (CUDA 12 and 13) we use.
using LtStatus = int;
using LtHandle = struct cublasLtContext*;
using LtDesc = struct LtDescOpaque*;
using LtLayout = struct LtLayoutOpaque*;
using LtPref = struct LtPrefOpaque*;
struct LtAlgo {
  uint64_t data[8];
};
struct LtHeuristic {
  LtAlgo algo;
  size_t workspace_size;
  LtStatus state;
  float waves;
  int reserved[4];
};
constexpr int kR32F = 0, kR64F = 1, kR16F = 2, kR16BF = 14;             // cudaDataType
constexpr int kCompute32F = 68, kCompute32FFastTf32 = 77, kCompute64F = 70;  // cublasComputeType_t
constexpr int kOpN = 0, kOpT = 1;                                       // cublasOperation_t
constexpr int kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7;      // cublasLtMatmulDescAttributes_t
constexpr int kDescBiasPointer = 8, kDescBiasDataType = 26;
constexpr int kLayoutBatchCount = 5, kLayoutBatchStride = 6;            // cublasLtMatrixLayoutAttribute_t
constexpr int kPrefMaxWorkspace = 1;                                    // cublasLtMatmulPreferenceAttributes_t
constexpr uint32_t kEpiDefault = 1, kEpiBias = 4;  // cublasLtEpilogue_t
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

struct Lt {
  LtStatus (*create)(LtHandle*);
  size_t (*version)();
  LtStatus (*desc_create)(LtDesc*, int, int);
  LtStatus (*desc_set)(LtDesc, int, const void*, size_t);
  LtStatus (*layout_create)(LtLayout*, int, uint64_t, uint64_t, int64_t);
  LtStatus (*layout_set)(LtLayout, int, const void*, size_t);
  LtStatus (*pref_create)(LtPref*);
  LtStatus (*pref_set)(LtPref, int, const void*, size_t);
  LtStatus (*heuristic)(LtHandle, LtDesc, LtLayout, LtLayout, LtLayout, LtLayout, LtPref, int, LtHeuristic*, int*);
  LtStatus (*matmul)(LtHandle, LtDesc, const void*, const void*, LtLayout, const void*, LtLayout, const void*,
                     const void*, LtLayout, void*, LtLayout, const LtAlgo*, void*, size_t, rt::cu::CUstream);
  std::string error;  // why cuBLASLt is unusable, when it is
};

const Lt& lt() {
  static const Lt l = [] {
    Lt l{};
    auto lib = rt::SharedLibrary::open({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
                                        "/usr/local/cuda/lib64/libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.12"});
    if (!lib.loaded()) {
      l.error = "libcublasLt.so not found (install cuBLAS, or put its directory on LD_LIBRARY_PATH)";
      return l;
    }
    auto bind = [&](auto& fn, const char* sym) { lib.bind(fn, sym); };
    bind(l.create, "cublasLtCreate");
    bind(l.version, "cublasLtGetVersion");
    bind(l.desc_create, "cublasLtMatmulDescCreate");
    bind(l.desc_set, "cublasLtMatmulDescSetAttribute");
    bind(l.layout_create, "cublasLtMatrixLayoutCreate");
    bind(l.layout_set, "cublasLtMatrixLayoutSetAttribute");
    bind(l.pref_create, "cublasLtMatmulPreferenceCreate");
    bind(l.pref_set, "cublasLtMatmulPreferenceSetAttribute");
    bind(l.heuristic, "cublasLtMatmulAlgoGetHeuristic");
    bind(l.matmul, "cublasLtMatmul");
    if (!lib.missing().empty()) l.error = "libcublasLt lacks entry points: " + lib.missing();
    return l;
  }();
  return l;
}

lf::Status lt_check(LtStatus s, const char* call) {
  if (s == 0) return lf::OkStatus();
  return lf::InternalError(std::string(call) + " failed: cublasStatus " + std::to_string(s));
}
#define LF_LT_RETURN_IF_ERROR(call)                              \
  do {                                                           \
    if (lf::Status s_ = lt_check((call), #call); !s_.ok()) return s_; \
  } while (0)

// A matrix as cuBLASLt sees it: column-major rows x cols with leading dimension ld, maybe
// transposed by the op. From a row-major view [r, c] with strides (sr, sc) we want the
// column-major [c, r] (op N): that needs sc == 1; else the stored [r, c] transposed (op T): sr == 1.
struct LtMatrix {
  int op = kOpN;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
};
bool as_lt_matrix(int64_t r, int64_t c, int64_t sr, int64_t sc, LtMatrix* out) {
  if (sc == 1 || c <= 1) {
    int64_t ld = r <= 1 ? std::max<int64_t>(c, 1) : sr;
    if (ld >= std::max<int64_t>(c, 1)) {
      *out = {kOpN, static_cast<uint64_t>(c), static_cast<uint64_t>(r), ld};
      return true;
    }
  }
  if (sr == 1 || r <= 1) {
    int64_t ld = c <= 1 ? std::max<int64_t>(r, 1) : sc;
    if (ld >= std::max<int64_t>(r, 1)) {
      *out = {kOpT, static_cast<uint64_t>(r), static_cast<uint64_t>(c), ld};
      return true;
    }
  }
  return false;
}

// One batch stride for all batch dims (size-1 dims ignored), or false.
bool single_batch_stride(const Shape& batch, const Shape& strides, int64_t* stride) {
  int64_t expect = -1;
  *stride = 0;
  for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
    int64_t n = batch[static_cast<size_t>(d)], s = strides[static_cast<size_t>(d)];
    if (n == 1) continue;
    if (expect < 0) {
      *stride = s;
      expect = s * n;
    } else if (s != expect) {
      return false;
    } else {
      expect = s * n;
    }
  }
  return true;
}

struct Types {
  int data, compute, scale;
};
bool lt_types(DType d, Types* t) {
  switch (d) {
    case DType::Float32:  // TF32 tensor cores only where the user allowed them (LAZYFUSE_MATMUL_TF32)
      *t = {kR32F, rt::config().matmul_tf32 ? kCompute32FFastTf32 : kCompute32F, kR32F};
      return true;
    case DType::Float16: *t = {kR16F, kCompute32F, kR32F}; return true;
    case DType::BFloat16: *t = {kR16BF, kCompute32F, kR32F}; return true;
    case DType::Float64: *t = {kR64F, kCompute64F, kR64F}; return true;
    default: return false;
  }
}

// Everything of a call but the pointers: descriptors and the chosen algorithm, made once per
// distinct problem (the heuristic query costs tens of microseconds).
struct Plan {
  LtDesc desc = nullptr;
  LtLayout a = nullptr, b = nullptr, d = nullptr;
  LtHeuristic algo{};
};

struct PerDevice {
  LtHandle handle = nullptr;
  std::shared_ptr<rt::Storage> workspace;
  std::map<std::string, Plan> plans;
};

}  // namespace

const char* lt_epilogue_name(LtEpilogue e) {
  switch (e) {
    case LtEpilogue::kNone: return "none";
    case LtEpilogue::kBias: return "bias";
  }
  return "?";
}

LtMatch match_lt_epilogue(const fuse::Group& g) {
  LtMatch m;
  ir::Node* mm = g.nodes[0];
  m.output = mm;
  auto only_output = [&](const ir::Node* n) { return g.outputs.size() == 1 && g.outputs[0] == n; };
  if (g.nodes.size() == 1) {
    m.whole = true;
    return m;
  }
  size_t at = 1;
  ir::Node* last = mm;
  // + bias: the other operand a realized [n] vector broadcast along the rows, of mm's dtype.
  ir::Node* n1 = g.nodes[at];
  if (n1->op == ir::Op::Add && n1->dtype == mm->dtype) {
    int other = n1->inputs[0].get() == mm ? 1 : n1->inputs[1].get() == mm ? 0 : -1;
    if (other >= 0) {
      auto [source, chain] = ir::resolve_views(n1->inputs[static_cast<size_t>(other)].get());
      auto v = source->realized() && source->dtype == mm->dtype ? ir::view_of_chain(*source, chain) : std::nullopt;
      bool row_vector = v.has_value();
      for (size_t d = 0; row_vector && d < v->strides.size(); ++d) {
        bool last_dim = d + 1 == v->strides.size();
        row_vector = last_dim ? (v->strides[d] == 1 || n1->shape[d] == 1) : v->strides[d] == 0 || n1->shape[d] == 1;
      }
      if (row_vector) {
        m.bias = source;
        m.bias_offset = v->offset;
        m.epilogue = LtEpilogue::kBias;
        last = n1;
        ++at;
      }
    }
  }
  // + residual: the other operand a realized contiguous value of the output's shape and dtype.
  if (at < g.nodes.size()) {
    ir::Node* n2 = g.nodes[at];
    int other = n2->op != ir::Op::Add || n2->dtype != mm->dtype ? -1
                : n2->inputs[0].get() == last                   ? 1
                : n2->inputs[1].get() == last                   ? 0
                                                                : -1;
    if (other >= 0 && n2->shape == last->shape) {
      auto [source, chain] = ir::resolve_views(n2->inputs[static_cast<size_t>(other)].get());
      auto v = source->realized() && source->dtype == mm->dtype ? ir::view_of_chain(*source, chain) : std::nullopt;
      if (v && v->strides == ir::contiguous_strides(n2->shape)) {
        m.residual = source;
        m.residual_offset = v->offset;
        last = n2;
        ++at;
      }
    }
  }
  if (at == g.nodes.size() && only_output(last)) {
    m.whole = true;
    m.output = last;
    return m;
  }
  return LtMatch{LtEpilogue::kNone, false, nullptr, 0, nullptr, 0, mm};
}

std::string lt_status(DType dtype) {
  const Lt& l = lt();
  if (!l.error.empty()) return l.error;
  return "cuBLASLt " + std::to_string(l.version()) + (dtype == DType::Float32 && rt::config().matmul_tf32 ? ", float32 on TF32 tensor cores" : "");
}

lf::Status lt_supports(const kir::GemmProblem& p) {
  const Lt& l = lt();
  if (!l.error.empty()) return lf::UnavailableError(l.error);
  Types t;
  if (!lt_types(p.dtype, &t)) return lf::UnimplementedError(std::string("cuBLASLt: no ") + dtype_name(p.dtype));
  size_t r = p.batch.size();
  LtMatrix unused;
  if (!as_lt_matrix(p.k, p.n, p.b.strides[r], p.b.strides[r + 1], &unused) ||
      !as_lt_matrix(p.m, p.k, p.a.strides[r], p.a.strides[r + 1], &unused))
    return lf::UnimplementedError("cuBLASLt: an operand has no unit stride in its last two dims");
  int64_t stride = 0;
  if (!single_batch_stride(p.batch, p.a.strides, &stride) || !single_batch_stride(p.batch, p.b.strides, &stride))
    return lf::UnimplementedError("cuBLASLt: batch dims that are not one stride");
  return lf::OkStatus();
}

bool lt_reads(const kir::GemmOperand& o, const Shape& batch, int64_t rows, int64_t cols) {
  size_t r = batch.size();
  LtMatrix unused;
  int64_t stride = 0;
  return as_lt_matrix(rows, cols, o.strides[r], o.strides[r + 1], &unused) && single_batch_stride(batch, o.strides, &stride);
}

lf::Status lt_matmul(const kir::GemmProblem& p, LtEpilogue epilogue, const void* bias, int device,
                     const void* residual) {
  if (lf::Status s = lt_supports(p); !s.ok()) return s;
  const Lt& l = lt();
  Types t;
  lt_types(p.dtype, &t);
  size_t r = p.batch.size();
  // cuBLASLt's first operand is our B ([k, n] row-major), its second our A ([m, k]).
  LtMatrix first, second;
  as_lt_matrix(p.k, p.n, p.b.strides[r], p.b.strides[r + 1], &first);
  as_lt_matrix(p.m, p.k, p.a.strides[r], p.a.strides[r + 1], &second);
  int64_t batch = 1, a_stride = 0, b_stride = 0;
  for (int64_t s : p.batch) batch *= s;
  single_batch_stride(p.batch, p.a.strides, &a_stride);
  single_batch_stride(p.batch, p.b.strides, &b_stride);
  if (batch > 1 && bias) return lf::UnimplementedError("cuBLASLt: a batched bias epilogue");

  static std::mutex mu;
  static std::map<int, PerDevice> devices;
  std::lock_guard<std::mutex> lock(mu);
  rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
  PerDevice& dev = devices[device];
  if (!dev.handle) {
    LF_LT_RETURN_IF_ERROR(l.create(&dev.handle));
    dev.workspace = rt::Storage::allocate(Device::cuda(device), kWorkspaceBytes);
  }
  uint32_t epi = epilogue == LtEpilogue::kBias ? kEpiBias : kEpiDefault;
  int64_t d_stride = p.m * p.n;
  size_t esize = dtype_size(p.dtype);
  const char* a = static_cast<const char*>(p.a.data) + p.a.offset * static_cast<int64_t>(esize);
  const char* b = static_cast<const char*>(p.b.data) + p.b.offset * static_cast<int64_t>(esize);
  // The algorithm chosen depends on the pointers' alignment too.
  auto aligned = [](const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0 ? 'a' : 'u'; };
  char key[512];
  std::snprintf(key, sizeof key, "%c%c%c%c%c|%d|%d|%u|%d,%llu,%llu,%lld|%d,%llu,%llu,%lld|%lld|%lld,%lld,%lld|%lld,%lld", aligned(a), aligned(b),
                aligned(p.c), bias ? aligned(bias) : '-', residual ? aligned(residual) : '-', t.data, t.compute, epi, first.op, (unsigned long long)first.rows, (unsigned long long)first.cols,
                (long long)first.ld, second.op, (unsigned long long)second.rows, (unsigned long long)second.cols,
                (long long)second.ld, (long long)batch, (long long)b_stride, (long long)a_stride, (long long)d_stride,
                (long long)p.n, (long long)p.m);
  auto it = dev.plans.find(key);
  if (it == dev.plans.end()) {
    Plan plan;
    LF_LT_RETURN_IF_ERROR(l.desc_create(&plan.desc, t.compute, t.scale));
    LF_LT_RETURN_IF_ERROR(l.desc_set(plan.desc, kDescTransA, &first.op, sizeof(int)));
    LF_LT_RETURN_IF_ERROR(l.desc_set(plan.desc, kDescTransB, &second.op, sizeof(int)));
    LF_LT_RETURN_IF_ERROR(l.desc_set(plan.desc, kDescEpilogue, &epi, sizeof epi));
    if (bias) LF_LT_RETURN_IF_ERROR(l.desc_set(plan.desc, kDescBiasDataType, &t.data, sizeof(int)));
    LF_LT_RETURN_IF_ERROR(l.layout_create(&plan.a, t.data, first.rows, first.cols, first.ld));
    LF_LT_RETURN_IF_ERROR(l.layout_create(&plan.b, t.data, second.rows, second.cols, second.ld));
    LF_LT_RETURN_IF_ERROR(l.layout_create(&plan.d, t.data, static_cast<uint64_t>(p.n), static_cast<uint64_t>(p.m),
                                          std::max<int64_t>(p.n, 1)));
    if (batch > 1) {
      int32_t count = static_cast<int32_t>(batch);
      for (auto [layout, stride] : std::initializer_list<std::pair<LtLayout, int64_t>>{
               {plan.a, b_stride}, {plan.b, a_stride}, {plan.d, d_stride}}) {
        LF_LT_RETURN_IF_ERROR(l.layout_set(layout, kLayoutBatchCount, &count, sizeof count));
        LF_LT_RETURN_IF_ERROR(l.layout_set(layout, kLayoutBatchStride, &stride, sizeof stride));
      }
    }
    LtPref pref = nullptr;
    LF_LT_RETURN_IF_ERROR(l.pref_create(&pref));
    uint64_t ws = kWorkspaceBytes;
    LF_LT_RETURN_IF_ERROR(l.pref_set(pref, kPrefMaxWorkspace, &ws, sizeof ws));
    int found = 0;
    LF_LT_RETURN_IF_ERROR(l.heuristic(dev.handle, plan.desc, plan.a, plan.b, plan.d, plan.d, pref, 1, &plan.algo, &found));
    if (found == 0) return lf::UnimplementedError("cuBLASLt: no algorithm for this problem");
    it = dev.plans.emplace(key, plan).first;
  }
  Plan& plan = it->second;
  if (bias) LF_LT_RETURN_IF_ERROR(l.desc_set(plan.desc, kDescBiasPointer, &bias, sizeof bias));
  float one32 = 1, zero32 = 0;
  double one64 = 1, zero64 = 0;
  bool f64 = p.dtype == DType::Float64;
  const void* alpha = f64 ? static_cast<const void*>(&one64) : &one32;
  // C is D itself (beta 0: not read) or the residual (beta 1), of D's layout.
  const void* beta = residual ? alpha : f64 ? static_cast<const void*>(&zero64) : &zero32;
  const void* c = residual ? residual : p.c;
  LF_LT_RETURN_IF_ERROR(l.matmul(dev.handle, plan.desc, alpha, b, plan.a, a, plan.b, beta, c, plan.d, p.c, plan.d,
                                 &plan.algo.algo, dev.workspace->data(), kWorkspaceBytes, ctx.stream));
  return lf::OkStatus();
}

}  // namespace lf::cuda
