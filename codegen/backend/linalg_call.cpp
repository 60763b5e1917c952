// LinalgCall's log line and the host path every backend runs today (linalg_call.h).
#include "codegen/backend/linalg_call.h"

#include <cstdio>

#include "codegen/backend/lapack.h"
#include "runtime/config.h"

namespace lf::backend {

void LinalgCall::log(const std::string& how) const {
  if (run.options.log_level < 1) return;
  const ir::LinalgProblem& p = problem;
  std::fprintf(stderr, "[lazyfuse]   group %d: %s of %lld matri%s [%lld x %lld] %s: %s\n", run.index,
               ir::linalg_name(p.params.name), static_cast<long long>(p.batch), p.batch == 1 ? "x" : "ces",
               static_cast<long long>(p.m), static_cast<long long>(p.n), dtype_name(p.dtype), how.c_str());
}

void run_linalg_on_host(LinalgCall& call, const std::string& prefix) {
  const std::string lead = prefix.empty() ? "" : prefix + ", ";
  std::vector<int64_t> info;
  if (rt::config().linalg == "reference") {
    info = ir::reference_linalg_problems(call.problem);
    call.log(lead + "the reference on the host (LAZYFUSE_LINALG=reference)");
  } else if (const std::string& why = lapack::unavailable(); !why.empty()) {
    info = ir::reference_linalg_problems(call.problem);
    call.log(lead + "the reference on the host (" + why + ")");
  } else {
    info = lapack::solve(call.problem);
    call.log(lead + "LAPACK (" + lapack::library() + ")");
  }
  ++call.run.stats.kernels_launched;
  ir::finish_linalg(call.problem, info);  // throws at the group's sync point on a failure
}

}  // namespace lf::backend
