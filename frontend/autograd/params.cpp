// Checkpoints of lf::Params (include/lazyfuse/autograd.h): .npz or .safetensors by the extension.
#include <string>

#include "frontend/file_io.h"
#include "lazyfuse/autograd.h"
#include "lazyfuse/interop.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace {

bool is_safetensors(const std::string& path) {
  const std::string ext = ".safetensors";
  return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
}

}  // namespace

void save_params(const std::string& path, const Params& params) {
  if (is_safetensors(path)) return save_safetensors(path, params);
  savez(path, params);
}

Params load_params(const std::string& path, const Params& like, bool allow_extra) {
  const char* op = "load_params";
  std::map<std::string, Tensor> file = is_safetensors(path) ? load_safetensors(path) : load_npz(path);
  Params out;
  for (const auto& [name, want] : like) {
    auto it = file.find(name);
    if (it == file.end()) detail::file_error(op, path, "has no tensor \"" + name + "\"");
    const Tensor& got = it->second;
    if (got.shape() != want.shape())
      detail::file_error(op, path, "tensor \"" + name + "\" is " + dtype_name(got.dtype()) + shape_str(got.shape()) +
                                       ", the parameter " + dtype_name(want.dtype()) + shape_str(want.shape()));
    out.emplace(name, cast(got, want.dtype()).to(want.device()));
  }
  if (!allow_extra)
    for (const auto& [name, t] : file)
      if (!like.count(name))
        detail::file_error(op, path, "tensor \"" + name + "\" is not one of the parameters (allow_extra to ignore it)");
  return out;
}

}  // namespace lf
