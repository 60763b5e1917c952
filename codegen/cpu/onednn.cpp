// oneDNN's convolution on the CPU through dlopen (onednn.h). One primitive per geometry, cached:
// the convolution with every layout left to oneDNN (`any`: its blocked formats, nChw16c and the
// like, where its JIT kernels run at the FMA units' rate), and reorders from the caller's strided
// NCHW input and OIHW weights into them and from its output into the caller's contiguous NCHW.
// The blocked copies live in one arena that grows to the largest call, so that a repeated call
// allocates nothing. Calls are serialized (the arena, the primitives): oneDNN spreads each one
// over every core itself.
#include "codegen/cpu/onednn.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "codegen/cpu/onednn_abi.h"
#include "runtime/shared_library.h"

namespace lf::cpu::onednn {
namespace {

struct Loaded {
  dnnl::Api api{};
  dnnl::Engine engine = nullptr;
  dnnl::Stream stream = nullptr;
  std::string error;  // why oneDNN is unusable, when it is
};

const Loaded& loaded() {
  static const Loaded l = [] {
    Loaded l;
    auto lib = rt::SharedLibrary::open({"libdnnl.so.2", "libdnnl.so"});
    if (!lib.loaded()) {
      l.error = "libdnnl.so.2 not found (Debian's libdnnl2, or oneDNN 2.x on LD_LIBRARY_PATH)";
      return l;
    }
    dnnl::Api& a = l.api;
    lib.bind(a.version, "dnnl_version");
    lib.bind(a.engine_create, "dnnl_engine_create");
    lib.bind(a.stream_create, "dnnl_stream_create");
    lib.bind(a.stream_wait, "dnnl_stream_wait");
    lib.bind(a.md_by_strides, "dnnl_memory_desc_init_by_strides");
    lib.bind(a.md_by_tag, "dnnl_memory_desc_init_by_tag");
    lib.bind(a.md_equal, "dnnl_memory_desc_equal");
    lib.bind(a.md_size, "dnnl_memory_desc_get_size");
    lib.bind(a.conv_desc, "dnnl_dilated_convolution_forward_desc_init");
    lib.bind(a.pd_create, "dnnl_primitive_desc_create");
    lib.bind(a.reorder_pd_create, "dnnl_reorder_primitive_desc_create");
    lib.bind(a.pd_query, "dnnl_primitive_desc_query");
    lib.bind(a.pd_query_md, "dnnl_primitive_desc_query_md");
    lib.bind(a.pd_destroy, "dnnl_primitive_desc_destroy");
    lib.bind(a.primitive_create, "dnnl_primitive_create");
    lib.bind(a.primitive_execute, "dnnl_primitive_execute");
    lib.bind(a.primitive_destroy, "dnnl_primitive_destroy");
    lib.bind(a.memory_create, "dnnl_memory_create");
    lib.bind(a.memory_destroy, "dnnl_memory_destroy");
    if (!lib.missing().empty()) {
      l.error = lib.name() + " lacks entry points: " + lib.missing();
      return l;
    }
    const dnnl::Version* v = a.version();
    if (v->major != 2) {
      l.error = lib.name() + " is oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) +
                ": only the 2.x C API is supported";
      return l;
    }
    if (a.engine_create(&l.engine, dnnl::kCpu, 0) != 0 || a.stream_create(&l.stream, l.engine, dnnl::kStreamDefault) != 0)
      l.error = lib.name() + ": no CPU engine or stream";
    return l;
  }();
  return l;
}

const dnnl::Api& api() { return loaded().api; }

lf::Status check(dnnl::Status s, const char* what) {
  if (s == 0) return lf::OkStatus();
  static const char* kNames[] = {"success", "out of memory", "invalid arguments", "unimplemented",
                                 "iterator ends", "runtime error", "not required"};
  return lf::InternalError(std::string("oneDNN ") + what + ": " + (s >= 0 && s <= 6 ? kNames[s] : "error") + " (" +
                           std::to_string(s) + ")");
}
#define LF_DNNL_RETURN_IF_ERROR(call, what)                          \
  do {                                                               \
    if (lf::Status s_ = check((call), what); !s_.ok()) return s_;    \
  } while (0)

// A primitive and the reorders around it, for one geometry.
struct Conv {
  dnnl::PrimitiveDesc pd = nullptr;
  dnnl::Primitive conv = nullptr, x_reorder = nullptr, w_reorder = nullptr, y_reorder = nullptr;
  dnnl::MemoryDesc x_user{}, w_user{}, y_user{};  // the caller's layouts
  const dnnl::MemoryDesc *x = nullptr, *w = nullptr, *y = nullptr;  // oneDNN's, owned by pd
  size_t x_bytes = 0, w_bytes = 0, y_bytes = 0;  // arena bytes of the blocked copies (0: none)
  std::string impl;
  ~Conv() {
    const dnnl::Api& a = api();
    for (dnnl::Primitive p : {conv, x_reorder, w_reorder, y_reorder})
      if (p) a.primitive_destroy(p);
    if (pd) a.pd_destroy(pd);
  }
};

struct Cache {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<Conv>> convs;
  char* arena = nullptr;
  size_t arena_bytes = 0;
};
Cache& cache() {
  static Cache& c = *new Cache;  // never destroyed: primitives outlive static destruction order
  return c;
}
constexpr size_t kMaxConvs = 256;

// The caller's data type. The convolution itself always runs in float32: the 16-bit floats are
// widened by the input and weight reorders and rounded once (to nearest even) by the output's,
// which is what a float32 accumulation gives. (oneDNN 2.6's own bfloat16 convolution, brgconv,
// gave NaN where the reference has finite values next to an inf input: the blocked layouts' zero
// padding times inf.)
bool data_type(DType d, int* out) {
  switch (d) {
    case DType::Float32: *out = dnnl::kF32; return true;
    case DType::BFloat16: *out = dnnl::kBF16; return true;
    case DType::Float16: *out = dnnl::kF16; return true;
    default: return false;
  }
}

std::string key_of(const backend::ConvCall& c) {
  std::string k = std::to_string(static_cast<int>(c.dtype));
  for (int64_t v : {c.batch, c.channels, c.height, c.width, c.out_channels, c.kernel_h, c.kernel_w, c.out_h, c.out_w})
    k += "," + std::to_string(v);
  for (int64_t v : c.params.pack()) k += "," + std::to_string(v);
  for (int64_t v : c.x.strides) k += ";" + std::to_string(v);
  return k;
}

// A reorder from `from` to `to`, or null when the layouts are equal.
lf::Status reorder(const dnnl::MemoryDesc& from, const dnnl::MemoryDesc& to, dnnl::Primitive* out) {
  const Loaded& l = loaded();
  if (l.api.md_equal(&from, &to)) return lf::OkStatus();
  dnnl::PrimitiveDesc pd = nullptr;
  LF_DNNL_RETURN_IF_ERROR(l.api.reorder_pd_create(&pd, &from, l.engine, &to, l.engine, nullptr), "reorder");
  dnnl::Status s = l.api.primitive_create(out, pd);
  l.api.pd_destroy(pd);
  return check(s, "reorder primitive");
}

lf::StatusOr<std::unique_ptr<Conv>> make(const backend::ConvCall& c, int dt) {
  const Loaded& l = loaded();
  const dnnl::Api& a = l.api;
  const auto& p = c.params;
  auto conv = std::make_unique<Conv>();
  const int64_t G = p.groups;
  dnnl::Dims xd = {c.batch, c.channels, c.height, c.width}, yd = {c.batch, c.out_channels, c.out_h, c.out_w};
  dnnl::Dims xs = {c.x.strides[0], c.x.strides[1], c.x.strides[2], c.x.strides[3]};
  LF_DNNL_RETURN_IF_ERROR(a.md_by_strides(&conv->x_user, 4, xd, dt, xs), "input layout");
  LF_DNNL_RETURN_IF_ERROR(a.md_by_tag(&conv->y_user, 4, yd, dt, dnnl::kNchw), "output layout");
  dnnl::Dims wd = {c.out_channels, c.channels / G, c.kernel_h, c.kernel_w};
  dnnl::Dims gwd = {G, c.out_channels / G, c.channels / G, c.kernel_h, c.kernel_w};
  if (G == 1) LF_DNNL_RETURN_IF_ERROR(a.md_by_tag(&conv->w_user, 4, wd, dt, dnnl::kOihw), "weight layout");
  else LF_DNNL_RETURN_IF_ERROR(a.md_by_tag(&conv->w_user, 5, gwd, dt, dnnl::kGoihw), "weight layout");
  dnnl::MemoryDesc xa{}, wa{}, ya{};
  const int f32 = dnnl::kF32;  // the convolution's own type (data_type)
  LF_DNNL_RETURN_IF_ERROR(a.md_by_tag(&xa, 4, xd, f32, dnnl::kAny), "input layout");
  LF_DNNL_RETURN_IF_ERROR(a.md_by_tag(&ya, 4, yd, f32, dnnl::kAny), "output layout");
  if (G == 1) LF_DNNL_RETURN_IF_ERROR(a.md_by_tag(&wa, 4, wd, f32, dnnl::kAny), "weight layout");
  else LF_DNNL_RETURN_IF_ERROR(a.md_by_tag(&wa, 5, gwd, f32, dnnl::kAny), "weight layout");
  dnnl::Dims strides = {p.stride_h, p.stride_w}, dilates = {p.dil_h - 1, p.dil_w - 1};
  dnnl::Dims pad_l = {p.pad_top, p.pad_left}, pad_r = {p.pad_bottom, p.pad_right};
  auto desc = std::make_unique<dnnl::ConvDesc>();
  LF_DNNL_RETURN_IF_ERROR(a.conv_desc(desc.get(), dnnl::kForwardInference, dnnl::kConvolutionDirect, &xa, &wa, nullptr,
                                      &ya, strides, dilates, pad_l, pad_r),
                          "convolution");
  LF_DNNL_RETURN_IF_ERROR(a.pd_create(&conv->pd, desc.get(), nullptr, l.engine, nullptr), "convolution");
  const char* impl = nullptr;
  if (a.pd_query(conv->pd, dnnl::kQueryImplInfo, 0, &impl) == 0 && impl) conv->impl = impl;
  // (Pointers into the primitive descriptor: the library's structs are smaller than our blocks.)
  conv->x = a.pd_query_md(conv->pd, dnnl::kQuerySrcMd, 0);
  conv->w = a.pd_query_md(conv->pd, dnnl::kQueryWeightsMd, 0);
  conv->y = a.pd_query_md(conv->pd, dnnl::kQueryDstMd, 0);
  if (!conv->x || !conv->w || !conv->y) return lf::InternalError("oneDNN: the convolution's layouts");
  LF_DNNL_RETURN_IF_ERROR(a.primitive_create(&conv->conv, conv->pd), "convolution primitive");
  if (lf::Status s = reorder(conv->x_user, *conv->x, &conv->x_reorder); !s.ok()) return s;
  if (lf::Status s = reorder(conv->w_user, *conv->w, &conv->w_reorder); !s.ok()) return s;
  if (lf::Status s = reorder(*conv->y, conv->y_user, &conv->y_reorder); !s.ok()) return s;
  auto rounded = [](size_t b) { return (b + 4095) / 4096 * 4096; };
  if (conv->x_reorder) conv->x_bytes = rounded(a.md_size(conv->x));
  if (conv->w_reorder) conv->w_bytes = rounded(a.md_size(conv->w));
  if (conv->y_reorder) conv->y_bytes = rounded(a.md_size(conv->y));
  return conv;
}

// Memory objects over caller-owned buffers, destroyed at scope exit.
struct Memories {
  std::vector<dnnl::Memory> all;
  ~Memories() {
    for (dnnl::Memory m : all) api().memory_destroy(m);
  }
  lf::StatusOr<dnnl::Memory> make(const dnnl::MemoryDesc& md, void* handle) {
    const Loaded& l = loaded();
    dnnl::Memory m = nullptr;
    if (lf::Status s = check(l.api.memory_create(&m, &md, l.engine, handle), "memory"); !s.ok()) return s;
    all.push_back(m);
    return m;
  }
};

lf::Status execute(dnnl::Primitive p, std::initializer_list<dnnl::ExecArg> args) {
  const Loaded& l = loaded();
  return check(l.api.primitive_execute(p, l.stream, static_cast<int>(args.size()), args.begin()), "execute");
}

}  // namespace

const std::string& unavailable() { return loaded().error; }

namespace {
lf::Status check_takes(const backend::ConvCall& c, int* dt) {
  if (!unavailable().empty()) return lf::UnimplementedError(unavailable());
  if (!data_type(c.dtype, dt)) return lf::UnimplementedError(std::string("oneDNN has no ") + dtype_name(c.dtype) + " convolution");
  if (c.batch == 0 || c.channels == 0 || c.out_channels == 0 || c.out_h <= 0 || c.out_w <= 0)
    return lf::UnimplementedError("an empty convolution");
  for (int64_t s : c.x.strides)
    if (s <= 0) return lf::UnimplementedError("an input view with zero or negative strides");
  return lf::OkStatus();
}
}  // namespace

bool takes(const backend::ConvCall& c) {
  int dt = 0;
  return check_takes(c, &dt).ok();
}

lf::Status convolve(const backend::ConvCall& c, void* out, std::string* how) {
  int dt = 0;
  if (lf::Status s = check_takes(c, &dt); !s.ok()) return s;
  Cache& cc = cache();
  std::lock_guard<std::mutex> lock(cc.mu);
  std::string key = key_of(c);
  auto it = cc.convs.find(key);
  if (it == cc.convs.end()) {
    auto made = make(c, dt);
    if (!made.ok()) return made.status();  // not cached: a refusal is cheap to find again
    if (cc.convs.size() >= kMaxConvs) cc.convs.clear();
    it = cc.convs.emplace(key, *std::move(made)).first;
  }
  const Conv& conv = *it->second;
  size_t need = conv.x_bytes + conv.w_bytes + conv.y_bytes;
  if (need > cc.arena_bytes) {
    std::free(cc.arena);
    cc.arena = static_cast<char*>(std::aligned_alloc(4096, need));
    cc.arena_bytes = cc.arena ? need : 0;
    if (!cc.arena) return lf::InternalError("oneDNN: no memory for the blocked copies (" + std::to_string(need) + " bytes)");
  }
  const size_t esize = dtype_size(c.dtype);
  Memories m;
  auto user = [&](const dnnl::MemoryDesc& md, const void* p) { return m.make(md, const_cast<void*>(p)); };
  auto x_user = user(conv.x_user, static_cast<const char*>(c.x.data) + c.x.offset * static_cast<int64_t>(esize));
  auto w_user = user(conv.w_user, static_cast<const char*>(c.w.data) + c.w.offset * static_cast<int64_t>(esize));
  auto y_user = user(conv.y_user, out);
  if (!x_user.ok() || !w_user.ok() || !y_user.ok()) return lf::InternalError("oneDNN: memory objects");
  dnnl::Memory x = *x_user, w = *w_user, y = *y_user;
  char* arena = cc.arena;
  if (conv.x_reorder) {
    auto xb = m.make(*conv.x, arena);
    if (!xb.ok()) return xb.status();
    if (lf::Status s = execute(conv.x_reorder, {{dnnl::kArgFrom, x}, {dnnl::kArgTo, *xb}}); !s.ok()) return s;
    x = *xb;
  }
  if (conv.w_reorder) {
    auto wb = m.make(*conv.w, arena + conv.x_bytes);
    if (!wb.ok()) return wb.status();
    if (lf::Status s = execute(conv.w_reorder, {{dnnl::kArgFrom, w}, {dnnl::kArgTo, *wb}}); !s.ok()) return s;
    w = *wb;
  }
  dnnl::Memory y_conv = y;
  if (conv.y_reorder) {
    auto yb = m.make(*conv.y, arena + conv.x_bytes + conv.w_bytes);
    if (!yb.ok()) return yb.status();
    y_conv = *yb;
  }
  if (lf::Status s = execute(conv.conv, {{dnnl::kArgSrc, x}, {dnnl::kArgWeights, w}, {dnnl::kArgDst, y_conv}}); !s.ok())
    return s;
  if (conv.y_reorder)
    if (lf::Status s = execute(conv.y_reorder, {{dnnl::kArgFrom, y_conv}, {dnnl::kArgTo, y}}); !s.ok()) return s;
  if (lf::Status s = check(api().stream_wait(loaded().stream), "stream"); !s.ok()) return s;
  *how = "oneDNN " + conv.impl;
  std::string reorders;
  for (auto [r, name] : {std::pair{conv.x_reorder, "x"}, {conv.w_reorder, "w"}, {conv.y_reorder, "y"}})
    if (r) reorders += std::string(reorders.empty() ? "" : ", ") + name;
  if (!reorders.empty()) *how += " (reordered: " + reorders + ")";
  return lf::OkStatus();
}

}  // namespace lf::cpu::onednn
