// Conv2d and pool2d groups on a GPU. Convolution: cuDNN (cudnn.h) where it is loaded and takes
// the problem, else the generated implicit-GEMM kernel (conv_kernels.h), as LAZYFUSE_CONV says;
// then the group's epilogue as a kernel over the output. An epilogue that is exactly
// act(conv + bias [+ residual]) (backend/conv_epilogue.h) runs inside cuDNN's fused call instead,
// and act(conv * scale + bias [+ residual]) (16-bit: the batch norm the fold left out of the
// filter) inside a graph-API call.
// Pooling: the generated kernel. The reference executor on the host is left only for when neither
// can run (no NVRTC). The cuDNN paths and pooling are recorded in flush plans (backend::RecordedCall).
// LAZYFUSE_LOG=1 says which path ran and why.
#include "codegen/backend/conv_epilogue.h"
#include "codegen/backend/kernel.h"
#include "codegen/cuda/backend.h"
#include "codegen/cuda/conv_kernels.h"
#include "codegen/cuda/cudnn.h"
#include "codegen/ir/view.h"
#include "runtime/config.h"
#include "runtime/storage.h"

namespace lf::cuda {
namespace {

// A replayed cuDNN call that fails (it ran when the plan was recorded, over the same shapes) is an
// error: its outputs were already handed out.
void check_replay(const lf::Status& st) {
  if (!st.ok()) throw lf::Error("lf::conv2d: cuDNN failed in a replayed flush plan: " + std::string(st.message()));
}

// A copy of the call's geometry for a replay: no group, stats or buffers are read through it.
std::shared_ptr<backend::ConvCall> geometry_of(const backend::ConvCall& call) {
  auto g = std::make_shared<backend::ConvCall>(call);
  g->x_storage = g->w_storage = nullptr;
  g->record = nullptr;
  return g;
}

// The group's epilogue, lowered now that the convolution's output is a realized input of it.
// Appends to *how what ran; returns the launched kernel (for a flush plan), or nothing.
std::optional<backend::Prepared> run_epilogue(backend::ConvCall& call, std::string* how) {
  if (!call.has_epilogue()) return std::nullopt;
  fuse::Group e = call.epilogue_group();
  if (e.outputs.empty()) return std::nullopt;
  backend::Prepared k = backend::prepare(call.run, e);
  if (!k.entry->kernel) {
    backend::run_fallback(k);
    *how += ", then the epilogue on the reference executor (its kernel did not compile)";
    call.record = nullptr;  // not replayable
    return std::nullopt;
  }
  backend::launch(k, call.run.stats);
  backend::materialize_outputs(k);
  *how += ", then the epilogue kernel";
  return k;
}

// A realized operand read through its views: its storage and byte offset, when the views read it
// as `strides` (0 where a dim is broadcast); no storage otherwise (a pending value, another layout).
struct Buffer {
  std::shared_ptr<rt::Storage> storage;
  int64_t offset = 0;  // bytes
  const void* at() const { return storage ? static_cast<const char*>(storage->data()) + offset : nullptr; }
};
Buffer buffer(ir::Node* n, const Shape& strides) {
  auto [src, chain] = ir::resolve_views(n);
  if (!src->realized() || src->dtype != n->dtype) return {};
  auto v = ir::view_of_chain(*src, chain);
  if (!v) return {};
  for (size_t d = 0; d < strides.size(); ++d)
    if (n->shape[d] != 1 && v->strides[d] != strides[d]) return {};
  return {src->storage, v->offset * static_cast<int64_t>(dtype_size(n->dtype))};
}

// The group as one cuDNN convolution + bias + activation, when its epilogue is that form and its
// operands are buffers cuDNN reads; the output goes to the epilogue's node. False (and *why) when
// not: the caller runs the convolution and the epilogue kernel.
bool run_fused(backend::ConvCall& call, const std::shared_ptr<rt::Storage>& out, const Shape& y_strides, std::string* how,
               std::string* why) {
  backend::BiasActivation e;
  if (!backend::bias_activation(call.run.group, &e, why)) return false;
  ir::Node* y = call.product();
  Buffer bias = buffer(e.bias, {0, 1, 0, 0});
  Buffer scale = e.scale ? buffer(e.scale, {0, 1, 0, 0}) : Buffer{};
  // The residual in the output's layout, or (for an NHWC output) a contiguous NCHW one that cuDNN
  // transforms first: the block's input in a network's first residual.
  const Shape dense = ir::contiguous_strides(y->shape);
  Buffer z = e.z ? buffer(e.z, y_strides) : Buffer{};
  bool z_nchw = false;
  if (e.z && !z.storage && y_strides != dense) {
    z = buffer(e.z, dense);
    z_nchw = z.storage != nullptr;
  }
  if (!bias.storage || (e.scale && !scale.storage) || (e.z && !z.storage)) {
    *why = !bias.storage    ? "the bias is not a contiguous buffer"
           : !z.storage && e.z ? "the residual is not an NCHW or NHWC buffer"
                               : "the scale is not a contiguous buffer";
    return false;
  }
  int device = y->device.index();
  bool relu = e.relu;
  // The legacy call takes a bias of the convolution's dtype, no scale.
  if (!e.scale && e.bias->dtype != y->dtype) {
    *why = std::string("a ") + dtype_name(e.bias->dtype) + " bias";
    return false;
  }
  // Both calls share one signature for the replay below; the legacy one ignores the scale.
  auto fused = [scaled = e.scale != nullptr, sd = e.scale ? e.scale->dtype : y->dtype, bd = e.bias->dtype](
                   const backend::ConvCall& c, void* yp, const void* sp, const void* bp, const void* zp, bool znchw,
                   bool r, int d, std::string* h) {
    return scaled ? cudnn_conv2d_scale_bias_act(c, yp, sp, sd, bp, bd, zp, znchw, r, d, h)
                  : cudnn_conv2d_bias_act(c, yp, bp, zp, znchw, r, d, h);
  };
  lf::Status s = fused(call, out->data(), scale.at(), bias.at(), z.at(), z_nchw, relu, device, how);
  if (!s.ok()) {
    *why = std::string(s.message());
    return false;
  }
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += call.bytes + (z.storage ? call.y_bytes : 0);
  backend::materialize(*e.out, out, ir::Layout{y_strides, 0});
  if (call.record) {  // for a flush plan: x, w, y, bias, z, scale (null without one)
    backend::RecordedCall& r = *call.record;
    r.outputs.emplace_back(e.out, out);
    r.set_strides(0, y_strides);
    r.addresses = {call.x.data, call.w.data, out->data(), bias.storage->data(),
                   z.storage ? z.storage->data() : nullptr, scale.storage ? scale.storage->data() : nullptr};
    r.replay = [g = geometry_of(call), fused, b = bias.offset, zo = z.offset, so = scale.offset, z_nchw, relu,
                device](void* const* p) {
      g->x.data = p[0];
      g->w.data = p[1];
      const void* zp = p[4] ? static_cast<const char*>(p[4]) + zo : nullptr;
      const void* sp = p[5] ? static_cast<const char*>(p[5]) + so : nullptr;
      std::string unused;
      check_replay(fused(*g, p[2], sp, static_cast<const char*>(p[3]) + b, zp, z_nchw, relu, device, &unused));
    };
  }
  return true;
}

// The generated kernel reads the filter as contiguous OIHW: a KRSC one (the batch-norm fold's, for
// cuDNN) is copied so first by a copy kernel, its buffer kept in *keep. False when that kernel did
// not compile.
bool oihw_filter(backend::ConvCall& call, std::shared_ptr<rt::Storage>* keep) {
  const ir::NodePtr& w = call.product()->inputs[1];
  *keep = backend::copy_contiguous(call.run, w);
  if (!*keep) return false;
  call.w = {(*keep)->data(), 0, ir::contiguous_strides(w->shape)};
  call.w_storage = *keep;
  call.w_krsc = false;
  return true;
}

// For a flush plan: cuDNN's convolution, then the epilogue kernel, over new addresses: x, w, y,
// then the epilogue's operands.
void record_unfused(backend::ConvCall& call, const std::shared_ptr<rt::Storage>& out, const Shape& y_strides,
                    const std::optional<backend::Prepared>& epilogue) {
  if (epilogue && epilogue->low.error_storage) return;  // not replayable
  backend::RecordedCall& r = *call.record;
  r.outputs.emplace_back(call.product(), out);
  r.set_strides(0, y_strides);
  r.addresses = {call.x.data, call.w.data, out->data()};
  std::shared_ptr<backend::KernelReplay> kr;
  if (epilogue) {
    r.add_outputs(*epilogue);
    r.add_operands(*epilogue);
    kr = std::make_shared<backend::KernelReplay>(*epilogue);
  }
  int device = call.product()->device.index();
  r.replay = [g = geometry_of(call), kr, device](void* const* p) {
    g->x.data = p[0];
    g->w.data = p[1];
    std::string unused;
    if (g->y_bytes) check_replay(cudnn_conv2d(*g, p[2], device, &unused));
    if (kr) {
      kr->bind(p + 3);
      kr->launch();
    }
  };
}

}  // namespace

void run_conv(backend::ConvCall& call) {
  ir::Node* y = call.product();
  int device = y->device.index();
  auto out = rt::Storage::allocate(y->device, call.y_bytes);
  const std::string& mode = rt::config().conv;  // LAZYFUSE_CONV
  std::string how, declined, not_fused;
  bool done = call.y_bytes == 0, cudnn = false;
  // cuDNN writes NHWC where it runs the problem so (cudnn.h), and the pointwise kernels after it
  // keep that layout (lower.h); the generated kernel writes NCHW.
  bool nhwc = false;
  lf::Status usable = done || mode == "generated" ? lf::OkStatus() : cudnn_output_nhwc(call, device, &nhwc);
  Shape y_strides = nhwc ? ir::channels_last_strides(y->shape) : ir::contiguous_strides(y->shape);
  if (usable.ok()) call.nhwc = nhwc ? 1 : 0;  // a replay keeps it (geometry_of copies the call)
  if (done) {
    how = "nothing to compute (an empty output)";
  } else if (mode != "generated" && usable.ok() && call.has_epilogue() && run_fused(call, out, y_strides, &how, &not_fused)) {
    return call.log(how);
  } else if (mode != "generated") {
    lf::Status s = usable.ok() ? cudnn_conv2d(call, out->data(), device, &how) : usable;
    done = cudnn = s.ok();
    if (!done) declined = "cuDNN declined: " + std::string(s.message());
  } else {
    declined = "LAZYFUSE_CONV=generated";
  }
  if (!cudnn) y_strides = ir::contiguous_strides(y->shape);
  std::shared_ptr<rt::Storage> oihw;
  if (!done && call.w_krsc && !oihw_filter(call, &oihw))
    return backend::run_conv_on_reference(call, declined + "; the filter's copy kernel did not compile");
  if (!done) {
    lf::Status s = generated_conv2d(call, out->data(), device, &how);
    if (!s.ok())
      return backend::run_conv_on_reference(
          call, declined + "; the generated kernel could not run: " + std::string(s.message()));
    how += " (" + declined + ")";
  }
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += call.bytes;
  backend::materialize(*y, out, ir::Layout{y_strides, 0});
  std::optional<backend::Prepared> epilogue = run_epilogue(call, &how);
  if (!not_fused.empty()) how += " (not cuDNN's fused epilogue: " + not_fused + ")";
  // The generated kernel is not recorded (it is compiled outside the kernel cache): such a flush
  // is fused afresh each time.
  if (call.record && (cudnn || call.y_bytes == 0)) record_unfused(call, out, y_strides, epilogue);
  call.log(how);
}

void run_pool(backend::PoolCall& call) {
  ir::Node* y = call.node();
  auto out = rt::Storage::allocate(y->device, static_cast<size_t>(y->numel()) * dtype_size(y->dtype));
  std::string how;
  std::function<void(const void*, void*)> replay;
  lf::Status s = generated_pool2d(call, out->data(), y->device.index(), &how, call.record ? &replay : nullptr);
  if (!s.ok())
    return backend::run_pool_on_reference(call, "the generated kernel could not run: " + std::string(s.message()));
  if (call.record) {  // for a flush plan: x, y
    call.record->outputs.emplace_back(y, out);
    call.record->addresses = {call.x.data, out->data()};
    call.record->replay = [replay](void* const* p) { replay(p[0], p[1]); };
  }
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += static_cast<uint64_t>(y->numel() + shape_numel(call.in_shape)) * dtype_size(y->dtype);
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  call.log(how);
}

}  // namespace lf::cuda
