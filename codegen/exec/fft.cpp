// FFT groups (ir::Op::Fft): the input brought to the host (what is not yet a buffer evaluated, a
// device buffer copied over), the transform on the host, and the
// output handed to the node on its device. Not replayed by flush plans: the copy is made per call.
// A GPU's transforms run here too until cuFFT has run on one (docs/fft.md).
#include <cstdio>
#include <string>

#include "codegen/backend/fft_host.h"
#include "codegen/exec/groups.h"
#include "runtime/config.h"
#include "runtime/storage.h"

namespace lf::exec {

void run_fft_group(const backend::GroupRun& run) {
  ir::Node* y = run.group.nodes[0];
  // A host value of the node's dtype is read through its strides (a transposed view costs no
  // copy); anything else (another dtype, a device buffer) becomes a contiguous host copy first.
  ir::Value in = ir::reference_eval(y->inputs[0].get());
  if (in.dtype != y->dtype || !rt::shares_host_memory(y->device)) in = ir::to_contiguous(in, y->dtype);
  const size_t bytes = static_cast<size_t>(y->numel()) * dtype_size(y->dtype);
  auto out = rt::Storage::allocate(Device::cpu(), bytes);
  ir::FftProblem p = ir::FftProblem::of(*y, in);
  p.out = out->data();
  std::string how;
  if (rt::config().fft == "reference") {
    ir::reference_fft_problem(p);
    how = "the reference DFT on the host (LAZYFUSE_FFT=reference)";
  } else {
    backend::fft::run(p);
    how = "the host FFT, " + backend::fft::describe(p.params);
    if (!rt::shares_host_memory(y->device)) how += " (cuFFT not wired yet: the lines copied to the host and back)";
  }
  ++run.stats.kernels_launched;
  if (run.options.log_level >= 1)
    std::fprintf(stderr, "[lazyfuse]   group %d: fft %s of %lld line%s of n = %lld %s: %s\n", run.index,
                 ir::fft_kind_name(p.params.kind), static_cast<long long>(p.batch), p.batch == 1 ? "" : "s",
                 static_cast<long long>(p.params.n), dtype_name(p.dtype), how.c_str());
  backend::materialize_value(*y, ir::Value{out, y->dtype, y->shape, {ir::contiguous_strides(y->shape), 0}});
}

}  // namespace lf::exec
