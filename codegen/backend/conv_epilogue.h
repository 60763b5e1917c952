// A conv2d group's epilogue recognized as what a fused library call computes (issue 22): cuDNN's
// convolution + bias + activation, y = act(conv(x, w) + z + bias) with act relu or identity and z an
// optional residual. After the batch-norm fold (codegen/fuse/conv_fold.h) a ResNet block's
// conv-bn-relu and conv-bn-add-relu are both this form.
#pragma once

#include <string>

#include "codegen/fuse/fuser.h"

namespace lf::backend {

struct BiasActivation {
  ir::Node* out = nullptr;   // the group's one output: act(conv + bias [+ z])
  ir::Node* bias = nullptr;  // the operand read per out-channel (views of O values)
  ir::Node* z = nullptr;     // the residual, over the output's shape; null without one
  bool relu = false;
};

// The group's epilogue as that form: true and *out filled, or false and *why saying which part
// differs (for the log). Structural only: whether the operands are buffers a library call can read
// is the backend's question at run time.
bool bias_activation(const fuse::Group& group, BiasActivation* out, std::string* why);

}  // namespace lf::backend
