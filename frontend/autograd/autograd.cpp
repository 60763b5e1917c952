// lf::grad: reverse mode over the lazy trace. The graph behind the output is walked once (inputs
// before users), the nodes that depend on an input are marked, and cotangents flow back in reverse
// order, each node's derivative recorded as ordinary ops (frontend/autograd/derivatives.cpp).
#include "lazyfuse/autograd.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "frontend/autograd/derivatives.h"
#include "frontend/complex.h"
#include "frontend/record.h"
#include "lazyfuse/complex.h"
#include "lazyfuse/ops.h"
#include "runtime/config.h"

namespace lf {
namespace {

using detail::fail;
using ir::Node;
using ir::NodePtr;

// What a node was computed from: a pending node's own op, inputs and attributes, a realized
// node's history, or nothing (a leaf: a buffer, or a value computed outside lf::KeepGraph).
struct Recorded {
  ir::Op op = ir::Op::Buffer;
  const ir::Inputs* inputs = nullptr;
  const ir::Attrs* attrs = nullptr;
};

Recorded recorded(const Node& n) {
  if (n.detached) return {};
  if (!n.realized()) return {n.op, &n.inputs, &n.attrs};
  if (n.history) return {n.history->op, &n.history->inputs, &n.history->attrs};
  return {};
}

// The nodes behind `root`, inputs before users (iterative: a long chain must not overflow the
// stack), each once.
std::vector<NodePtr> graph_order(const NodePtr& root, ir::NodeIndex* index) {
  std::vector<NodePtr> order;
  std::vector<std::pair<NodePtr, size_t>> stack;
  ir::NodeIndex seen;
  seen.insert(root.get(), 0);
  stack.emplace_back(root, 0);
  while (!stack.empty()) {
    auto& [n, next] = stack.back();
    Recorded r = recorded(*n);
    if (r.inputs && next < r.inputs->size()) {
      const NodePtr& in = (*r.inputs)[next++];
      if (seen.insert(in.get(), 0)) stack.emplace_back(in, 0);
      continue;
    }
    index->insert(n.get(), static_cast<int>(order.size()));
    order.push_back(std::move(n));
    stack.pop_back();
  }
  return order;
}

void check_input(size_t i, const Tensor& x, const Tensor& output) {
  std::string which = "input " + std::to_string(i);
  if (!x.defined()) fail("grad", which + " is an empty Tensor (default-constructed, never assigned)");
  if (!is_floating(x.dtype()))
    fail("grad", which + " has dtype " + dtype_name(x.dtype()) + ": only floating-point tensors have gradients", {&x});
  if (x.device() != output.device())
    fail("grad", which + " is on " + x.device().str() + " and the output on " + output.device().str(), {&x, &output});
}

// LAZYFUSE_LOG: the forward values (not leaves) the recorded backward reads (each is stored at the flush, or
// recomputed where the fuser keeps it inside a group), walking the gradients' pending graph down
// to the forward's nodes.
void log_saved(const std::vector<Tensor>& grads, const ir::NodeIndex& forward, size_t forward_nodes) {
  std::vector<const Node*> stack, saved;
  ir::NodeIndex seen;
  for (const Tensor& g : grads)
    if (seen.insert(g.node().get(), 0)) stack.push_back(g.node().get());
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (forward.find(n) >= 0) {
      // Leaves (parameters, data) are held anyway; constants are no memory.
      if (n->op != ir::Op::Full && (!n->realized() || n->history)) saved.push_back(n);
      continue;
    }
    if (n->realized()) continue;
    for (const NodePtr& in : n->inputs)
      if (seen.insert(in.get(), 0)) stack.push_back(in.get());
  }
  std::string list;
  for (const Node* n : saved)
    list += " " + ir::node_name(*n) + " " + dtype_name(n->dtype) + shape_str(n->shape);
  std::fprintf(stderr, "[lazyfuse] grad: %zu forward nodes; the backward reads %zu forward values:%s\n", forward_nodes,
               saved.size(), list.c_str());
}

}  // namespace

Tensor detach(const Tensor& x) {
  detail::check_defined("detach", {&x});
  const ir::Node& n = *x.node();
  // A computed value: another buffer node over the same storage (no copy); a pending one: an
  // identity op marked detached, which fuses into its consumers like any elementwise op.
  if (n.realized()) return Tensor(ir::make_buffer(n.storage, n.dtype, n.shape, n.layout));
  Tensor t = detail::record(ir::Op::Copy, x.dtype(), x.device(), x.shape(), {&x});
  t.node()->detached = true;
  return t;
}

KeepGraph::KeepGraph() { ++detail::keep_graph_depth(); }
KeepGraph::~KeepGraph() { --detail::keep_graph_depth(); }

std::vector<Tensor> grad(const Tensor& output, const std::vector<Tensor>& inputs, const Tensor& cotangent,
                         bool allow_unused) {
  // A complex input's gradient is its pairs' (lazyfuse/complex.h): dL/dre + i dL/dim, PyTorch's
  // convention for a real loss.
  if (std::any_of(inputs.begin(), inputs.end(), [](const Tensor& t) { return t.defined() && is_complex(t.dtype()); })) {
    std::vector<Tensor> real_inputs;
    for (const Tensor& t : inputs) real_inputs.push_back(t.defined() && is_complex(t.dtype()) ? view_as_real(t) : t);
    std::vector<Tensor> g = grad(output, real_inputs, cotangent, allow_unused);
    for (size_t i = 0; i < g.size(); ++i)
      if (g[i].defined() && is_complex(inputs[i].dtype())) g[i] = detail::wrap_complex(g[i], inputs[i].dtype());
    return g;
  }
  if (!output.defined()) fail("grad", "the output is an empty Tensor (default-constructed, never assigned)");
  if (!is_floating(output.dtype()))
    fail("grad", std::string("the output has dtype ") + dtype_name(output.dtype()) +
                     ": only floating-point values have gradients",
         {&output});
  for (size_t i = 0; i < inputs.size(); ++i) check_input(i, inputs[i], output);
  Tensor seed;
  if (cotangent.defined()) {
    if (cotangent.shape() != output.shape() || !is_floating(cotangent.dtype()))
      fail("grad", "the cotangent must be a floating-point tensor of the output's shape", {&cotangent, &output});
    detail::check_same_device("grad", {&cotangent, &output});
    seed = detail::cast_to(cotangent, output.dtype());
  } else {
    if (output.numel() != 1)
      fail("grad",
           "the output has " + std::to_string(output.numel()) +
               " elements: pass a cotangent of its shape (a vector-Jacobian product) or reduce it to one element",
           {&output});
    seed = ones_like(output);
  }

  // The backward's own ops keep no history: they are not differentiated through again (a
  // gradient of a gradient differentiates the pending graph).
  struct Suspend {
    int saved = std::exchange(detail::keep_graph_depth(), 0);
    ~Suspend() { detail::keep_graph_depth() = saved; }
  } suspend;

  ir::NodeIndex index;
  std::vector<NodePtr> order = graph_order(output.node(), &index);
  // wanted[i]: node i is one of the inputs or depends on one (only those need cotangents).
  std::vector<char> is_input(order.size(), 0), wanted(order.size(), 0);
  for (const Tensor& x : inputs) {
    int i = index.find(x.node().get());
    if (i >= 0) is_input[static_cast<size_t>(i)] = wanted[static_cast<size_t>(i)] = 1;
  }
  for (size_t i = 0; i < order.size(); ++i) {
    Recorded r = recorded(*order[i]);
    if (wanted[i] || !r.inputs || !is_floating(order[i]->dtype)) continue;
    for (const NodePtr& in : *r.inputs) wanted[i] |= wanted[static_cast<size_t>(index.find(in.get()))];
  }

  std::vector<Tensor> cot(order.size());
  cot.back() = seed;
  for (size_t i = order.size(); i-- > 0;) {
    if (!cot[i].defined() || !wanted[i]) continue;
    Recorded r = recorded(*order[i]);
    if (!r.inputs || r.inputs->empty()) continue;
    std::vector<bool> needed;
    std::vector<Tensor> in;
    bool any = false;
    for (const NodePtr& n : *r.inputs) {
      size_t j = static_cast<size_t>(index.find(n.get()));
      needed.push_back(wanted[j] && is_floating(n->dtype));
      any |= needed.back();
      in.emplace_back(n);
    }
    if (!any) continue;
    // An input's cotangent is only read here: an intermediate's is dropped once it is used, so
    // the backward holds no more than it must.
    Tensor g = is_input[i] ? cot[i] : std::move(cot[i]);
    autograd::VjpArgs args{r.op, *r.attrs, std::move(in), Tensor(order[i]), std::move(g), std::move(needed)};
    std::vector<Tensor> grads = autograd::vjp(args);
    for (size_t k = 0; k < grads.size() && k < args.in.size(); ++k) {
      if (!args.needed[k] || !grads[k].defined()) continue;
      const Tensor& x = args.in[k];
      Tensor c = grads[k];
      if (c.shape() != x.shape())
        fail("grad", std::string("internal: the derivative of ") + ir::op_name(r.op) + " gave input " +
                         std::to_string(k) + " a cotangent of another shape",
             {&c, &x});
      if (c.dtype() != x.dtype()) c = cast(c, x.dtype());
      size_t j = static_cast<size_t>(index.find(x.node().get()));
      cot[j] = cot[j].defined() ? cot[j] + c : std::move(c);
    }
  }

  std::vector<Tensor> result;
  result.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    int j = index.find(inputs[i].node().get());
    if (j >= 0 && cot[static_cast<size_t>(j)].defined()) {
      result.push_back(cot[static_cast<size_t>(j)]);
      continue;
    }
    if (!allow_unused)
      fail("grad",
           "the output does not depend on input " + std::to_string(i) +
               " (or only through a value a sync point computed outside lf::KeepGraph)",
           {&inputs[i], &output});
    result.push_back(zeros_like(inputs[i]));
  }
  if (rt::config().log_level >= 1) log_saved(result, index, order.size());
  return result;
}

std::vector<Tensor> grad(const Tensor& output, std::initializer_list<Tensor> inputs, const Tensor& cotangent,
                         bool allow_unused) {
  return grad(output, std::vector<Tensor>(inputs), cotangent, allow_unused);
}

namespace detail {
namespace {

template <typename Args>
auto value_and_grad_of(const std::function<Tensor(const Args&)>& f, const Args& args) {
  Tensor value;
  {
    KeepGraph keep;
    value = f(args);
  }
  auto grads = grad(value, args);
  // The gradients reference the forward's nodes themselves; the value need not keep them.
  ir::Node& n = *value.node();
  n.keep_history = false;
  n.history.reset();
  return std::pair<Tensor, decltype(grads)>(std::move(value), std::move(grads));
}

}  // namespace

std::pair<Tensor, std::vector<Tensor>> value_and_grad(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                                      const std::vector<Tensor>& args) {
  return value_and_grad_of(f, args);
}

std::pair<Tensor, Params> value_and_grad(const std::function<Tensor(const Params&)>& f, const Params& args) {
  return value_and_grad_of(f, args);
}

}  // namespace detail

Params grad(const Tensor& output, const Params& inputs, const Tensor& cotangent, bool allow_unused) {
  std::vector<Tensor> values;
  values.reserve(inputs.size());
  for (const auto& [name, t] : inputs) values.push_back(t);
  std::vector<Tensor> grads = grad(output, values, cotangent, allow_unused);
  Params out;
  size_t i = 0;
  for (const auto& [name, t] : inputs) out.emplace(name, std::move(grads[i++]));
  return out;
}

}  // namespace lf
