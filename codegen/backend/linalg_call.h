// A linear-algebra group (ir::Op::Linalg) handed to its backend (Backend::linalg): the problem
// over contiguous row-major host copies of the inputs and a host output, which the executor then
// hands to the node on its device. The host path (LAPACK, else the reference) is the CPU's, and the
// CUDA backend's fallback where cuSOLVER (codegen/cuda/cusolver.h) does not load or take the op.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/backend/kernel.h"
#include "codegen/reference/linalg.h"

namespace lf::backend {

struct LinalgCall {
  GroupRun run;
  ir::LinalgProblem problem;          // a, b, pivots and out point into the values below
  std::vector<ir::Value> inputs;      // contiguous host copies, kept alive for the call
  std::shared_ptr<rt::Storage> out;   // host, zero-filled: the packed output

  explicit LinalgCall(const GroupRun& r) : run(r) {}
  ir::Node* node() const { return run.group.nodes[0]; }
  // LAZYFUSE_LOG=1: "group 2: linalg.cholesky of 8 matrices [64 x 64] float64: <how>".
  void log(const std::string& how) const;
};

// LAPACK where it is loaded and LAZYFUSE_LINALG allows it, else the reference (codegen/reference/
// linalg.h); then the failure check (an lf::Error at the group's sync point) or the _ex info.
// `prefix` starts the log line's explanation (a GPU: "host LAPACK: <why not cuSOLVER>").
void run_linalg_on_host(LinalgCall& call, const std::string& prefix);

}  // namespace lf::backend
