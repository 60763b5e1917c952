// The kinds of groups the executor runs besides plain fused kernels (internal to exec/).
#pragma once

#include "codegen/backend/kernel.h"

namespace lf::exec {

struct Recorder;

// A library call's operand as storage + strides: a view of realized data as it is; anything else
// (a generator, a reshape that is no view) computed by the reference executor first.
struct Operand {
  std::shared_ptr<rt::Storage> storage;
  kir::GemmOperand view;
  bool computed = false;  // storage is new, not the input's (a flush plan cannot rebind it)
};
Operand operand(ir::Node* in, Device device);

// With `record` (a flush plan is recorded), the library calls below fill it where their backend
// can replay them (backend::RecordedCall).
// A conv2d group: input and weights resolved, then its backend's conv.
void run_conv_group(const backend::GroupRun& run, backend::RecordedCall* record);
// A pool2d group: input resolved, then its backend's pool.
void run_pool_group(const backend::GroupRun& run, backend::RecordedCall* record);

// An argsort or topk group: keys resolved, then its backend's sort (sort.cpp).
void run_sort_group(const backend::GroupRun& run, backend::RecordedCall* record);

// An attention group (codegen/fuse/attention.h): q, k, v and the mask resolved, then its
// backend's attention (exec/attention.cpp).
void run_attention_group(const backend::GroupRun& run, backend::RecordedCall* record);

// cumsum / cumprod: input resolved as [outer, n, inner], then its backend's scan (exec/scan.cpp).
void run_scan_group(const backend::GroupRun& run, backend::RecordedCall* record);
// Nearest groups (fuse/nearest.h): x and the centers as storage + strides (Backend::nearest).
void run_nearest_group(const backend::GroupRun& run, backend::RecordedCall* record);
// scatter_add and the scatter row: self, index and src resolved, then its backend's scatter
// (exec/scan.cpp).
void run_scatter_group(const backend::GroupRun& run, backend::RecordedCall* record);

// A linear-algebra group (ir::Op::Linalg): inputs copied to the host, then its backend's linalg
// (exec/linalg.cpp). Never recorded by a flush plan.
void run_linalg_group(const backend::GroupRun& run);
// An FFT group (ir::Op::Fft): the input copied to the host, the host FFT or the reference
// (exec/fft.cpp). Never recorded by a flush plan.
void run_fft_group(const backend::GroupRun& run);

// A matmul group: its operands resolved to storage and strides, then its backend's matmul.
void run_matmul_group(const backend::GroupRun& run, backend::RecordedCall* record);

// cat: each input copied by a generated kernel straight into its slab of the output. False when
// an input is not realized data (a generator) or a copy kernel failed to compile: the reference
// executor then computes the whole cat.
// With `rec`, the copies are recorded for the flush's plan.
bool run_cat(const backend::GroupRun& run, Recorder* rec);

}  // namespace lf::exec
