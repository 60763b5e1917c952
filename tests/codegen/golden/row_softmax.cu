struct Meta { i64 v[10]; };
struct Ptrs { void* p[2]; };
struct Scratch { void* partial; void* partial_index; unsigned* counters; };
extern "C" __global__ void __launch_bounds__(256) row_softmax(const Meta meta, const Ptrs ptrs, const Scratch scratch) {
  const int n0 = (int)meta.v[0];
  const int n1 = (int)meta.v[1];
  const int off0 = (int)meta.v[2];
  const int s0_0 = (int)meta.v[3];
  const float* __restrict__ p0 = (const float*)ptrs.p[0];
  const int off1 = (int)meta.v[5];
  const int s1_0 = (int)meta.v[6];
  float* __restrict__ p1 = (float*)ptrs.p[1];
  __shared__ double red_v[8];
  __shared__ i64 red_i[8];
  __shared__ bool last_block;
  int rows = 1 * n0;
  int inner = 1 * n1;
  const int seg_lo = gridDim.y == 1 ? 0 : (int)(((i64)inner * blockIdx.y) / gridDim.y);
  const int seg_hi = gridDim.y == 1 ? inner : (int)(((i64)inner * (blockIdx.y + 1)) / gridDim.y);
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    int rest_ = row;
    int o0 = rest_;
    (void)rest_;
    int b0 = off0 + o0 * s0_0;
    int b1 = off1 + o0 * s1_0;
    float c0[4];
    #pragma unroll
    for (int k_ = 0; k_ < 4; ++k_) {
      const i64 j64 = (i64)threadIdx.x + (i64)k_ * 256;
      if (j64 >= inner) break;
      const int j = (int)j64;
      int e0 = b0 + j;
      int e1 = b1 + j;
      c0[k_] = __ldg(&p0[e0]);
    }
    float acc1 = (-(float)INFINITY);
    #pragma unroll
    for (int k_ = 0; k_ < 4; ++k_) {
      const i64 j64 = (i64)threadIdx.x + (i64)k_ * 256;
      if (j64 >= seg_hi) break;
      const int j = (int)j64;
      int e0 = b0 + j;
      int e1 = b1 + j;
      const float v0 = c0[k_];
      acc1 = lf_max<float>(acc1, v0);
    }
    for (int d_ = 16; d_ > 0; d_ >>= 1) {
      float x_ = lf_shfl_down(acc1, d_);
      acc1 = lf_max<float>(acc1, x_);
    }
    if ((threadIdx.x & 31) == 0) { ((float*)red_v)[threadIdx.x >> 5] = acc1; }
    __syncthreads();
    if (threadIdx.x < 32) {
      acc1 = threadIdx.x < (blockDim.x >> 5) ? ((float*)red_v)[threadIdx.x] : (-(float)INFINITY);
      for (int d_ = 16; d_ > 0; d_ >>= 1) {
        float x_ = lf_shfl_down(acc1, d_);
        acc1 = lf_max<float>(acc1, x_);
      }
      if (threadIdx.x == 0) { ((float*)red_v)[0] = acc1; }
    }
    __syncthreads();
    acc1 = ((float*)red_v)[0];
    __syncthreads();
    const float v1 = acc1;
    float acc4 = 0.0f;
    #pragma unroll
    for (int k_ = 0; k_ < 4; ++k_) {
      const i64 j64 = (i64)threadIdx.x + (i64)k_ * 256;
      if (j64 >= seg_hi) break;
      const int j = (int)j64;
      int e0 = b0 + j;
      int e1 = b1 + j;
      const float v0 = c0[k_];
      const float v2 = (v0 - v1);
      const float v3 = expf(v2);
      acc4 = acc4 + v3;
    }
    for (int d_ = 16; d_ > 0; d_ >>= 1) {
      float x_ = lf_shfl_down(acc4, d_);
      acc4 = acc4 + x_;
    }
    if ((threadIdx.x & 31) == 0) { ((float*)red_v)[threadIdx.x >> 5] = acc4; }
    __syncthreads();
    if (threadIdx.x < 32) {
      acc4 = threadIdx.x < (blockDim.x >> 5) ? ((float*)red_v)[threadIdx.x] : 0.0f;
      for (int d_ = 16; d_ > 0; d_ >>= 1) {
        float x_ = lf_shfl_down(acc4, d_);
        acc4 = acc4 + x_;
      }
      if (threadIdx.x == 0) { ((float*)red_v)[0] = acc4; }
    }
    __syncthreads();
    acc4 = ((float*)red_v)[0];
    __syncthreads();
    const float v4 = acc4;
    #pragma unroll
    for (int k_ = 0; k_ < 4; ++k_) {
      const i64 j64 = (i64)threadIdx.x + (i64)k_ * 256;
      if (j64 >= inner) break;
      const int j = (int)j64;
      int e0 = b0 + j;
      int e1 = b1 + j;
      const float v0 = c0[k_];
      const float v2 = (v0 - v1);
      const float v3 = expf(v2);
      const float v5 = (v3 / v4);
      p1[e1] = v5;
    }
    __syncthreads();
  }
}
