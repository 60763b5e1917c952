// The bias + activation form of a conv2d group's epilogue (conv_epilogue.h): a walk over the
// group's members from the convolution up, each step one of mul(scale) (first), add(bias), add(z),
// relu, or for a 16-bit convolution a cast of its output to float32 and of the biased value back.
#include "codegen/backend/conv_epilogue.h"

#include <algorithm>

#include "codegen/ir/view.h"

namespace lf::backend {
namespace {

using ir::Node;
using ir::Op;

// Whether `in`, over the output's [N, O, OH, OW], reads O values along dim 1 only (channel i
// reads element i): a view chain of reshapes and expands over a value of O elements.
bool per_channel(Node* in, int64_t channels) {
  auto [src, chain] = ir::resolve_views(in);
  if (src->numel() != channels || in->rank() != 4) return false;
  for (Node* v : chain)
    if (v->op != Op::Reshape && v->op != Op::Expand) return false;
  auto s = ir::view_of_chain(*src, chain);
  if (!s) return false;
  for (size_t d : {0, 2, 3})
    if (s->shape[d] != 1 && s->strides[d] != 0) return false;
  return channels == 1 || s->strides[1] != 0;
}

// The other operand of a binary `n` one of whose inputs is `x`; null when neither is.
Node* other(const Node* n, const Node* x) {
  if (n->inputs[0].get() == x) return n->inputs[1].get();
  if (n->inputs[1].get() == x) return n->inputs[0].get();
  return nullptr;
}

}  // namespace

bool bias_activation(const fuse::Group& group, BiasActivation* out, std::string* why) {
  Node* conv = group.nodes[0];
  std::vector<Node*> steps;  // members that compute, in order
  for (size_t i = 1; i < group.nodes.size(); ++i)
    if (!ir::is_view(group.nodes[i]->op)) steps.push_back(group.nodes[i]);
  if (steps.empty()) {
    *why = "no epilogue";
    return false;
  }
  BiasActivation r;
  Node* cur = conv;
  size_t i = 0;
  auto fail = [&](const std::string& w) {
    *why = w;
    return false;
  };
  const bool narrow = conv->dtype == DType::Float16 || conv->dtype == DType::BFloat16;
  bool widened = false, back = false;
  for (; i < steps.size(); ++i) {
    Node* n = steps[i];
    if (n->shape != conv->shape) return fail(std::string(ir::op_name(n->op)) + " changes the shape");
    if (n->op == Op::Cast) {
      // A 16-bit convolution's scale and bias computed in float32 and the result rounded back
      // (batch_norm's): the convolution's output widened, then narrowed once after the bias; the
      // fused call computes every step in float32 anyway.
      bool widen = cur == conv && n->dtype == DType::Float32;
      bool narrow_back = widened && !back && r.bias && !r.z && !r.relu && n->dtype == conv->dtype;
      if (!narrow || n->inputs[0].get() != cur || !(widen || narrow_back))
        return fail("a cast other than the convolution's output to float32 and the biased value back");
      widened |= widen;
      back |= narrow_back;
      cur = n;
      continue;
    }
    if (n->dtype != cur->dtype) return fail(std::string(ir::op_name(n->op)) + " changes the dtype");
    if (n->op == Op::Mul && !r.scale && !r.bias && !r.z && !r.relu) {
      Node* o = other(n, cur);
      if (!o || !per_channel(o, conv->shape[1])) return fail("a multiply by other than a per-channel scale");
      r.scale = o;
    } else if (n->op == Op::Add && !r.relu) {
      Node* o = other(n, cur);
      if (!o) return fail("an add that does not read the previous step");
      if (ir::resolve_views(o).first == conv) return fail("an add of the convolution's output to itself");
      if (!r.bias && per_channel(o, conv->shape[1]))
        r.bias = o;
      else if (!r.z && r.bias && o->shape == conv->shape && o->dtype == conv->dtype)
        r.z = o;  // read as the output's dtype, in its layout
      else
        return fail("an add of neither a per-channel bias nor one residual after it");
    } else if (n->op == Op::Relu && !r.relu && n->inputs[0].get() == cur) {
      r.relu = true;
    } else {
      return fail(std::string(ir::op_name(n->op)) + " is neither scale, bias, residual nor relu");
    }
    cur = n;
  }
  if (!r.bias) return fail("no per-channel bias");
  if (cur->dtype != conv->dtype) return fail("the output's dtype is not the convolution's");
  if (group.outputs.size() != 1 || group.outputs[0] != cur) return fail("an intermediate value is also written");
  r.out = cur;
  *out = r;
  return true;
}

}  // namespace lf::backend
