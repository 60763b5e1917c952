// Variants beside the production kernel: a persistent kernel with cp.async double buffering, and a
// copy through shared-memory tiles of the same shape (no scan: the structure's own cost).
#ifndef LF_CP16
#define LF_CP16
__device__ __forceinline__ void lf_cp16(void* smem, const void* g) {
  unsigned a = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(a), "l"(g) : "memory");
}
#endif
__device__ __forceinline__ void lf_load_tile_async(float4* buf, const float* x, i64 t) {
  const float4* in4 = (const float4*)(x + t * TILE);
#pragma unroll
  for (int q = 0; q < ITEMS / 4; ++q) { const int j = threadIdx.x + q * THREADS; lf_cp16(&buf[LF_SWZ(j)], in4 + j); }
}
#ifndef PERSIST_BLOCKS
#define PERSIST_BLOCKS 3
#endif
__global__ void __launch_bounds__(THREADS, PERSIST_BLOCKS)
lf_scan_persist(const float* x, float* y, i64 tiles, unsigned* counter, u64* status) {
  extern __shared__ float4 s_buf[];
  __shared__ unsigned s_next;
  if (threadIdx.x == 0) s_next = atomicAdd(counter, 1u);
  __syncthreads();
  i64 t = s_next;
  __syncthreads();
  if (t < tiles) lf_load_tile_async(s_buf, x, t);
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  int b = 0;
  while (t < tiles) {
    if (threadIdx.x == 0) s_next = atomicAdd(counter, 1u);
    __syncthreads();
    const i64 tn = s_next;
    float4* cur = s_buf + b * (TILE / 4);
    if (tn < tiles) lf_load_tile_async(s_buf + (b ^ 1) * (TILE / 4), x, tn);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    __syncthreads();
    const T acc = lf_scan_quads(cur);
    const T start = lf_thread_start(acc, t, t, 0, status, nullptr, nullptr);
#pragma unroll
    for (int q = 0; q < ITEMS / 4; ++q) {
      float4 f = lf_quad(cur, q);
      f.x += start; f.y += start; f.z += start; f.w += start;
      lf_quad(cur, q) = f;
    }
    __syncthreads();
    float4* out4 = (float4*)(y + t * TILE);
#pragma unroll
    for (int q = 0; q < ITEMS / 4; ++q) {
      const int j = threadIdx.x + q * THREADS;
      __stcs(out4 + j, cur[LF_SWZ(j)]);
    }
    __syncthreads();
    t = tn;
    b ^= 1;
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}
__global__ void __launch_bounds__(THREADS, 6) lf_copy_tiles(const float* x, float* y) {
  __shared__ float4 s[TILE / 4];
  const float4* in4 = (const float4*)x + (i64)blockIdx.x * (TILE / 4);
  float4* out4 = (float4*)y + (i64)blockIdx.x * (TILE / 4);
#pragma unroll
  for (int q = 0; q < ITEMS / 4; ++q) { const int j = threadIdx.x + q * THREADS; s[LF_SWZ(j)] = __ldcs(in4 + j); }
  __syncthreads();
#pragma unroll
  for (int q = 0; q < ITEMS / 4; ++q) { const int j = threadIdx.x + q * THREADS; __stcs(out4 + j, s[LF_SWZ(j)]); }
}
