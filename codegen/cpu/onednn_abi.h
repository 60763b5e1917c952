// The ABI subset of oneDNN 2.x's C API (dnnl.h, dnnl_types.h) that onednn.cpp calls, declared here
// so that no oneDNN header is needed to build (oneDNN is loaded at run time). The descriptors are
// opaque byte blocks larger than the library's structs (dnnl_memory_desc_t is 696 bytes and
// dnnl_convolution_desc_t 5976 in 2.6), filled and read only by the library.
// tests/codegen/cpu/onednn_abi_test.cpp compares every constant and those sizes with the real
// header where one is installed (Debian's libdnnl-dev).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lf::cpu::dnnl {

using Status = int;  // dnnl_status_t; 0 is dnnl_success
using Engine = struct dnnl_engine*;
using Stream = struct dnnl_stream*;
using Memory = struct dnnl_memory*;
using PrimitiveDesc = struct dnnl_primitive_desc*;
using Primitive = struct dnnl_primitive*;
using Attr = struct dnnl_primitive_attr*;
using Dims = int64_t[12];  // dnnl_dims_t (DNNL_MAX_NDIMS)

struct alignas(8) MemoryDesc {  // the library hands out pointers to its own, 8-aligned
  unsigned char bytes[1024];
};
struct alignas(8) ConvDesc {
  unsigned char bytes[8192];
};
inline constexpr size_t kMemoryDescBytes = 696, kConvDescBytes = 5976;  // oneDNN 2.6's, for the ABI test

struct ExecArg {  // dnnl_exec_arg_t
  int arg;
  Memory memory;
};
struct Version {  // dnnl_version_t
  int major, minor, patch;
  const char* hash;
  unsigned cpu_runtime, gpu_runtime;
};

// dnnl_data_type_t
constexpr int kF16 = 1, kBF16 = 2, kF32 = 3;
// dnnl_format_tag_t
constexpr int kAny = 1, kX = 2, kNchw = 5, kOihw = 5, kGoihw = 7;
// dnnl_engine_kind_t, dnnl_stream_flags_t, dnnl_prop_kind_t, dnnl_alg_kind_t
constexpr int kCpu = 1, kStreamDefault = 1, kForwardInference = 96, kConvolutionDirect = 1;
// DNNL_ARG_*
constexpr int kArgSrc = 1, kArgDst = 17, kArgWeights = 33, kArgFrom = 1, kArgTo = 17;
// dnnl_query_t
constexpr int kQueryImplInfo = 8, kQuerySrcMd = 129, kQueryWeightsMd = 131, kQueryDstMd = 133;

struct Api {
  const Version* (*version)();
  Status (*engine_create)(Engine*, int kind, size_t index);
  Status (*stream_create)(Stream*, Engine, unsigned flags);
  Status (*stream_wait)(Stream);
  Status (*md_by_strides)(MemoryDesc*, int ndims, const Dims dims, int dtype, const Dims strides);
  Status (*md_by_tag)(MemoryDesc*, int ndims, const Dims dims, int dtype, int tag);
  int (*md_equal)(const MemoryDesc*, const MemoryDesc*);
  size_t (*md_size)(const MemoryDesc*);
  Status (*conv_desc)(ConvDesc*, int prop, int alg, const MemoryDesc* src, const MemoryDesc* weights,
                      const MemoryDesc* bias, const MemoryDesc* dst, const Dims strides, const Dims dilates,
                      const Dims pad_l, const Dims pad_r);
  Status (*pd_create)(PrimitiveDesc*, const void* op_desc, Attr, Engine, PrimitiveDesc hint);
  Status (*reorder_pd_create)(PrimitiveDesc*, const MemoryDesc* src, Engine, const MemoryDesc* dst, Engine, Attr);
  Status (*pd_query)(PrimitiveDesc, int what, int index, void* result);
  const MemoryDesc* (*pd_query_md)(PrimitiveDesc, int what, int index);
  Status (*pd_destroy)(PrimitiveDesc);
  Status (*primitive_create)(Primitive*, PrimitiveDesc);
  Status (*primitive_execute)(Primitive, Stream, int nargs, const ExecArg* args);
  Status (*primitive_destroy)(Primitive);
  Status (*memory_create)(Memory*, const MemoryDesc*, Engine, void* handle);
  Status (*memory_destroy)(Memory);
};

}  // namespace lf::cpu::dnnl
