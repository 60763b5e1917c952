// Reverse-mode gradients over the lazy trace. lf::grad walks the graph behind a value backwards and
// records each op's derivative (the op table's derivative column) as ordinary ops of the same
// trace, so the forward pass, the backward pass and an optimizer's update reach the fuser together
// and nothing runs before a sync point.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lazyfuse/tensor.h"

namespace lf {

// torch.autograd.grad: the gradient of `output` with respect to each of `inputs` (floating-point
// tensors; one result each, in their shapes and dtypes). `cotangent` (output's shape) weights the
// output's elements, a vector-Jacobian product; it may be left out only when the output has one
// element. An input that the output does not depend on gets zeros, or an lf::Error when
// allow_unused is false. The gradient flows through the ops recorded since the inputs, and through
// values a sync point computed meanwhile only if they were recorded under lf::KeepGraph (a
// computed value is otherwise a constant: its graph is freed).
std::vector<Tensor> grad(const Tensor& output, const std::vector<Tensor>& inputs, const Tensor& cotangent = {},
                         bool allow_unused = true);

// torch.Tensor.detach: the same value, a constant to lf::grad (no gradient flows through it);
// no copy of a computed value.
Tensor detach(const Tensor& x);

// A model's parameters by name (ordered, so every walk over them has the same order).
using Params = std::map<std::string, Tensor>;
Params grad(const Tensor& output, const Params& inputs, const Tensor& cotangent = {}, bool allow_unused = true);
// A checkpoint of `like`'s parameters (or an optimizer's state) from a .npz or .safetensors file
// (by its extension): every name of `like` must be in the file with its shape; values are cast to
// like's dtypes and moved to its devices. A missing name, a shape that differs, or a name the
// file has and `like` has not (unless allow_extra) is an lf::Error naming the file and the tensor.
Params load_params(const std::string& path, const Params& like, bool allow_extra = false);
// Saves them (.npz or .safetensors by the extension; replaces the file whole).
void save_params(const std::string& path, const Params& params);

// While one is alive on this thread, every op recorded keeps, after a sync point computes it, what
// it was computed from, so lf::grad can still differentiate through it (printing a loss inside the
// forward pass, say). That graph lives as long as the values do.
class KeepGraph {
 public:
  KeepGraph();
  ~KeepGraph();
  KeepGraph(const KeepGraph&) = delete;
  KeepGraph& operator=(const KeepGraph&) = delete;
};

// The same with the inputs in braces, grad(loss, {w, b}).
std::vector<Tensor> grad(const Tensor& output, std::initializer_list<Tensor> inputs, const Tensor& cotangent = {},
                         bool allow_unused = true);

// JAX's and MLX's value_and_grad: value_and_grad(f) is a function that returns f's value at its
// argument and the gradient of that value with respect to the argument. f takes a
// std::vector<Tensor> or an lf::Params and returns a tensor of one element; its forward pass runs
// under KeepGraph, so f may read values.
namespace detail {
// value_and_grad's work: f(args) under KeepGraph, then its gradient; the value returned no longer
// keeps the graph behind it (a loop that stores its losses would keep every step's graph).
std::pair<Tensor, std::vector<Tensor>> value_and_grad(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                                      const std::vector<Tensor>& args);
std::pair<Tensor, Params> value_and_grad(const std::function<Tensor(const Params&)>& f, const Params& args);
}  // namespace detail

template <typename F>
class ValueAndGrad {
 public:
  explicit ValueAndGrad(F f) : f_(std::move(f)) {}
  std::pair<Tensor, std::vector<Tensor>> operator()(const std::vector<Tensor>& args) const
    requires std::is_invocable_r_v<Tensor, const F&, const std::vector<Tensor>&>
  {
    return detail::value_and_grad(std::function<Tensor(const std::vector<Tensor>&)>(std::cref(f_)), args);
  }
  std::pair<Tensor, Params> operator()(const Params& args) const
    requires std::is_invocable_r_v<Tensor, const F&, const Params&>
  {
    return detail::value_and_grad(std::function<Tensor(const Params&)>(std::cref(f_)), args);
  }

 private:
  F f_;
};

template <typename F>
ValueAndGrad<F> value_and_grad(F f) {
  return ValueAndGrad<F>(std::move(f));
}

}  // namespace lf
