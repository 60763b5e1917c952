// lf::linalg on the GPU through NVIDIA's cuSOLVER (dense API), loaded with dlopen like cuBLASLt and
// cuDNN: no cuSOLVER header or library is needed to build (the ABI subset is cusolver_abi.h).
#pragma once

#include <string>

#include "codegen/backend/linalg_call.h"

namespace lf::cuda {

// The CUDA backend's Backend::linalg: cuSOLVER where it loads and wires the op, else the host path
// (run_linalg_on_host) with the reason in the LAZYFUSE_LOG line.
void run_linalg(backend::LinalgCall& call);

// Why cuSOLVER cannot be used at all ("libcusolver.so.12 ... not found"); empty when it loaded.
const std::string& cusolver_unavailable();

}  // namespace lf::cuda
