// argsort and topk groups on a GPU (Backend::sort): the reference executor's sort on the host,
// copied to the device, until the CUDA sort kernels land.
#include "codegen/backend/sort_call.h"
#include "codegen/cuda/backend.h"

namespace lf::cuda {

void run_sort(backend::SortCall& call) { backend::run_sort_on_reference(call, "no GPU sort kernel yet"); }

}  // namespace lf::cuda
