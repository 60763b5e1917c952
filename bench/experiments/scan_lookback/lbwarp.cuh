// A ninth warp looks back while the eight item warps load and scan the tile.
#ifndef LB_LOOK_BACK
#define LB_LOOK_BACK lf_look_back
#endif
#ifndef LB_MIN_BLOCKS
#define LB_MIN_BLOCKS 6
#endif
__device__ __forceinline__ void lf_bar_items() { asm volatile("bar.sync 1, %0;" ::"n"(THREADS) : "memory"); }
#ifdef LB_CPASYNC
__device__ __forceinline__ void lf_cp16b(void* smem, const void* g) {
  unsigned a = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(g) : "memory");
}
#endif
__global__ void __launch_bounds__(THREADS + 32, LB_MIN_BLOCKS)
lf_scan_tiles2(const S* x, O* y, i64 inner, i64 n, i64 so, i64 sn, i64 si, i64 tiles_per_line, unsigned* counter,
               u64* status, T* aggregates, T* prefixes) {
#ifdef LB_DYNAMIC
  extern __shared__ float4 s_data[];
#else
  __shared__ float4 s_data[TILE / 4];
#endif
  __shared__ T s_warp[THREADS / 32];
  __shared__ T s_start[THREADS];
  __shared__ T s_exclusive;
  const LfTile b = lf_take_tile(x, y, inner, n, so, si, tiles_per_line, counter);
  const i64 t = b.t, tile = b.tile;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (warp == THREADS / 32) {  // the look-back warp
    T exclusive = IDENTITY;
    if (tile > 0) exclusive = LB_LOOK_BACK(t, b.line * tiles_per_line, status, aggregates, prefixes);
    if (lane == 0) s_exclusive = exclusive;
    __syncthreads();
    if (tile > 0 && lane == 0) {
      T total = IDENTITY;
#pragma unroll
      for (int w = 0; w < THREADS / 32; ++w) total = COMBINE(total, s_warp[w]);
      lf_publish(status, aggregates, prefixes, t, 2, COMBINE(exclusive, total));
    }
    return;
  }
  const S* src = b.src;
  O* dst = b.dst;
  const i64 tile_base = tile * TILE, base = tile_base + (i64)threadIdx.x * ITEMS;
  const bool vec = sn == 1 && inner == 1 && tile_base + TILE <= n &&
                   (((u64)(src + tile_base) | (u64)(dst + tile_base)) & 15) == 0;
  if (vec) {
    const float4* in4 = (const float4*)(src + tile_base);
#pragma unroll
    for (int q = 0; q < ITEMS / 4; ++q) {
      const int j = threadIdx.x + q * THREADS;
#ifdef LB_CPASYNC
      lf_cp16b(&s_data[LF_SWZ(j)], in4 + j);
#else
      s_data[LF_SWZ(j)] = __ldcs(in4 + j);
#endif
    }
#ifdef LB_CPASYNC
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
    lf_bar_items();
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const i64 j = base + i;
      ((float*)&lf_quad(s_data, i / 4))[i & 3] = j < n ? LOAD(src[j * sn]) : IDENTITY;
    }
  }
  const T acc = lf_scan_quads(s_data);
  T inc = acc;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    T up = SHFL_UP(inc, d);
    if (lane >= d) inc = COMBINE(up, inc);
  }
  T before = SHFL_UP(inc, 1);
  if (lane == 0) before = IDENTITY;
  if (lane == 31) s_warp[warp] = inc;
  lf_bar_items();
  T wp = IDENTITY, total = IDENTITY;
#pragma unroll
  for (int w = 0; w < THREADS / 32; ++w) {
    const T v = s_warp[w];
    if (w < warp) wp = COMBINE(wp, v);
    total = COMBINE(total, v);
  }
  if (threadIdx.x == 0) lf_publish(status, aggregates, prefixes, t, tile == 0 ? 2 : 1, total);
  s_start[threadIdx.x] = COMBINE(wp, before);
  __syncthreads();  // meets the look-back warp
  const T ex = s_exclusive;
  if (vec) {
    float4* out4 = (float4*)(dst + tile_base);
#pragma unroll
    for (int q = 0; q < ITEMS / 4; ++q) {
      const int j = threadIdx.x + q * THREADS;
      const T st = COMBINE(ex, s_start[j / (ITEMS / 4)]);
      float4 f = s_data[LF_SWZ(j)];
      f.x = COMBINE(st, f.x);
      f.y = COMBINE(st, f.y);
      f.z = COMBINE(st, f.z);
      f.w = COMBINE(st, f.w);
      __stcs(out4 + j, f);
    }
  } else {
    const T st = COMBINE(ex, s_start[threadIdx.x]);
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const i64 j = base + i;
      if (j < n) dst[j * inner] = EMIT(COMBINE(st, ((float*)&lf_quad(s_data, i / 4))[i & 3]));
    }
  }
}
