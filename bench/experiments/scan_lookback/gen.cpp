// Prints the production float32 cumsum kernel's CUDA C (kPrelude + scan_source) for `items` a thread.
#include <cstdio>
#include <cstdlib>
#include "codegen/cuda/backend.h"
#include "codegen/cuda/ops.h"
int main(int argc, char** argv) {
  std::string s = std::string(lf::cuda::kPrelude) + lf::cuda::scan_source(lf::DType::Float32, lf::ir::Op::CumSum, atoi(argv[1]));
  fputs(s.c_str(), stdout);
}
