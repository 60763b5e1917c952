// lf::linalg (include/lazyfuse/linalg.h): argument checks at the call, batch dims broadcast, one
// ir::Op::Linalg node a factorization, and its results as views of the packed output
// (codegen/ir/linalg.h). cholesky_solve, inv, det, pinv, matrix_rank, cond and matrix_norm are
// composites of the others.
#include "lazyfuse/linalg.h"

#include <cmath>
#include <limits>
#include <string>

#include "codegen/ir/linalg.h"
#include "frontend/record.h"
#include "lazyfuse/ops.h"

namespace lf::linalg {
namespace {

using detail::fail;
using ir::LinalgName;
using ir::LinalgOp;
using ir::LinalgParams;

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// A float matrix or batch of them; `square`: n x n.
void check_matrix(const char* op, const Tensor& a, bool square, const char* what = "A") {
  detail::check_defined(op, {&a});
  if (a.dtype() != DType::Float32 && a.dtype() != DType::Float64)
    fail(op, std::string("expected ") + what + " of float32 or float64 (complex dtypes do not exist yet), got " +
                 dtype_name(a.dtype()),
         {&a});
  if (a.dim() < 2)
    fail(op, std::string(what) + " must have at least 2 dimensions, got " + std::to_string(a.dim()), {&a});
  if (square && a.size(-1) != a.size(-2))
    fail(op, std::string(what) + " must be batches of square matrices, but they are " + std::to_string(a.size(-2)) +
                 " by " + std::to_string(a.size(-1)) + " matrices",
         {&a});
}

void check_pair(const char* op, const Tensor& a, const Tensor& b) {
  detail::check_defined(op, {&a, &b});
  detail::check_same_device(op, {&a, &b});
  if (a.dtype() != b.dtype())
    fail(op, std::string("expected A and B to have the same dtype, but found A of ") + dtype_name(a.dtype()) +
                 " and B of " + dtype_name(b.dtype()),
         {&a, &b});
}

Shape batch_of(const Tensor& t, int64_t matrix_dims = 2) {
  Shape s = t.shape();
  s.resize(s.size() - static_cast<size_t>(matrix_dims));
  return s;
}
Shape with(Shape batch, std::initializer_list<int64_t> tail) {
  for (int64_t d : tail) batch.push_back(d);
  return batch;
}

Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }

// The node for `p` over inputs whose batch dims are `batch` already; returns the packed output.
Tensor record_linalg(const LinalgParams& p, const Shape& batch, std::initializer_list<const Tensor*> inputs,
                     int64_t m, int64_t n, int64_t k, ir::LinalgLayout* layout) {
  *layout = ir::linalg_layout(p, m, n, k);
  ir::Attrs attrs;
  attrs.dims = p.pack();
  const Tensor& first = **inputs.begin();
  return detail::record(ir::Op::Linalg, first.dtype(), first.device(), with(batch, {layout->rows, layout->width}),
                        inputs, std::move(attrs));
}

// Result `i` of a packed output: a matrix block, or with `vector` / `scalar` its row squeezed.
Tensor block(const Tensor& packed, const ir::LinalgLayout& l, size_t i, int rank = 2) {
  const ir::LinalgBlock& b = l.blocks[i];
  Tensor t = slice(slice(packed, -1, 0, b.cols), -2, b.row, b.row + b.rows);
  if (rank < 2) t = squeeze(t, -2);
  if (rank < 1) t = squeeze(t, -1);
  return t;
}

// `a`: the user's A, whose batch dims decide whether a failure names its batch element.
LinalgParams params(LinalgOp op, LinalgName name, const Tensor& a) {
  LinalgParams p;
  p.op = op;
  p.name = name;
  p.batched = a.dim() > 2;
  return p;
}

// A and B with their batch dims broadcast together (B's last `b_dims` dims are its matrix or vector).
std::pair<Tensor, Tensor> broadcast_batch(const char* op, const Tensor& a, const Tensor& b, int64_t b_dims = 2) {
  Shape batch = detail::broadcast_shapes(op, batch_of(a), batch_of(b, b_dims), {&a, &b});
  Shape bs = batch;
  for (int64_t d = b.dim() - b_dims; d < b.dim(); ++d) bs.push_back(b.size(d));
  return {detail::broadcast_to(a, with(batch, {a.size(-2), a.size(-1)})), detail::broadcast_to(b, bs)};
}

Tensor left_solve(LinalgOp op, LinalgName name, const Tensor& user_a, const Tensor& a, const Tensor& b,
                  bool upper = false, bool unitriangular = false) {
  LinalgParams p = params(op, name, user_a);
  p.upper = upper;
  p.unitriangular = unitriangular;
  ir::LinalgLayout l;
  Tensor packed = record_linalg(p, batch_of(a), {&a, &b}, a.size(-2), a.size(-1), b.size(-1), &l);
  return block(packed, l, 0);
}

}  // namespace

CholeskyEx cholesky_ex(const Tensor& a, bool upper, bool check_errors) {
  const char* op = "linalg.cholesky_ex";
  check_matrix(op, a, true);
  LinalgParams p = params(LinalgOp::kCholesky, check_errors ? LinalgName::kCholesky : LinalgName::kCholeskyEx, a);
  p.check = check_errors;
  ir::LinalgLayout l;
  Tensor packed = record_linalg(p, batch_of(a), {&a}, a.size(-1), a.size(-1), 0, &l);
  Tensor L = block(packed, l, 0);
  if (upper) L = mT(L);
  Tensor info = check_errors ? zeros(batch_of(a), DType::Int32).to(a.device()) : cast(block(packed, l, 1, 0), DType::Int32);
  return {L, info};
}

Tensor cholesky(const Tensor& a, bool upper) {
  check_matrix("linalg.cholesky", a, true);
  ir::LinalgLayout l;
  Tensor packed = record_linalg(params(LinalgOp::kCholesky, LinalgName::kCholesky, a), batch_of(a), {&a}, a.size(-1),
                                a.size(-1), 0, &l);
  Tensor L = block(packed, l, 0);
  return upper ? mT(L) : L;
}

Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular) {
  const char* op = "linalg.solve_triangular";
  check_matrix(op, a, true);
  check_matrix(op, b, false, "B");
  check_pair(op, a, b);
  const int64_t n = a.size(-1);
  if ((left ? b.size(-2) : b.size(-1)) != n)
    fail(op, "incompatible shapes of A and B for the equation " + std::string(left ? "AX = B" : "XA = B") + " (" +
                 shape_str(a.shape()) + " and " + shape_str(b.shape()) + ")",
         {&a, &b});
  if (!left) return mT(solve_triangular(mT(a), mT(b), !upper, true, unitriangular));
  auto [A, B] = broadcast_batch(op, a, b);
  return left_solve(LinalgOp::kTriangularSolve, LinalgName::kSolveTriangular, a, A, B, upper, unitriangular);
}

Tensor cholesky_solve(const Tensor& b, const Tensor& l, bool upper) {
  const char* op = "linalg.cholesky_solve";
  check_matrix(op, l, true, "L");
  check_matrix(op, b, false, "B");
  check_pair(op, l, b);
  if (b.size(-2) != l.size(-1))
    fail(op, "incompatible shapes of L and B (" + shape_str(l.shape()) + " and " + shape_str(b.shape()) + ")", {&l, &b});
  // A = L L^T: L Y = B, then L^T X = Y (upper: A = U^T U, the same with L = U^T).
  Tensor lower = upper ? mT(l) : l;
  Tensor y = solve_triangular(lower, b, /*upper=*/false);
  return solve_triangular(mT(lower), y, /*upper=*/true);
}

namespace {

Tensor solve_as(LinalgName name, const char* op, const Tensor& a, const Tensor& b, bool left) {
  check_matrix(op, a, true);
  detail::check_defined(op, {&b});
  check_pair(op, a, b);
  // PyTorch's rule: B is a vector when 1-D, or of A's shape without its last dim.
  Shape a_vec = a.shape();
  a_vec.pop_back();
  const bool vector = b.dim() == 1 || (b.dim() == a.dim() - 1 && b.shape() == a_vec);
  const int64_t n = a.size(-1);
  if (!vector && b.dim() < 2)
    fail(op, "B must have at least 1 dimension", {&b});
  const int64_t bn = vector ? b.size(-1) : (left ? b.size(-2) : b.size(-1));
  if (bn != n)
    fail(op, "incompatible shapes of A and B for the equation " + std::string(left ? "AX = B" : "XA = B") + " (" +
                 shape_str(a.shape()) + " and " + shape_str(b.shape()) + ")",
         {&a, &b});
  if (vector && !left)
    fail(op, "vector broadcasting of the left hand side is not supported for left=false (" + shape_str(a.shape()) +
                 " and " + shape_str(b.shape()) + ")",
         {&a, &b});
  if (vector) return squeeze(solve_as(name, op, a, unsqueeze(b, -1), true), -1);
  if (!left) return mT(solve_as(name, op, mT(a), mT(b), true));
  auto [A, B] = broadcast_batch(op, a, b);
  return left_solve(LinalgOp::kSolve, name, a, A, B);
}

}  // namespace

Tensor solve(const Tensor& a, const Tensor& b, bool left) { return solve_as(LinalgName::kSolve, "linalg.solve", a, b, left); }

Tensor inv(const Tensor& a) {
  check_matrix("linalg.inv", a, true);
  const int64_t n = a.size(-1);
  Tensor eye_n = detail::broadcast_to(eye(n, a.dtype()).to(a.device()), a.shape());
  return solve_as(LinalgName::kInv, "linalg.inv", a, eye_n, true);
}

namespace {

Tensor slogdet_packed(const char* op, LinalgName name, const Tensor& a, ir::LinalgLayout* l) {
  check_matrix(op, a, true);
  return record_linalg(params(LinalgOp::kSlogdet, name, a), batch_of(a), {&a}, a.size(-1), a.size(-1), 0, l);
}

}  // namespace

Tensor det(const Tensor& a) {
  ir::LinalgLayout l;
  Tensor packed = slogdet_packed("linalg.det", LinalgName::kDet, a, &l);
  return squeeze(squeeze(slice(packed, -1, 2, 3), -1), -1);
}

Slogdet slogdet(const Tensor& a) {
  ir::LinalgLayout l;
  Tensor packed = slogdet_packed("linalg.slogdet", LinalgName::kSlogdet, a, &l);
  Tensor row = squeeze(packed, -2);  // [..., 3]
  return {squeeze(slice(row, -1, 0, 1), -1), squeeze(slice(row, -1, 1, 2), -1)};
}

LuFactorEx lu_factor_ex(const Tensor& a, bool check_errors) {
  const char* op = check_errors ? "linalg.lu_factor" : "linalg.lu_factor_ex";
  check_matrix(op, a, false);
  LinalgParams p = params(LinalgOp::kLuFactor, check_errors ? LinalgName::kLuFactor : LinalgName::kLuFactorEx, a);
  p.check = check_errors;
  ir::LinalgLayout l;
  Tensor packed = record_linalg(p, batch_of(a), {&a}, a.size(-2), a.size(-1), 0, &l);
  Tensor pivots = cast(block(packed, l, 1, 1), DType::Int32);
  Tensor info = check_errors ? zeros(batch_of(a), DType::Int32).to(a.device()) : cast(block(packed, l, 2, 0), DType::Int32);
  return {block(packed, l, 0), pivots, info};
}

LuFactor lu_factor(const Tensor& a) {
  LuFactorEx r = lu_factor_ex(a, /*check_errors=*/true);
  return {r.LU, r.pivots};
}

Tensor lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool left, bool adjoint) {
  const char* op = "linalg.lu_solve";
  check_matrix(op, lu, true, "LU");
  check_matrix(op, b, false, "B");
  check_pair(op, lu, b);
  detail::check_same_device(op, {&lu, &pivots});
  const int64_t n = lu.size(-1);
  if (pivots.dtype() != DType::Int32 || pivots.dim() < 1 || pivots.size(-1) != n)
    fail(op, "expected pivots of int32 [..., " + std::to_string(n) + "] (lu_factor's), got " +
                 dtype_name(pivots.dtype()) + shape_str(pivots.shape()),
         {&lu, &pivots});
  if ((left ? b.size(-2) : b.size(-1)) != n)
    fail(op, "incompatible shapes of LU and B (" + shape_str(lu.shape()) + " and " + shape_str(b.shape()) + ")",
         {&lu, &b});
  if (!left) return mT(lu_solve(lu, pivots, mT(b), true, !adjoint));
  Shape batch = detail::broadcast_shapes(op, batch_of(lu), batch_of(b), {&lu, &b});
  batch = detail::broadcast_shapes(op, batch, batch_of(pivots, 1), {&lu, &pivots});
  Tensor LU = detail::broadcast_to(lu, with(batch, {n, n}));
  Tensor P = detail::broadcast_to(pivots, with(batch, {n}));
  Tensor B = detail::broadcast_to(b, with(batch, {n, b.size(-1)}));
  LinalgParams p = params(LinalgOp::kLuSolve, LinalgName::kLuSolve, lu);
  p.adjoint = adjoint;
  ir::LinalgLayout l;
  Tensor packed = record_linalg(p, batch, {&LU, &P, &B}, n, n, b.size(-1), &l);
  return block(packed, l, 0);
}

namespace {

Tensor eigh_packed(const char* op, LinalgName name, const Tensor& a, const std::string& uplo, bool vectors,
                   ir::LinalgLayout* l) {
  check_matrix(op, a, true);
  if (uplo != "L" && uplo != "U" && uplo != "l" && uplo != "u")
    fail(op, "expected UPLO to be \"L\" or \"U\", got \"" + uplo + "\"", {&a});
  LinalgParams p = params(LinalgOp::kEigh, name, a);
  p.upper = uplo == "U" || uplo == "u";
  p.vectors = vectors;
  return record_linalg(p, batch_of(a), {&a}, a.size(-1), a.size(-1), 0, l);
}

}  // namespace

Eigh eigh(const Tensor& a, const std::string& uplo) {
  ir::LinalgLayout l;
  Tensor packed = eigh_packed("linalg.eigh", LinalgName::kEigh, a, uplo, true, &l);
  return {block(packed, l, 1, 1), block(packed, l, 0)};
}

Tensor eigvalsh(const Tensor& a, const std::string& uplo) {
  ir::LinalgLayout l;
  Tensor packed = eigh_packed("linalg.eigvalsh", LinalgName::kEigvalsh, a, uplo, false, &l);
  return block(packed, l, 0, 1);
}

Tensor matrix_norm(const Tensor& a, const std::string& ord, bool keepdim) {
  const char* op = "linalg.matrix_norm";
  check_matrix(op, a, false);
  if (ord == "fro") return sqrt(sum(a * a, {-2, -1}, keepdim));
  if (ord == "nuc") {
    Tensor r = sum(svdvals(a), {-1});
    return keepdim ? unsqueeze(unsqueeze(r, -1), -1) : r;
  }
  fail(op, "ord must be \"fro\", \"nuc\" or a number, got \"" + ord + "\"", {&a});
}

Tensor matrix_norm(const Tensor& a, double ord, bool keepdim) {
  const char* op = "linalg.matrix_norm";
  check_matrix(op, a, false);
  const bool largest = ord > 0;
  if (std::fabs(ord) == 2) {
    if (a.numel() == 0)
      fail(op, "ord " + std::to_string(static_cast<int>(ord)) + " of an empty matrix (no singular values)", {&a});
    Tensor s = svdvals(a);
    Tensor r = largest ? max(s, {-1}) : min(s, {-1});
    return keepdim ? unsqueeze(unsqueeze(r, -1), -1) : r;
  }
  // ord 1: sums down each column (over dim -2), then the extreme over columns; inf: across rows.
  const int64_t summed = std::fabs(ord) == 1 ? -2 : -1, over = summed == -2 ? -1 : -2;
  if (std::fabs(ord) != 1 && !std::isinf(ord))
    fail(op, "ord must be 1, -1, 2, -2, inf or -inf, got " + std::to_string(ord), {&a});
  Tensor s = sum(abs(a), {summed}, /*keepdim=*/true);
  Tensor r = largest ? max(s, {over}, true) : min(s, {over}, true);
  return keepdim ? r : squeeze(squeeze(r, -1), -1);
}

QR qr(const Tensor& a, const std::string& mode) {
  const char* op = "linalg.qr";
  check_matrix(op, a, false);
  if (mode != "reduced" && mode != "complete" && mode != "r")
    fail(op, "qr received unrecognized mode '" + mode + "' but expected one of 'reduced' (default), 'r', or 'complete'",
         {&a});
  LinalgParams p = params(LinalgOp::kQr, LinalgName::kQr, a);
  p.vectors = mode != "r";
  p.full = mode == "complete";
  ir::LinalgLayout l;
  Tensor packed = record_linalg(p, batch_of(a), {&a}, a.size(-2), a.size(-1), 0, &l);
  if (!p.vectors) return {zeros({0}, a.dtype()).to(a.device()), block(packed, l, 0)};
  return {block(packed, l, 0), block(packed, l, 1)};
}

namespace {

Tensor svd_packed(const char* op, LinalgName name, const Tensor& a, bool vectors, bool full, ir::LinalgLayout* l) {
  check_matrix(op, a, false);
  LinalgParams p = params(LinalgOp::kSvd, name, a);
  p.vectors = vectors;
  p.full = full;
  return record_linalg(p, batch_of(a), {&a}, a.size(-2), a.size(-1), 0, l);
}

Tensor empty_result(const Tensor& like, DType dtype) { return zeros({0}, dtype).to(like.device()); }

// The result of broadcast batch dims `batch` restricted to `own` (a user input's batch dims,
// right-aligned): dims the input lacks are indexed at 0, dims it has as 1 are sliced to 1.
Tensor unbroadcast(Tensor t, const Shape& batch, const Shape& own) {
  const int64_t extra = static_cast<int64_t>(batch.size() - own.size());
  for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
    if (d < extra) t = select(t, d, 0);
    else if (own[static_cast<size_t>(d - extra)] == 1 && batch[static_cast<size_t>(d)] != 1) t = narrow(t, d, 0, 1);
  }
  return t;
}

// PyTorch's default tolerances (get_atol_rtol): rtol eps * max(m, n) unless given, or 0 when an
// atol > 0 is given.
std::pair<double, double> atol_rtol(const Tensor& a, std::optional<double> atol, std::optional<double> rtol) {
  const double eps = a.dtype() == DType::Float32 ? std::numeric_limits<float>::epsilon()
                                                 : std::numeric_limits<double>::epsilon();
  const double default_rtol = eps * static_cast<double>(std::max(a.size(-1), a.size(-2)));
  const double at = atol.value_or(0);
  return {at, rtol ? *rtol : (atol && at > 0 ? 0.0 : default_rtol)};
}

}  // namespace

SVD svd(const Tensor& a, bool full_matrices) {
  ir::LinalgLayout l;
  Tensor packed = svd_packed("linalg.svd", LinalgName::kSvd, a, true, full_matrices, &l);
  return {block(packed, l, 0), block(packed, l, 1, 1), block(packed, l, 2)};
}

Tensor svdvals(const Tensor& a) {
  ir::LinalgLayout l;
  Tensor packed = svd_packed("linalg.svdvals", LinalgName::kSvdvals, a, false, false, &l);
  return block(packed, l, 0, 1);
}

Lstsq lstsq(const Tensor& a, const Tensor& b, std::optional<double> rcond, const std::string& driver_arg) {
  const char* op = "linalg.lstsq";
  check_matrix(op, a, false);
  detail::check_defined(op, {&b});
  check_pair(op, a, b);
  const std::string driver = driver_arg.empty() ? "gelsy" : driver_arg;
  if (driver != "gelsy" && driver != "gelsd" && driver != "gelss" && driver != "gels")
    fail(op, "parameter `driver` should be one of (gelsy, gelsd, gelss, gels), got \"" + driver + "\"", {&a, &b});
  const bool vector = b.dim() == a.dim() - 1;
  if (!vector && b.dim() < 2)
    fail(op, "other.dim() must be greater or equal to 1 and B must be a vector of A's batch or a matrix", {&a, &b});
  const int64_t m = a.size(-2), n = a.size(-1);
  if ((vector ? b.size(-1) : b.size(-2)) != m)
    fail(op, std::string("input.size(-2) should match other.size(") + (vector ? "-1" : "-2") + ") (" +
                 shape_str(a.shape()) + " and " + shape_str(b.shape()) + ")",
         {&a, &b});
  const Tensor bm = vector ? unsqueeze(b, -1) : b;
  auto [A, B] = broadcast_batch(op, a, bm);
  LinalgParams p = params(LinalgOp::kLstsq, LinalgName::kLstsq, a);
  const double eps = a.dtype() == DType::Float32 ? std::numeric_limits<float>::epsilon()
                                                 : std::numeric_limits<double>::epsilon();
  p.rcond = rcond ? *rcond : eps * static_cast<double>(std::max(m, n));
  ir::LinalgLayout l;
  const Shape batch = batch_of(A);
  Tensor packed = record_linalg(p, batch, {&A, &B}, m, n, B.size(-1), &l);
  Lstsq r;
  r.solution = block(packed, l, 0);
  const bool has_residuals = m > n && driver != "gelsy";
  r.residuals = has_residuals ? sum(square(matmul(A, r.solution) - B), {-2}) : empty_result(a, a.dtype());
  if (vector) r.solution = squeeze(r.solution, -1);  // residuals keep their [..., 1], as PyTorch's
  const Shape own = batch_of(a);
  r.rank = driver == "gels" ? empty_result(a, DType::Int64)
                            : cast(unbroadcast(block(packed, l, 2, 0), batch, own), DType::Int64);
  r.singular_values = driver == "gelsd" || driver == "gelss" ? unbroadcast(block(packed, l, 1, 1), batch, own)
                                                              : empty_result(a, a.dtype());
  return r;
}

Tensor pinv(const Tensor& a, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  const char* op = "linalg.pinv";
  check_matrix(op, a, hermitian);
  auto [at, rt] = atol_rtol(a, atol, rtol);
  const int64_t m = a.size(-2), n = a.size(-1);
  if (a.numel() == 0) return zeros(with(batch_of(a), {n, m}), a.dtype()).to(a.device());
  if (hermitian) {
    auto [w, v] = eigh(a);
    Tensor tol = clamp_min(max(abs(w), {-1}, true) * rt, at);
    Tensor winv = where(abs(w) > tol, reciprocal(w), 0.0);
    return matmul(v * unsqueeze(winv, -2), mT(v));
  }
  auto [u, s, vh] = svd(a, false);
  Tensor tol = clamp_min(narrow(s, -1, 0, 1) * rt, at);
  Tensor sinv = where(s > tol, reciprocal(s), 0.0);
  return matmul(mT(vh) * unsqueeze(sinv, -2), mT(u));
}

Tensor matrix_rank(const Tensor& a, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  const char* op = "linalg.matrix_rank";
  check_matrix(op, a, hermitian);
  auto [at, rt] = atol_rtol(a, atol, rtol);
  if (a.numel() == 0) return zeros(batch_of(a), DType::Int64).to(a.device());
  Tensor s = hermitian ? abs(eigvalsh(a)) : svdvals(a);
  Tensor tol = clamp_min(max(s, {-1}, true) * rt, at);
  return sum(cast(s > tol, DType::Int64), {-1});
}

namespace {

// norm(A) norm(A^-1) for the orders that need square A; a singular A's inverse is inf (inv_ex's
// info, as PyTorch's), and a NaN product of 0 and inf is inf.
template <typename Ord>
Tensor cond_by_inverse(const Tensor& a, Ord p, const std::string& what) {
  const std::string op = "linalg.cond(ord=" + what + ")";
  check_matrix(op.c_str(), a, true);
  // The singular matrices (lu_factor_ex's info) are replaced by I for inv, which would throw on
  // them, and their inverse by inf; inv keeps the gradient (lu_solve's with respect to LU is not).
  Tensor singular = unsqueeze(unsqueeze(lu_factor_ex(a).info > 0, -1), -1);
  Tensor eye_n = detail::broadcast_to(eye(a.size(-1), a.dtype()).to(a.device()), a.shape());
  Tensor inverse = where(singular, std::numeric_limits<double>::infinity(), inv(where(singular, eye_n, a)));
  Tensor r = matrix_norm(a, p) * matrix_norm(inverse, p);
  return where(isnan(r), std::numeric_limits<double>::infinity(), r);
}

Tensor cond_empty(const Tensor& a) { return zeros(batch_of(a), a.dtype()).to(a.device()); }

}  // namespace

Tensor cond(const Tensor& a, std::optional<double> p) {
  const char* op = "linalg.cond";
  check_matrix(op, a, false);
  const double ord = p.value_or(2);
  if (std::fabs(ord) != 2 && std::fabs(ord) != 1 && !std::isinf(ord))
    fail(op, "ord must be one of None, 'fro', 'nuc', inf, -inf, 1, -1, 2, -2, got " + std::to_string(ord), {&a});
  if (a.numel() == 0) return cond_empty(a);
  if (std::fabs(ord) == 2) {
    Tensor s = svdvals(a);
    Tensor hi = narrow(s, -1, 0, 1), lo = narrow(s, -1, s.size(-1) - 1, 1);
    return squeeze(ord < 0 ? lo / hi : hi / lo, -1);
  }
  return cond_by_inverse(a, ord, std::isinf(ord) ? (ord > 0 ? "inf" : "-inf") : (ord > 0 ? "1" : "-1"));
}

Tensor cond(const Tensor& a, const std::string& p) {
  const char* op = "linalg.cond";
  check_matrix(op, a, false);
  if (p != "fro" && p != "nuc")
    fail(op, "ord must be one of None, 'fro', 'nuc', inf, -inf, 1, -1, 2, -2, got \"" + p + "\"", {&a});
  if (a.numel() == 0) return cond_empty(a);
  return cond_by_inverse(a, p, p);
}

}  // namespace lf::linalg
