// The kinds of groups the executor runs besides plain fused kernels (internal to exec/).
#pragma once

#include "codegen/backend/kernel.h"

namespace lf::exec {

struct Recorder;

// A matmul group: its operands resolved to storage and strides, then its backend's matmul.
void run_matmul_group(const backend::GroupRun& run);

// cat: each input copied by a generated kernel straight into its slab of the output. False when
// an input is not realized data (a generator) or a copy kernel failed to compile: the reference
// executor then computes the whole cat.
// With `rec`, the copies are recorded for the flush's plan.
bool run_cat(const backend::GroupRun& run, Recorder* rec);

}  // namespace lf::exec
