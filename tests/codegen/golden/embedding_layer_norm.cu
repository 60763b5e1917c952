struct Meta { i64 v[18]; };
struct Ptrs { void* p[3]; };
struct Scratch { void* partial; void* partial_index; unsigned* counters; };
extern "C" __global__ void __launch_bounds__(256) embedding_layer_norm(const Meta meta, const Ptrs ptrs, const Scratch scratch) {
  const int n0 = (int)meta.v[0];
  const int n1 = (int)meta.v[1];
  const int off0 = (int)meta.v[2];
  const i64* __restrict__ p0 = (const i64*)ptrs.p[0];
  const int off1 = (int)meta.v[5];
  const float* __restrict__ p1 = (const float*)ptrs.p[1];
  const int off2 = (int)meta.v[8];
  const int s2_0 = (int)meta.v[9];
  float* __restrict__ p2 = (float*)ptrs.p[2];
  const i64 q0 = meta.v[11];
  const i64 q1 = meta.v[12];
  const i64 q2 = meta.v[13];
  const i64 q3 = meta.v[14];
  const i64 q4 = meta.v[15];
  __shared__ double red_v[16];
  __shared__ i64 red_i[16];
  __shared__ bool last_block;
  int rows = 1 * n0;
  int inner = 1 * n1;
  const int seg_lo = gridDim.y == 1 ? 0 : (int)(((i64)inner * blockIdx.y) / gridDim.y);
  const int seg_hi = gridDim.y == 1 ? inner : (int)(((i64)inner * (blockIdx.y + 1)) / gridDim.y);
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    int rest_ = row;
    int o0 = rest_;
    (void)rest_;
    int b0 = off0 + o0 * 1;
    int b1 = off1;
    int b2 = off2 + o0 * s2_0;
    i64 c0[1];
    float g1[1];
    #pragma unroll
    for (int k_ = 0; k_ < 1; ++k_) {
      const i64 j64 = (i64)threadIdx.x + (i64)k_ * 256;
      if (j64 >= inner) break;
      const int j = (int)j64;
      int e0 = b0;
      int e1 = b1 + j;
      int e2 = b2 + j;
      c0[k_] = __ldg(&p0[e0]);
      {
        const i64 v0 = c0[k_];
        g1[k_] = ([&]{ const i64 r_ = (i64)(v0); const i64 i_ = r_ < 0 ? r_ + q0 : r_; return __ldg(&p1[(e1 + i_ * q1)]); }());
      }
    }
    float acc2 = 0.0f;
    #pragma unroll
    for (int k_ = 0; k_ < 1; ++k_) {
      const i64 j64 = (i64)threadIdx.x + (i64)k_ * 256;
      if (j64 >= seg_hi) break;
      const int j = (int)j64;
      int e0 = b0;
      int e1 = b1 + j;
      int e2 = b2 + j;
      const i64 v0 = c0[k_];
      const float v1 = g1[k_];
      acc2 = acc2 + v1;
    }
    for (int d_ = 16; d_ > 0; d_ >>= 1) {
      float x_ = lf_shfl_down(acc2, d_);
      acc2 = acc2 + x_;
    }
    if ((threadIdx.x & 31) == 0) { ((float*)red_v)[threadIdx.x >> 5] = acc2; }
    __syncthreads();
    if (threadIdx.x < 32) {
      acc2 = threadIdx.x < (blockDim.x >> 5) ? ((float*)red_v)[threadIdx.x] : 0.0f;
      for (int d_ = 16; d_ > 0; d_ >>= 1) {
        float x_ = lf_shfl_down(acc2, d_);
        acc2 = acc2 + x_;
      }
      if (threadIdx.x == 0) { ((float*)red_v)[0] = acc2; }
    }
    __syncthreads();
    acc2 = ((float*)red_v)[0];
    __syncthreads();
    const float v2 = acc2;
    const float v3 = ((float)(__longlong_as_double(q2)));
    const float v4 = (v2 / v3);
    float acc6 = 0.0f;
    #pragma unroll
    for (int k_ = 0; k_ < 1; ++k_) {
      const i64 j64 = (i64)threadIdx.x + (i64)k_ * 256;
      if (j64 >= seg_hi) break;
      const int j = (int)j64;
      int e0 = b0;
      int e1 = b1 + j;
      int e2 = b2 + j;
      const i64 v0 = c0[k_];
      const float v1 = g1[k_];
      const float v5 = (v1 - v4);
      acc6 = acc6 + v5;
    }
    float acc10 = 0.0f;
    #pragma unroll
    for (int k_ = 0; k_ < 1; ++k_) {
      const i64 j64 = (i64)threadIdx.x + (i64)k_ * 256;
      if (j64 >= seg_hi) break;
      const int j = (int)j64;
      int e0 = b0;
      int e1 = b1 + j;
      int e2 = b2 + j;
      const i64 v0 = c0[k_];
      const float v1 = g1[k_];
      const float v5 = (v1 - v4);
      const float v9 = (v5 * v5);
      acc10 = acc10 + v9;
    }
    for (int d_ = 16; d_ > 0; d_ >>= 1) {
      float x_ = lf_shfl_down(acc6, d_);
      acc6 = acc6 + x_;
    }
    for (int d_ = 16; d_ > 0; d_ >>= 1) {
      float x_ = lf_shfl_down(acc10, d_);
      acc10 = acc10 + x_;
    }
    if ((threadIdx.x & 31) == 0) {
      ((float*)(red_v + 0))[threadIdx.x >> 5] = acc6;
      ((float*)(red_v + 8))[threadIdx.x >> 5] = acc10;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
      acc6 = threadIdx.x < (blockDim.x >> 5) ? ((float*)(red_v + 0))[threadIdx.x] : 0.0f;
      for (int d_ = 16; d_ > 0; d_ >>= 1) {
        float x_ = lf_shfl_down(acc6, d_);
        acc6 = acc6 + x_;
      }
      acc10 = threadIdx.x < (blockDim.x >> 5) ? ((float*)(red_v + 8))[threadIdx.x] : 0.0f;
      for (int d_ = 16; d_ > 0; d_ >>= 1) {
        float x_ = lf_shfl_down(acc10, d_);
        acc10 = acc10 + x_;
      }
      if (threadIdx.x == 0) {
        ((float*)(red_v + 0))[0] = acc6;
        ((float*)(red_v + 8))[0] = acc10;
      }
    }
    __syncthreads();
    acc6 = ((float*)(red_v + 0))[0];
    acc10 = ((float*)(red_v + 8))[0];
    __syncthreads();
    const float v6 = acc6;
    const float v10 = acc10;
    const float v7 = (v6 / v3);
    const bool v11 = isinf(v10);
    const float v12 = (v7 * v7);
    const float v13 = (v12 * v3);
    const float v14 = (v10 - v13);
    const float v15 = ((float)(__longlong_as_double(q3)));
    const float v16 = lf_max<float>(v14, v15);
    const float v17 = (v11 ? v10 : v16);
    const float v18 = (v17 / v3);
    const float v19 = ((float)(__longlong_as_double(q4)));
    const float v20 = (v18 + v19);
    const float v21 = (1.0f / sqrtf(v20));
    #pragma unroll
    for (int k_ = 0; k_ < 1; ++k_) {
      const i64 j64 = (i64)threadIdx.x + (i64)k_ * 256;
      if (j64 >= inner) break;
      const int j = (int)j64;
      int e0 = b0;
      int e1 = b1 + j;
      int e2 = b2 + j;
      const i64 v0 = c0[k_];
      const float v1 = g1[k_];
      const float v5 = (v1 - v4);
      const float v8 = (v5 - v7);
      const float v22 = (v8 * v21);
      p2[e2] = v22;
    }
    __syncthreads();
  }
}
