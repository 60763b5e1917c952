struct Meta { i64 v[17]; };
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
  __shared__ double red_v[24];
  __shared__ i64 red_i[24];
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
    float acc5 = ((float)INFINITY);
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
      acc5 = lf_min<float>(acc5, v1);
    }
    float acc7 = (-(float)INFINITY);
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
      acc7 = lf_max<float>(acc7, v1);
    }
    for (int d_ = 16; d_ > 0; d_ >>= 1) {
      float x_ = lf_shfl_down(acc2, d_);
      acc2 = acc2 + x_;
    }
    for (int d_ = 16; d_ > 0; d_ >>= 1) {
      float x_ = lf_shfl_down(acc5, d_);
      acc5 = lf_min<float>(acc5, x_);
    }
    for (int d_ = 16; d_ > 0; d_ >>= 1) {
      float x_ = lf_shfl_down(acc7, d_);
      acc7 = lf_max<float>(acc7, x_);
    }
    if ((threadIdx.x & 31) == 0) {
      ((float*)(red_v + 0))[threadIdx.x >> 5] = acc2;
      ((float*)(red_v + 8))[threadIdx.x >> 5] = acc5;
      ((float*)(red_v + 16))[threadIdx.x >> 5] = acc7;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
      acc2 = threadIdx.x < (blockDim.x >> 5) ? ((float*)(red_v + 0))[threadIdx.x] : 0.0f;
      for (int d_ = 16; d_ > 0; d_ >>= 1) {
        float x_ = lf_shfl_down(acc2, d_);
        acc2 = acc2 + x_;
      }
      acc5 = threadIdx.x < (blockDim.x >> 5) ? ((float*)(red_v + 8))[threadIdx.x] : ((float)INFINITY);
      for (int d_ = 16; d_ > 0; d_ >>= 1) {
        float x_ = lf_shfl_down(acc5, d_);
        acc5 = lf_min<float>(acc5, x_);
      }
      acc7 = threadIdx.x < (blockDim.x >> 5) ? ((float*)(red_v + 16))[threadIdx.x] : (-(float)INFINITY);
      for (int d_ = 16; d_ > 0; d_ >>= 1) {
        float x_ = lf_shfl_down(acc7, d_);
        acc7 = lf_max<float>(acc7, x_);
      }
      if (threadIdx.x == 0) {
        ((float*)(red_v + 0))[0] = acc2;
        ((float*)(red_v + 8))[0] = acc5;
        ((float*)(red_v + 16))[0] = acc7;
      }
    }
    __syncthreads();
    acc2 = ((float*)(red_v + 0))[0];
    acc5 = ((float*)(red_v + 8))[0];
    acc7 = ((float*)(red_v + 16))[0];
    __syncthreads();
    const float v2 = acc2;
    const float v5 = acc5;
    const float v7 = acc7;
    const float v3 = ((float)(__longlong_as_double(q2)));
    const float v4 = (v2 / v3);
    const float v6 = lf_max<float>(v4, v5);
    const float v8 = lf_min<float>(v6, v7);
    float acc11 = 0.0f;
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
      const float v9 = (v1 - v8);
      const float v10 = (v9 * v9);
      acc11 = acc11 + v10;
    }
    for (int d_ = 16; d_ > 0; d_ >>= 1) {
      float x_ = lf_shfl_down(acc11, d_);
      acc11 = acc11 + x_;
    }
    if ((threadIdx.x & 31) == 0) { ((float*)red_v)[threadIdx.x >> 5] = acc11; }
    __syncthreads();
    if (threadIdx.x < 32) {
      acc11 = threadIdx.x < (blockDim.x >> 5) ? ((float*)red_v)[threadIdx.x] : 0.0f;
      for (int d_ = 16; d_ > 0; d_ >>= 1) {
        float x_ = lf_shfl_down(acc11, d_);
        acc11 = acc11 + x_;
      }
      if (threadIdx.x == 0) { ((float*)red_v)[0] = acc11; }
    }
    __syncthreads();
    acc11 = ((float*)red_v)[0];
    __syncthreads();
    const float v11 = acc11;
    const float v12 = (v11 / v3);
    const float v13 = ((float)(__longlong_as_double(q3)));
    const float v14 = (v12 + v13);
    const float v15 = (1.0f / sqrtf(v14));
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
      const float v9 = (v1 - v8);
      const float v16 = (v9 * v15);
      p2[e2] = v16;
    }
    __syncthreads();
  }
}
