// Lowering: one fusion group, with the concrete shapes and buffers of this flush, becomes a kernel
// IR (what the code does: cached) plus launch arguments (sizes, strides, pointers, constants: not
// cached). Dims are canonicalized first (reduced dims last, size-1 dims dropped, dims that are
// contiguous for every operand merged), so the same computation at other sizes, or on tensors of
// another rank with the same layout pattern, yields the same kernel.
#pragma once

#include <memory>
#include <vector>

#include "codegen/fuse/fuser.h"
#include "codegen/kir/kernel_ir.h"

namespace lf::lower {

struct Lowered {
  kir::Kernel kernel;
  kir::LaunchArgs args;
  std::vector<ir::Node*> outputs;                         // in kernel output order
  std::vector<std::shared_ptr<rt::Storage>> out_storage;  // freshly allocated (or the placement's)
  // Each output's strides in its buffer: contiguous, the placement's, or channels-last where a
  // pointwise output of rank 4 reads a channels-last input (memory format propagation, as
  // PyTorch's: a GPU convolution writes NHWC, and the ops after it keep that layout).
  std::vector<Shape> out_strides;
  int64_t bytes = 0;                                      // bytes read and written, at least once each
  // Gathers: the kernel's error operand ({tag, index}, zero before the launch: check_gathers()
  // reads it after) and the gather node of each tag (tag t is gathers[t - 1]).
  std::shared_ptr<rt::Storage> error_storage;
  std::vector<ir::Node*> gathers;
  // The launch parameters that are numbers of the trace (ir::note_number_use), which a flush plan
  // patches at each replay: the parameter, its node's flush numbering when lowered (the node may
  // be freed before the recorder reads this), and which of the node's numbers it is
  // (plan::Signature::numbers: 0 a full's value as bits, an arange's start, a rand's seed; 1 a
  // full's integer value, an arange's step, a rand's counter).
  struct Number {
    int param;
    uint64_t mark;
    int32_t pos;
    int field;
  };
  std::vector<Number> numbers;
};

// Throws the index error a launch of `low` recorded, if any (waits for the device: the flush is a
// sync point for a group with a gather, since indices are data).
void check_gathers(const Lowered& low);

// The group's inputs must be realized (earlier groups ran); outputs are allocated on `device`.
// `keep_last_dim`: a pointwise kernel's last two dims stay as they are (never merged or dropped),
// so its columns are exactly the last dim and its rows the rows of a matrix-shaped output: a
// matmul epilogue runs row blocks as the GEMM finishes them, with one kernel for every m.
// `placement`, when given, says where output k goes instead of a fresh contiguous buffer: a view
// (offset and strides, in elements) of an existing storage (cat writes each input into its slab).
struct OutputPlacement {
  std::shared_ptr<rt::Storage> storage;
  int64_t offset = 0;
  Shape strides;
};
Lowered lower_group(const fuse::Group& group, const fuse::Partition& partition, int group_index, Device device,
                    bool keep_last_dim = false, const std::vector<OutputPlacement>* placement = nullptr);

}  // namespace lf::lower
