struct Meta { i64 v[14]; };
struct Ptrs { void* p[3]; };
struct Scratch { void* partial; void* partial_index; unsigned* counters; };
extern "C" __global__ void __launch_bounds__(256) scan_fused(const Meta meta, const Ptrs ptrs, const Scratch scratch) {
  const int n0 = (int)meta.v[0];
  const int n1 = (int)meta.v[1];
  const int off0 = (int)meta.v[2];
  const int s0_0 = (int)meta.v[3];
  const float* __restrict__ p0 = (const float*)ptrs.p[0];
  const int off1 = (int)meta.v[5];
  const int s1_0 = (int)meta.v[6];
  const float* __restrict__ p1 = (const float*)ptrs.p[1];
  const int off2 = (int)meta.v[8];
  const int s2_0 = (int)meta.v[9];
  float* __restrict__ p2 = (float*)ptrs.p[2];
  const i64 q0 = meta.v[11];
  __shared__ double red_v[8];
  __shared__ i64 red_i[8];
  __shared__ bool last_block;
  int rows = 1 * n0;
  int inner = 1 * n1;
  const int seg_lo = gridDim.y == 1 ? 0 : (int)(((i64)inner * blockIdx.y) / gridDim.y);
  const int seg_hi = gridDim.y == 1 ? inner : (int)(((i64)inner * (blockIdx.y + 1)) / gridDim.y);
  const int lane_ = threadIdx.x & 0;
  const int leader_ = (threadIdx.x & 31) & ~0;
  (void)leader_;
  const i64 grid_rows_ = (i64)gridDim.x * blockDim.x / 1;
  for (i64 warp_row_ = ((i64)blockIdx.x * blockDim.x + (threadIdx.x & ~31)) / 1; warp_row_ < rows; warp_row_ += grid_rows_) {
    const i64 grow_ = warp_row_ + (threadIdx.x & 31) / 1;
    const bool valid_ = grow_ < rows;
    const int row = (int)(valid_ ? grow_ : rows - 1);
    int rest_ = row;
    int o0 = rest_;
    (void)rest_;
    int b0 = off0 + o0 * s0_0;
    int b1 = off1 + o0 * s1_0;
    int b2 = off2 + o0 * s2_0;
    float s4 = 0.0f;
    #pragma unroll 4
    for (i64 jb_ = 0; jb_ < inner; jb_ += 1) {
      const bool in_ = jb_ + lane_ < inner;
      const i64 j64 = in_ ? jb_ + lane_ : inner - 1;
      const int j = (int)j64;
      int e0 = b0 + j;
      int e1 = b1 + j;
      int e2 = b2 + j;
      const float v0 = __ldg(&p0[e0]);
      const float v1 = expf(v0);
      const float v2 = ((float)(__longlong_as_double(q0)));
      const float v3 = (v1 * v2);
      s4 = s4 + v3;
      const float v4 = s4;
      const float v5 = __ldg(&p1[e1]);
      const float v6 = (v4 + v5);
      if (valid_ && in_) p2[e2] = v6;
    }
  }
}
