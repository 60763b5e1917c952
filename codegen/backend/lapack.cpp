// LAPACK through dlopen (lapack.h). Each matrix is copied into column-major scratch (LAPACK's
// order; an O(n^2) copy against the O(n^3) factorization), factored or solved there, and copied
// back into the packed row-major output; the results then match the reference's layout exactly.
// Matrices run one after another: OpenBLAS spreads a large one over its own threads.
#include "codegen/backend/lapack.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/shared_library.h"

namespace lf::backend::lapack {
namespace {

// LP64 Fortran ABI (Debian's liblapack.so.3 and libopenblas.so.0; the ILP64 build is
// libopenblas64.so.0, never opened): int arguments, hidden string lengths last.
using Len = size_t;
template <typename T>
struct Routines {
  void (*potrf)(const char*, const int*, T*, const int*, int*, Len) = nullptr;
  void (*trsm)(const char*, const char*, const char*, const char*, const int*, const int*, const T*, const T*,
               const int*, T*, const int*, Len, Len, Len, Len) = nullptr;
  void (*getrf)(const int*, const int*, T*, const int*, int*, int*) = nullptr;
  void (*getrs)(const char*, const int*, const int*, const T*, const int*, const int*, T*, const int*, int*,
                Len) = nullptr;
  void (*syevd)(const char*, const char*, const int*, T*, const int*, T*, T*, const int*, int*, const int*, int*,
                Len, Len) = nullptr;
  void (*geqrf)(const int*, const int*, T*, const int*, T*, T*, const int*, int*) = nullptr;
  void (*orgqr)(const int*, const int*, const int*, T*, const int*, const T*, T*, const int*, int*) = nullptr;
  void (*gesdd)(const char*, const int*, const int*, T*, const int*, T*, T*, const int*, T*, const int*, T*,
                const int*, int*, int*, Len) = nullptr;
  void (*gelsd)(const int*, const int*, const int*, T*, const int*, T*, const int*, T*, const T*, int*, T*,
                const int*, int*, int*) = nullptr;
};

struct Loaded {
  Routines<float> s;
  Routines<double> d;
  std::string library, error;
};

const Loaded& loaded() {
  static const Loaded l = [] {
    Loaded l;
    auto lib = rt::SharedLibrary::open({"liblapack.so.3", "libopenblas.so.0"});
    if (!lib.loaded()) {
      l.error = "liblapack.so.3 / libopenblas.so.0 not found (Debian's liblapack3 or libopenblas0): " + lib.error();
      return l;
    }
    l.library = lib.name();
    lib.bind(l.s.potrf, "spotrf_");
    lib.bind(l.d.potrf, "dpotrf_");
    lib.bind(l.s.trsm, "strsm_");  // BLAS: found through liblapack's dependency on libblas.so.3
    lib.bind(l.d.trsm, "dtrsm_");
    lib.bind(l.s.getrf, "sgetrf_");
    lib.bind(l.d.getrf, "dgetrf_");
    lib.bind(l.s.getrs, "sgetrs_");
    lib.bind(l.d.getrs, "dgetrs_");
    lib.bind(l.s.syevd, "ssyevd_");
    lib.bind(l.d.syevd, "dsyevd_");
    lib.bind(l.s.geqrf, "sgeqrf_");
    lib.bind(l.d.geqrf, "dgeqrf_");
    lib.bind(l.s.orgqr, "sorgqr_");
    lib.bind(l.d.orgqr, "dorgqr_");
    lib.bind(l.s.gesdd, "sgesdd_");
    lib.bind(l.d.gesdd, "dgesdd_");
    lib.bind(l.s.gelsd, "sgelsd_");
    lib.bind(l.d.gelsd, "dgelsd_");
    if (!lib.missing().empty()) l.error = lib.name() + " lacks " + lib.missing();
    return l;
  }();
  return l;
}

template <typename T>
const Routines<T>& routines() {
  if constexpr (std::is_same_v<T, float>) return loaded().s;
  else return loaded().d;
}

int as_int(int64_t v) { return static_cast<int>(v); }

// A workspace query's answer (LAPACK returns the size as a float) as a usable count.
template <typename T>
int work_count(T size) {
  return std::max(1, static_cast<int>(size));
}

// rows x cols at `src` (row stride ld) into column-major `dst` (leading dim rows), and back.
template <typename T>
void to_cols(const T* src, int64_t ld, int64_t rows, int64_t cols, std::vector<T>& dst) {
  dst.assign(static_cast<size_t>(std::max<int64_t>(1, rows * cols)), T(0));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[static_cast<size_t>(j * rows + i)] = src[i * ld + j];
}
template <typename T>
void from_cols(const std::vector<T>& src, int64_t rows, int64_t cols, T* dst, int64_t ld) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * ld + j] = src[static_cast<size_t>(j * rows + i)];
}

template <typename T>
int64_t solve_one(const ir::LinalgProblem& p, int64_t e) {
  const Routines<T>& f = routines<T>();
  const ir::LinalgParams& q = p.params;
  const int64_t m = p.m, n = p.n, k = p.k, w = p.layout.width;
  const T* a = static_cast<const T*>(p.a) + e * m * n;
  T* out = static_cast<T*>(p.out) + e * p.layout.rows * w;
  const int ni = as_int(n), ki = as_int(k), ld = std::max(1, as_int(n));
  std::vector<T> ac, bc;
  std::vector<int> piv(static_cast<size_t>(std::max<int64_t>(1, std::min(m, n))));
  int info = 0;
  auto load_b = [&] {
    const T* b = static_cast<const T*>(p.b) + e * n * k;
    to_cols(b, k, n, k, bc);
  };
  auto getrs = [&](char trans) {
    if (n == 0 || k == 0) return;
    int info2 = 0;
    f.getrs(&trans, &ni, &ki, ac.data(), &ld, piv.data(), bc.data(), &ld, &info2, 1);
  };
  switch (q.op) {
    case ir::LinalgOp::kCholesky: {
      to_cols(a, n, n, n, ac);
      if (n > 0) f.potrf("L", &ni, ac.data(), &ld, &info, 1);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j <= i; ++j) out[i * w + j] = ac[static_cast<size_t>(j * n + i)];
      return info;
    }
    case ir::LinalgOp::kTriangularSolve: {
      to_cols(a, n, n, n, ac);
      load_b();
      const T one = 1;
      if (n > 0 && k > 0)
        f.trsm("L", q.upper ? "U" : "L", "N", q.unitriangular ? "U" : "N", &ni, &ki, &one, ac.data(), &ld, bc.data(),
               &ld, 1, 1, 1, 1);
      from_cols(bc, n, k, out, w);
      return 0;
    }
    case ir::LinalgOp::kSolve: {
      to_cols(a, n, n, n, ac);
      load_b();
      if (n > 0) f.getrf(&ni, &ni, ac.data(), &ld, piv.data(), &info);
      if (info == 0) getrs('N');
      from_cols(bc, n, k, out, w);
      return info;
    }
    case ir::LinalgOp::kLuFactor: {
      const int mi = as_int(m), ldm = std::max(1, as_int(m));
      to_cols(a, n, m, n, ac);
      if (m > 0 && n > 0) f.getrf(&mi, &ni, ac.data(), &ldm, piv.data(), &info);
      from_cols(ac, m, n, out, w);
      T* prow = out + p.layout.blocks[1].row * w;
      for (int64_t i = 0; i < std::min(m, n); ++i) prow[i] = static_cast<T>(piv[static_cast<size_t>(i)]);
      return info;
    }
    case ir::LinalgOp::kLuSolve: {
      to_cols(a, n, n, n, ac);
      load_b();
      for (int64_t i = 0; i < n; ++i) piv[static_cast<size_t>(i)] = p.pivots[e * n + i];
      getrs(q.adjoint ? 'T' : 'N');
      from_cols(bc, n, k, out, w);
      return 0;
    }
    case ir::LinalgOp::kSlogdet: {
      to_cols(a, n, n, n, ac);
      if (n > 0) f.getrf(&ni, &ni, ac.data(), &ld, piv.data(), &info);
      T sign = 1, logabs = 0, det = 1;
      for (int64_t i = 0; i < n; ++i) {
        const T u = ac[static_cast<size_t>(i * n + i)];
        if (piv[static_cast<size_t>(i)] != i + 1) sign = -sign;
        if (u < T(0)) sign = -sign;
        logabs += std::log(std::abs(u));
        det *= u;
      }
      bool flipped = false;
      for (int64_t i = 0; i < n; ++i) flipped ^= piv[static_cast<size_t>(i)] != i + 1;
      if (std::isnan(logabs)) sign = std::numeric_limits<T>::quiet_NaN();
      else if (det == T(0) && std::isinf(logabs)) sign = 0;
      out[0] = sign;
      out[1] = logabs;
      out[2] = flipped ? -det : det;
      return 0;
    }
    case ir::LinalgOp::kEigh: {
      to_cols(a, n, n, n, ac);
      T* values = out + p.layout.blocks.back().row * w;
      if (n == 0) return 0;
      const char jobz = q.vectors ? 'V' : 'N', uplo = q.upper ? 'U' : 'L';
      int lwork = -1, liwork = -1, iwork_size = 0;
      T work_size = 0;
      f.syevd(&jobz, &uplo, &ni, ac.data(), &ld, values, &work_size, &lwork, &iwork_size, &liwork, &info, 1, 1);
      lwork = static_cast<int>(work_size);
      liwork = iwork_size;
      std::vector<T> work(static_cast<size_t>(std::max(1, lwork)));
      std::vector<int> iwork(static_cast<size_t>(std::max(1, liwork)));
      f.syevd(&jobz, &uplo, &ni, ac.data(), &ld, values, work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
      if (q.vectors) from_cols(ac, n, n, out, w);
      return info;
    }
    case ir::LinalgOp::kQr: {
      // geqrf, R from its upper triangle, then orgqr over a copy wide enough for Q's columns.
      const int64_t kk = std::min(m, n);
      const ir::LinalgBlock& rb = p.layout.blocks.back();
      const int mi = as_int(m), ldm = std::max(1, as_int(m));
      to_cols(a, n, m, n, ac);
      std::vector<T> tau(static_cast<size_t>(std::max<int64_t>(1, kk)));
      if (kk > 0) {
        T size = 0;
        int lwork = -1;
        f.geqrf(&mi, &ni, ac.data(), &ldm, tau.data(), &size, &lwork, &info);
        lwork = work_count(size);
        std::vector<T> work(static_cast<size_t>(lwork));
        f.geqrf(&mi, &ni, ac.data(), &ldm, tau.data(), work.data(), &lwork, &info);
      }
      T* r = out + rb.row * w;
      for (int64_t i = 0; i < std::min(rb.rows, m); ++i)
        for (int64_t j = i; j < n; ++j) r[i * w + j] = ac[static_cast<size_t>(j * m + i)];
      if (!q.vectors) return 0;
      const int64_t qc = p.layout.blocks[0].cols;
      std::vector<T> qm(static_cast<size_t>(std::max<int64_t>(1, m * qc)), T(0));
      for (int64_t j = 0; j < std::min(n, qc); ++j)
        for (int64_t i = 0; i < m; ++i) qm[static_cast<size_t>(j * m + i)] = ac[static_cast<size_t>(j * m + i)];
      if (m > 0 && qc > 0) {
        const int qci = as_int(qc), ki2 = as_int(kk);
        T size = 0;
        int lwork = -1;
        f.orgqr(&mi, &qci, &ki2, qm.data(), &ldm, tau.data(), &size, &lwork, &info);
        lwork = work_count(size);
        std::vector<T> work(static_cast<size_t>(lwork));
        f.orgqr(&mi, &qci, &ki2, qm.data(), &ldm, tau.data(), work.data(), &lwork, &info);
      }
      from_cols(qm, m, qc, out, w);
      return 0;
    }
    case ir::LinalgOp::kSvd: {
      const int64_t kk = std::min(m, n);
      const auto& bl = p.layout.blocks;
      T* s = out + bl[q.vectors ? 1 : 0].row * w;
      if (kk == 0) {  // an empty A's full bases are identities (PyTorch's)
        if (q.vectors && q.full) {
          for (int64_t i = 0; i < m; ++i) out[i * w + i] = 1;
          for (int64_t i = 0; i < n; ++i) out[(bl[2].row + i) * w + i] = 1;
        }
        return 0;
      }
      if (!ir::all_finite(a, m * n)) return 1;  // LAPACK's gesdd rejects it with a message of its own
      const int mi = as_int(m), ldm = as_int(m);
      const int64_t uc = q.vectors ? bl[0].cols : 1, vr = q.vectors ? bl[2].rows : 1;
      const int ldu = as_int(m), ldvt = std::max(1, as_int(vr));
      to_cols(a, n, m, n, ac);
      std::vector<T> sv(static_cast<size_t>(kk)), u(static_cast<size_t>(m * uc)), vt(static_cast<size_t>(vr * n));
      std::vector<int> iwork(static_cast<size_t>(8 * kk));
      const char jobz = !q.vectors ? 'N' : q.full ? 'A' : 'S';
      T size = 0;
      int lwork = -1;
      f.gesdd(&jobz, &mi, &ni, ac.data(), &ldm, sv.data(), u.data(), &ldu, vt.data(), &ldvt, &size, &lwork,
              iwork.data(), &info, 1);
      lwork = work_count(size);
      std::vector<T> work(static_cast<size_t>(lwork));
      f.gesdd(&jobz, &mi, &ni, ac.data(), &ldm, sv.data(), u.data(), &ldu, vt.data(), &ldvt, work.data(), &lwork,
              iwork.data(), &info, 1);
      for (int64_t i = 0; i < kk; ++i) s[i] = sv[static_cast<size_t>(i)];
      if (q.vectors) {
        from_cols(u, m, uc, out, w);
        from_cols(vt, vr, n, out + bl[2].row * w, w);
      }
      return info;
    }
    case ir::LinalgOp::kLstsq: {
      const int64_t kk = std::min(m, n), ldb64 = std::max<int64_t>({1, m, n});
      const auto& bl = p.layout.blocks;
      if (kk == 0) return 0;  // X = 0, rank 0
      if (!ir::all_finite(a, m * n)) return 1;
      // No columns: one zero column instead (gelsd's dlalsd refuses nrhs 0), for rank and S.
      const int mi = as_int(m), ldm = as_int(m), ldb = as_int(ldb64), nrhs = std::max(1, ki);
      to_cols(a, n, m, n, ac);
      const T* b = static_cast<const T*>(p.b) + e * m * k;
      bc.assign(static_cast<size_t>(ldb64 * nrhs), T(0));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t c = 0; c < k; ++c) bc[static_cast<size_t>(c * ldb64 + i)] = b[i * k + c];
      std::vector<T> sv(static_cast<size_t>(kk));
      const T rcond = static_cast<T>(q.rcond);
      int rank = 0, isize = 0;
      T size = 0;
      int lwork = -1;
      f.gelsd(&mi, &ni, &nrhs, ac.data(), &ldm, bc.data(), &ldb, sv.data(), &rcond, &rank, &size, &lwork, &isize,
              &info);
      lwork = work_count(size);
      std::vector<T> work(static_cast<size_t>(lwork));
      std::vector<int> iwork(static_cast<size_t>(std::max(1, isize)));
      f.gelsd(&mi, &ni, &nrhs, ac.data(), &ldm, bc.data(), &ldb, sv.data(), &rcond, &rank, work.data(), &lwork,
              iwork.data(), &info);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t c = 0; c < k; ++c) out[i * w + c] = bc[static_cast<size_t>(c * ldb64 + i)];
      for (int64_t i = 0; i < kk; ++i) out[bl[1].row * w + i] = sv[static_cast<size_t>(i)];
      out[bl[2].row * w] = static_cast<T>(rank);
      return info;
    }
  }
  return 0;
}

}  // namespace

const std::string& unavailable() { return loaded().error; }
const std::string& library() { return loaded().library; }

std::vector<int64_t> solve(const ir::LinalgProblem& p) {
  std::vector<int64_t> info(static_cast<size_t>(p.batch), 0);
  for (int64_t e = 0; e < p.batch; ++e)
    info[static_cast<size_t>(e)] = p.dtype == DType::Float32 ? solve_one<float>(p, e) : solve_one<double>(p, e);
  return info;
}

}  // namespace lf::backend::lapack
