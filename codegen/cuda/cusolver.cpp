// lf::linalg through cuSOLVER (cusolver.h). The problem's inputs are contiguous row-major host
// copies (codegen/exec/linalg.cpp), so each call transposes them on the host into column-major
// (cuSOLVER's order, as lapack.cpp does for LAPACK), uploads each input in one copy, runs the
// factorizations on the device's stream, downloads the column-major results and the infos, and
// fills the packed output on the host exactly as lapack.cpp does. Batches of small matrices use
// the batched routines (potrfBatched, syevjBatched, gesvdjBatched); the others run one matrix after another.
#include "codegen/cuda/cusolver.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "codegen/cuda/cusolver_abi.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"
#include "runtime/shared_library.h"
#include "runtime/storage.h"

namespace lf::cuda {
namespace {

// Matrices up to this order go through the batched routines when there are several.
constexpr int64_t kBatchedMaxOrder = 32;

struct Loaded {
  solver::Api api;
  std::string name, error;
};

template <typename T>
void bind_routines(rt::SharedLibrary& lib, solver::Routines<T>& r, char x) {
  auto bind = [&](auto& fn, const char* rest) { lib.bind(fn, (std::string("cusolverDn") + x + rest).c_str()); };
  bind(r.potrf_size, "potrf_bufferSize");
  bind(r.potrf, "potrf");
  bind(r.potrf_batched, "potrfBatched");
  bind(r.getrf_size, "getrf_bufferSize");
  bind(r.getrf, "getrf");
  bind(r.getrs, "getrs");
  bind(r.syevd_size, "syevd_bufferSize");
  bind(r.syevd, "syevd");
  bind(r.syevj_batched_size, "syevjBatched_bufferSize");
  bind(r.syevj_batched, "syevjBatched");
  bind(r.geqrf_size, "geqrf_bufferSize");
  bind(r.geqrf, "geqrf");
  bind(r.orgqr_size, "orgqr_bufferSize");
  bind(r.orgqr, "orgqr");
  bind(r.gesvdj_size, "gesvdj_bufferSize");
  bind(r.gesvdj, "gesvdj");
  bind(r.gesvdj_batched_size, "gesvdjBatched_bufferSize");
  bind(r.gesvdj_batched, "gesvdjBatched");
}

const Loaded& loaded() {
  static const Loaded l = [] {
    Loaded l;
    // The toolkit's or PyTorch's nvidia-cusolver wheel (on LD_LIBRARY_PATH, as bench/run_gpu.sh puts it).
    auto lib = rt::SharedLibrary::open(
        {"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so", "/usr/local/cuda/lib64/libcusolver.so.12"});
    if (!lib.loaded()) {
      l.error = "libcusolver.so.12 / .11 not found (" + lib.error() + ")";
      return l;
    }
    l.name = lib.name();
    lib.bind(l.api.create, "cusolverDnCreate");
    lib.bind(l.api.set_stream, "cusolverDnSetStream");
    lib.bind(l.api.create_syevj_info, "cusolverDnCreateSyevjInfo");
    lib.bind(l.api.create_gesvdj_info, "cusolverDnCreateGesvdjInfo");
    bind_routines(lib, l.api.s, 'S');
    bind_routines(lib, l.api.d, 'D');
    if (!lib.missing().empty()) l.error = l.name + " lacks " + lib.missing();
    return l;
  }();
  return l;
}

template <typename T>
const solver::Routines<T>& routines() {
  if constexpr (std::is_same_v<T, float>)
    return loaded().api.s;
  else
    return loaded().api.d;
}

lf::Status check(solver::Status s, const char* call) {
  if (s == 0) return lf::OkStatus();
  return lf::InternalError(std::string(call) + " failed: cusolverStatus_t " + std::to_string(s));
}
#define LF_SOLVER(call)                                            \
  do {                                                             \
    if (lf::Status s_ = check((call), #call); !s_.ok()) return s_; \
  } while (0)

// One handle per device (and one syevj and one gesvdj parameter set, cuSOLVER's defaults), created at first use; its
// stream follows the device's (lf::set_stream). Calls are serialized by the mutex.
struct PerDevice {
  solver::Handle handle = nullptr;
  solver::SyevjInfo syevj = nullptr;
  solver::GesvdjInfo gesvdj = nullptr;
};
std::mutex mu;

lf::StatusOr<PerDevice*> per_device(int device, rt::cu::CUstream stream) {
  static std::map<int, PerDevice> devices;
  const solver::Api& a = loaded().api;
  PerDevice& d = devices[device];
  if (!d.handle) {
    LF_SOLVER(a.create(&d.handle));
    LF_SOLVER(a.create_syevj_info(&d.syevj));
    LF_SOLVER(a.create_gesvdj_info(&d.gesvdj));
  }
  LF_SOLVER(a.set_stream(d.handle, reinterpret_cast<solver::Stream>(stream)));
  return &d;
}

// Device memory for one call, and the copies in and out on the device's stream.
class Scratch {
 public:
  Scratch(int device, rt::cu::CUstream stream) : device_(device), stream_(stream) {}
  template <typename T>
  T* alloc(int64_t count) {
    bufs_.push_back(
        rt::Storage::allocate(Device::cuda(device_), static_cast<size_t>(std::max<int64_t>(1, count)) * sizeof(T)));
    return static_cast<T*>(bufs_.back()->data());
  }
  template <typename T>
  T* upload(const std::vector<T>& host) {
    T* d = alloc<T>(static_cast<int64_t>(host.size()));
    if (!host.empty())
      LF_CU_CHECK(rt::cu::api().cuMemcpyHtoDAsync(ptr(d), host.data(), host.size() * sizeof(T), stream_));
    return d;
  }
  template <typename T>
  void download(const T* d, std::vector<T>& host) {
    if (!host.empty())
      LF_CU_CHECK(rt::cu::api().cuMemcpyDtoHAsync(host.data(), ptr(d), host.size() * sizeof(T), stream_));
  }
  void copy(void* dst, const void* src, size_t bytes) {
    if (bytes) LF_CU_CHECK(rt::cu::api().cuMemcpyDtoDAsync(ptr(dst), ptr(src), bytes, stream_));
  }
  void sync() { LF_CU_CHECK(rt::cu::api().cuStreamSynchronize(stream_)); }

 private:
  static rt::cu::CUdeviceptr ptr(const void* p) {
    return static_cast<rt::cu::CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
  }
  int device_;
  rt::cu::CUstream stream_;
  std::vector<std::shared_ptr<rt::Storage>> bufs_;
};

// `batch` matrices rows x cols, row-major back to back, into column-major back to back; and back
// (into the packed output, row stride w, `stride` between matrices).
template <typename T>
std::vector<T> to_cols(const T* src, int64_t batch, int64_t rows, int64_t cols) {
  std::vector<T> dst(static_cast<size_t>(batch * rows * cols));
  for (int64_t e = 0; e < batch; ++e)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        dst[static_cast<size_t>((e * cols + j) * rows + i)] = src[(e * rows + i) * cols + j];
  return dst;
}
template <typename T>
void from_cols(const T* src, int64_t rows, int64_t cols, T* dst, int64_t w) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * w + j] = src[j * rows + i];
}

// A symmetric matrix's triangle that eigh reads (column-major `a`; lower: i >= j) is finite.
template <typename T>
bool triangle_finite(const T* a, int64_t n, bool lower) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = lower ? j : 0; i < (lower ? n : j + 1); ++i)
      if (!std::isfinite(a[j * n + i])) return false;
  return true;
}

template <typename T>
lf::Status solve_on_device(const ir::LinalgProblem& p, int device, std::vector<int64_t>& info) {
  const solver::Routines<T>& f = routines<T>();
  const ir::LinalgParams& q = p.params;
  const int64_t batch = p.batch, m = p.m, n = p.n, k = p.k, w = p.layout.width, stride = p.layout.rows * w;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const int64_t kk = std::min(m, n);
  rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
  std::lock_guard<std::mutex> lock(mu);
  auto dev = per_device(device, ctx.stream);
  if (!dev.ok()) return dev.status();
  solver::Handle h = (*dev)->handle;
  Scratch s(device, ctx.stream);
  T* out = static_cast<T*>(p.out);

  std::vector<T> ha = to_cols(static_cast<const T*>(p.a), batch, m, n);
  // A non-finite matrix is not sent (zeros instead): eigh's info 1 (not converged, as the
  // reference's), svd's 1 (refused, as lapack.cpp refuses it).
  std::vector<bool> skip(static_cast<size_t>(batch), false);
  for (int64_t e = 0; e < batch; ++e) {
    const T* ae = ha.data() + e * m * n;
    if ((q.op == ir::LinalgOp::kEigh && !triangle_finite(ae, n, !q.upper)) ||
        (q.op == ir::LinalgOp::kSvd && !ir::all_finite(ae, m * n))) {
      skip[static_cast<size_t>(e)] = true;
      std::fill(ha.begin() + e * m * n, ha.begin() + (e + 1) * m * n, T(0));
    }
  }
  // NaN goes through LAPACK's potrf with info 0 (PyTorch's rule, tested); cuSOLVER's test of the
  // pivot is not documented, so such a matrix goes to the host.
  if (q.op == ir::LinalgOp::kCholesky)
    for (int64_t e = 0; e < batch; ++e)
      if (!triangle_finite(ha.data() + e * n * n, n, /*lower=*/true))
        return lf::UnimplementedError("a non-finite matrix for potrf");
  T* a = s.upload(ha);
  std::vector<int> hinfo(static_cast<size_t>(batch), 0);
  int* dinfo = s.alloc<int>(batch);
  LF_CU_CHECK(rt::cu::api().cuMemsetD8Async(reinterpret_cast<uintptr_t>(dinfo), 0,
                                            static_cast<size_t>(batch) * sizeof(int), ctx.stream));
  auto A = [&](int64_t e) { return a + e * m * n; };
  std::vector<int> hpiv(static_cast<size_t>(batch * kk));
  int* piv = nullptr;
  std::vector<T> hb;
  T* b = nullptr;
  if (q.op == ir::LinalgOp::kSolve || q.op == ir::LinalgOp::kLuSolve) {
    hb = to_cols(static_cast<const T*>(p.b), batch, n, k);
    b = s.upload(hb);
  }
  auto getrf = [&]() -> lf::Status {
    int lwork = 0;
    LF_SOLVER(f.getrf_size(h, mi, ni, a, mi, &lwork));
    T* work = s.alloc<T>(lwork);
    piv = s.alloc<int>(batch * kk);
    for (int64_t e = 0; e < batch; ++e) LF_SOLVER(f.getrf(h, mi, ni, A(e), mi, work, piv + e * kk, dinfo + e));
    return lf::OkStatus();
  };
  auto getrs = [&](int trans) -> lf::Status {
    if (k == 0) return lf::OkStatus();
    int* rs_info = s.alloc<int>(1);  // getrs's own info only flags bad arguments
    for (int64_t e = 0; e < batch; ++e)
      LF_SOLVER(f.getrs(h, trans, ni, ki, A(e), ni, piv + e * n, b + e * n * k, ni, rs_info));
    return lf::OkStatus();
  };

  switch (q.op) {
    case ir::LinalgOp::kCholesky: {
      if (batch > 1 && n <= kBatchedMaxOrder) {
        std::vector<T*> ptrs(static_cast<size_t>(batch));
        for (int64_t e = 0; e < batch; ++e) ptrs[static_cast<size_t>(e)] = A(e);
        LF_SOLVER(f.potrf_batched(h, solver::kLower, ni, s.upload(ptrs), ni, dinfo, static_cast<int>(batch)));
      } else {
        int lwork = 0;
        LF_SOLVER(f.potrf_size(h, solver::kLower, ni, a, ni, &lwork));
        T* work = s.alloc<T>(lwork);
        for (int64_t e = 0; e < batch; ++e) LF_SOLVER(f.potrf(h, solver::kLower, ni, A(e), ni, work, lwork, dinfo + e));
      }
      s.download(a, ha);
      break;
    }
    case ir::LinalgOp::kSolve:
      if (lf::Status st = getrf(); !st.ok()) return st;
      if (lf::Status st = getrs(solver::kOpN); !st.ok()) return st;  // a singular A's X is not returned
      s.download(b, hb);
      break;
    case ir::LinalgOp::kLuFactor:
    case ir::LinalgOp::kSlogdet:
      if (lf::Status st = getrf(); !st.ok()) return st;
      s.download(a, ha);
      s.download(piv, hpiv);
      break;
    case ir::LinalgOp::kLuSolve: {
      for (int64_t i = 0; i < batch * n; ++i) hpiv[static_cast<size_t>(i)] = p.pivots[i];
      piv = s.upload(hpiv);
      if (lf::Status st = getrs(q.adjoint ? solver::kOpT : solver::kOpN); !st.ok()) return st;
      s.download(b, hb);
      break;
    }
    case ir::LinalgOp::kEigh: {
      const int jobz = q.vectors ? solver::kVectors : solver::kNoVectors,
                uplo = q.upper ? solver::kUpper : solver::kLower;
      std::vector<T> hw(static_cast<size_t>(batch * n));
      T* wv = s.alloc<T>(batch * n);
      int lwork = 0;
      if (batch > 1 && n <= kBatchedMaxOrder) {
        const int bi = static_cast<int>(batch);
        LF_SOLVER(f.syevj_batched_size(h, jobz, uplo, ni, a, ni, wv, &lwork, (*dev)->syevj, bi));
        T* work = s.alloc<T>(lwork);
        LF_SOLVER(f.syevj_batched(h, jobz, uplo, ni, a, ni, wv, work, lwork, dinfo, (*dev)->syevj, bi));
      } else {
        LF_SOLVER(f.syevd_size(h, jobz, uplo, ni, a, ni, wv, &lwork));
        T* work = s.alloc<T>(lwork);
        for (int64_t e = 0; e < batch; ++e)
          LF_SOLVER(f.syevd(h, jobz, uplo, ni, A(e), ni, wv + e * n, work, lwork, dinfo + e));
      }
      s.download(wv, hw);
      s.download(a, ha);
      s.download(dinfo, hinfo);
      s.sync();
      for (int64_t e = 0; e < batch; ++e) {
        T* o = out + e * stride;
        info[static_cast<size_t>(e)] = skip[static_cast<size_t>(e)] ? 1 : hinfo[static_cast<size_t>(e)];
        for (int64_t i = 0; i < n; ++i) o[p.layout.blocks.back().row * w + i] = hw[static_cast<size_t>(e * n + i)];
        if (q.vectors) from_cols(ha.data() + e * n * n, n, n, o, w);
      }
      return lf::OkStatus();
    }
    case ir::LinalgOp::kQr: {
      // geqrf, R from its upper triangle; Q by orgqr over a copy of the reflectors wide enough for Q.
      const ir::LinalgBlock& rb = p.layout.blocks.back();
      const int64_t qc = q.vectors ? p.layout.blocks[0].cols : 0;
      const int ki2 = static_cast<int>(kk), qci = static_cast<int>(qc);
      T* tau = s.alloc<T>(batch * kk);
      int lwork = 0;
      LF_SOLVER(f.geqrf_size(h, mi, ni, a, mi, &lwork));
      T* work = s.alloc<T>(lwork);
      for (int64_t e = 0; e < batch; ++e) LF_SOLVER(f.geqrf(h, mi, ni, A(e), mi, tau + e * kk, work, lwork, dinfo + e));
      std::vector<T> hq(static_cast<size_t>(batch * m * qc));
      if (qc > 0) {
        T* qm = s.alloc<T>(batch * m * qc);
        LF_CU_CHECK(
            rt::cu::api().cuMemsetD8Async(reinterpret_cast<uintptr_t>(qm), 0, hq.size() * sizeof(T), ctx.stream));
        int qwork = 0;
        LF_SOLVER(f.orgqr_size(h, mi, qci, ki2, qm, mi, tau, &qwork));
        T* work2 = s.alloc<T>(qwork);
        for (int64_t e = 0; e < batch; ++e) {
          // Column-major: the first min(n, qc) columns of the factored A are contiguous.
          s.copy(qm + e * m * qc, A(e), static_cast<size_t>(m * std::min(n, qc)) * sizeof(T));
          LF_SOLVER(f.orgqr(h, mi, qci, ki2, qm + e * m * qc, mi, tau + e * kk, work2, qwork, dinfo + e));
        }
        s.download(qm, hq);
      }
      s.download(a, ha);
      s.sync();
      for (int64_t e = 0; e < batch; ++e) {
        T* o = out + e * stride;
        const T* ac = ha.data() + e * m * n;
        for (int64_t i = 0; i < std::min(rb.rows, m); ++i)
          for (int64_t j = i; j < n; ++j) o[(rb.row + i) * w + j] = ac[j * m + i];
        if (qc > 0) from_cols(hq.data() + e * m * qc, m, qc, o, w);
      }
      return lf::OkStatus();  // geqrf and orgqr do not fail (info flags bad arguments only)
    }
    case ir::LinalgOp::kSvd: {
      // gesvdjBatched (full U and V only) for a batch of small matrices, else gesvdj (econ unless
      // full); V comes back, not Vh. S sorted descending on the host with its vectors.
      const bool batched = batch > 1 && m <= kBatchedMaxOrder && n <= kBatchedMaxOrder;
      const int jobz = q.vectors ? solver::kVectors : solver::kNoVectors, econ = batched || q.full ? 0 : 1;
      const int64_t uc = econ ? kk : m, vc = econ ? kk : n;  // U [m, uc], V [n, vc] as computed
      std::vector<T> hs(static_cast<size_t>(batch * kk)), hu(q.vectors ? static_cast<size_t>(batch * m * uc) : 0),
          hv(q.vectors ? static_cast<size_t>(batch * n * vc) : 0);
      T *sv = s.alloc<T>(batch * kk), *u = s.alloc<T>(batch * m * uc), *v = s.alloc<T>(batch * n * vc);
      int lwork = 0;
      if (batched) {
        const int bi = static_cast<int>(batch);
        LF_SOLVER(f.gesvdj_batched_size(h, jobz, mi, ni, a, mi, sv, u, mi, v, ni, &lwork, (*dev)->gesvdj, bi));
        T* work = s.alloc<T>(lwork);
        LF_SOLVER(f.gesvdj_batched(h, jobz, mi, ni, a, mi, sv, u, mi, v, ni, work, lwork, dinfo, (*dev)->gesvdj, bi));
      } else {
        LF_SOLVER(f.gesvdj_size(h, jobz, econ, mi, ni, a, mi, sv, u, mi, v, ni, &lwork, (*dev)->gesvdj));
        T* work = s.alloc<T>(lwork);
        for (int64_t e = 0; e < batch; ++e)
          LF_SOLVER(f.gesvdj(h, jobz, econ, mi, ni, A(e), mi, sv + e * kk, u + e * m * uc, mi, v + e * n * vc, ni, work,
                             lwork, dinfo + e, (*dev)->gesvdj));
      }
      s.download(sv, hs);
      s.download(u, hu);
      s.download(v, hv);
      s.download(dinfo, hinfo);
      s.sync();
      const auto& bl = p.layout.blocks;
      const int64_t want_u = q.vectors ? bl[0].cols : 0, want_v = q.vectors ? bl[2].rows : 0;
      std::vector<int64_t> order(static_cast<size_t>(kk));
      for (int64_t e = 0; e < batch; ++e) {
        T* o = out + e * stride;
        const T *se = hs.data() + e * kk, *ue = hu.data() + e * m * uc, *ve = hv.data() + e * n * vc;
        info[static_cast<size_t>(e)] = skip[static_cast<size_t>(e)] ? 1 : hinfo[static_cast<size_t>(e)];
        for (int64_t i = 0; i < kk; ++i) order[static_cast<size_t>(i)] = i;
        std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return se[x] > se[y]; });
        auto col = [&](int64_t j) {
          return j < kk ? order[static_cast<size_t>(j)] : j;
        };  // the extra basis columns stay
        for (int64_t i = 0; i < kk; ++i) o[bl[q.vectors ? 1 : 0].row * w + i] = se[order[static_cast<size_t>(i)]];
        if (!q.vectors) continue;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < want_u; ++j) o[i * w + j] = ue[col(j) * m + i];
        for (int64_t i = 0; i < want_v; ++i)  // Vh's row i: V's column i
          for (int64_t j = 0; j < n; ++j) o[(bl[2].row + i) * w + j] = ve[col(i) * n + j];
      }
      return lf::OkStatus();
    }
    default:
      return lf::UnimplementedError("unreachable: not wired to cuSOLVER");
  }
  s.download(dinfo, hinfo);
  s.sync();

  for (int64_t e = 0; e < batch; ++e) {
    T* o = out + e * stride;
    const T* ac = ha.data() + e * m * n;
    const int* pv = hpiv.data() + e * kk;
    info[static_cast<size_t>(e)] = q.op == ir::LinalgOp::kLuSolve ? 0 : hinfo[static_cast<size_t>(e)];
    switch (q.op) {
      case ir::LinalgOp::kCholesky:
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j <= i; ++j) o[i * w + j] = ac[j * n + i];
        break;
      case ir::LinalgOp::kSolve:
      case ir::LinalgOp::kLuSolve:
        from_cols(hb.data() + e * n * k, n, k, o, w);
        break;
      case ir::LinalgOp::kLuFactor:
        from_cols(ac, m, n, o, w);
        for (int64_t i = 0; i < kk; ++i) o[p.layout.blocks[1].row * w + i] = static_cast<T>(pv[i]);
        break;
      case ir::LinalgOp::kSlogdet: {  // as lapack.cpp: sign, log|det|, det from the LU
        T sign = 1, logabs = 0, det = 1;
        bool flipped = false;
        for (int64_t i = 0; i < n; ++i) {
          const T u = ac[i * n + i];
          if (pv[i] != i + 1) flipped = !flipped;
          if (u < T(0)) sign = -sign;
          logabs += std::log(std::abs(u));
          det *= u;
        }
        if (flipped) sign = -sign;
        if (std::isnan(logabs))
          sign = std::numeric_limits<T>::quiet_NaN();
        else if (det == T(0) && std::isinf(logabs))
          sign = 0;
        o[0] = sign;
        o[1] = logabs;
        o[2] = flipped ? -det : det;
        info[static_cast<size_t>(e)] = 0;  // a singular A is no failure: det 0
        break;
      }
      default:
        break;
    }
  }
  return lf::OkStatus();
}

bool wired(ir::LinalgOp op) {
  switch (op) {
    case ir::LinalgOp::kCholesky:
    case ir::LinalgOp::kSolve:
    case ir::LinalgOp::kLuFactor:
    case ir::LinalgOp::kLuSolve:
    case ir::LinalgOp::kSlogdet:
    case ir::LinalgOp::kEigh:
    case ir::LinalgOp::kQr:
    case ir::LinalgOp::kSvd:
      return true;
    case ir::LinalgOp::kTriangularSolve:  // cuBLAS's trsm, not cuSOLVER's
    case ir::LinalgOp::kLstsq:
      return false;
  }
  return false;
}

// Why this problem runs on the host; empty when cuSOLVER takes it.
std::string host_reason(const ir::LinalgProblem& p) {
  if (rt::config().linalg == "host") return "LAZYFUSE_LINALG=host";
  // Written and checked against cusolverDn.h on a machine without a GPU (2026-12-04): it stays
  // behind a switch until its tests have passed on one.
  if (rt::config().linalg != "cusolver") return "cuSOLVER not run on a GPU yet: LAZYFUSE_LINALG=cusolver opts in";
  if (!loaded().error.empty()) return loaded().error;
  if (!wired(p.params.op)) return std::string(ir::linalg_name(p.params.name)) + " is not wired to cuSOLVER";
  if (p.batch == 0 || p.m == 0 || p.n == 0) return "empty matrices";
  if (std::max({p.m, p.n, p.k}) > std::numeric_limits<int>::max())
    return "a matrix too large for cuSOLVER's 32-bit API";
  return "";
}

}  // namespace

const std::string& cusolver_unavailable() { return loaded().error; }

void run_linalg(backend::LinalgCall& call) {
  if (rt::config().linalg == "reference") return backend::run_linalg_on_host(call, "");
  const ir::LinalgProblem& p = call.problem;
  std::string why = host_reason(p);
  if (why.empty()) {
    std::vector<int64_t> info(static_cast<size_t>(p.batch), 0);
    const int device = call.node()->device.index();
    lf::Status s =
        p.dtype == DType::Float32 ? solve_on_device<float>(p, device, info) : solve_on_device<double>(p, device, info);
    if (s.ok()) {
      call.log("cuSOLVER (" + loaded().name + ")");
      ++call.run.stats.kernels_launched;
      ir::finish_linalg(p, info);  // throws at the group's sync point on a failure
      return;
    }
    why = std::string(s.message());
  }
  backend::run_linalg_on_host(call, "host LAPACK: " + why);
}

}  // namespace lf::cuda
