// A conv2d group's epilogue recognized as what a fused library call computes (issue 22): cuDNN's
// convolution + bias + activation, y = act(conv(x, w) [* scale] + bias + z) with act relu or
// identity, scale a per-channel multiply (the graph API's call: cudnn.h) and z an optional
// residual. After the batch-norm fold (codegen/fuse/conv_fold.h) a ResNet block's conv-bn-relu and
// conv-bn-add-relu are both this form.
#pragma once

#include <string>

#include "codegen/fuse/fuser.h"

namespace lf::backend {

struct BiasActivation {
  ir::Node* out = nullptr;    // the group's one output: act(conv [* scale] + bias [+ z])
  ir::Node* scale = nullptr;  // a per-channel multiply before the bias (views of O values); null without
  ir::Node* bias = nullptr;   // the operand read per out-channel (views of O values)
  // A 16-bit convolution's scale and bias may be float32: the epilogue cast to float32 between the
  // convolution and them, and back before the residual or the output (batch_norm records so).
  ir::Node* z = nullptr;     // the residual, over the output's shape; null without one
  bool relu = false;
};

// The group's epilogue as that form: true and *out filled, or false and *why saying which part
// differs (for the log). Structural only: whether the operands are buffers a library call can read
// is the backend's question at run time.
bool bias_activation(const fuse::Group& group, BiasActivation* out, std::string* why);

}  // namespace lf::backend
