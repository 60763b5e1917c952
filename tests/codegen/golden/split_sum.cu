struct Meta { i64 v[6]; };
struct Ptrs { void* p[2]; };
struct Scratch { void* partial; void* partial_index; unsigned* counters; };
extern "C" __global__ void __launch_bounds__(256) split_sum(const Meta meta, const Ptrs ptrs, const Scratch scratch) {
  const int n0 = (int)meta.v[0];
  const int off0 = (int)meta.v[1];
  const float* __restrict__ p0 = (const float*)ptrs.p[0];
  const int off1 = (int)meta.v[3];
  float* __restrict__ p1 = (float*)ptrs.p[1];
  __shared__ double red_v[8];
  __shared__ i64 red_i[8];
  __shared__ bool last_block;
  int rows = 1;
  int inner = 1 * n0;
  const int seg_lo = gridDim.y == 1 ? 0 : 4 * (int)(((i64)(inner / 4) * blockIdx.y) / gridDim.y);
  const int seg_hi = gridDim.y == 1 ? inner : 4 * (int)(((i64)(inner / 4) * (blockIdx.y + 1)) / gridDim.y);
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    int rest_ = row;
    (void)rest_;
    int b0 = off0;
    int b1 = off1;
    float acc2 = 0.0f;
    {
      i64 jb_ = seg_lo + 4 * (i64)threadIdx.x;
      for (; jb_ + 12 * (i64)blockDim.x < seg_hi; jb_ += 16 * (i64)blockDim.x) {
        float L0[4][4];
        #pragma unroll
        for (int g_ = 0; g_ < 4; ++g_) {
          const float4 t_ = __ldg((const float4*)(p0 + b0 + jb_ + g_ * 4 * (i64)blockDim.x));
          L0[g_][0] = t_.x; L0[g_][1] = t_.y; L0[g_][2] = t_.z; L0[g_][3] = t_.w;
        }
        #pragma unroll
        for (int g_ = 0; g_ < 4; ++g_) {
          #pragma unroll
          for (int u_ = 0; u_ < 4; ++u_) {
            const i64 j64 = jb_ + g_ * 4 * (i64)blockDim.x + u_;
            const int j = (int)j64;
            int e0 = b0 + j;
            int e1 = b1;
            const float v0 = L0[g_][u_];
            const float v1 = (v0 * v0);
            acc2 = acc2 + v1;
          }
        }
      }
      for (; jb_ < seg_hi; jb_ += 4 * (i64)blockDim.x) {
        float L0[1][4];
        {
          const int g_ = 0;
          const float4 t_ = __ldg((const float4*)(p0 + b0 + jb_ + g_ * 4 * (i64)blockDim.x));
          L0[g_][0] = t_.x; L0[g_][1] = t_.y; L0[g_][2] = t_.z; L0[g_][3] = t_.w;
        }
        #pragma unroll
        for (int g_ = 0; g_ < 1; ++g_) {
          #pragma unroll
          for (int u_ = 0; u_ < 4; ++u_) {
            const i64 j64 = jb_ + g_ * 4 * (i64)blockDim.x + u_;
            const int j = (int)j64;
            int e0 = b0 + j;
            int e1 = b1;
            const float v0 = L0[g_][u_];
            const float v1 = (v0 * v0);
            acc2 = acc2 + v1;
          }
        }
      }
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
    if (gridDim.y > 1) {
      float* part_ = (float*)scratch.partial;
      i64* parti_ = (i64*)scratch.partial_index;
      if (threadIdx.x == 0) {
        part_[(i64)row * gridDim.y + blockIdx.y] = acc2;
        __threadfence();
        unsigned done_ = atomicAdd(&scratch.counters[row], 1u);
        last_block = done_ == gridDim.y - 1;
      }
      __syncthreads();
      if (!last_block) continue;
      __threadfence();
      acc2 = 0.0f;
      for (unsigned s_ = threadIdx.x; s_ < gridDim.y; s_ += blockDim.x) {
        float x_ = __ldcg(&part_[(i64)row * gridDim.y + s_]);
        acc2 = acc2 + x_;
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
      if (threadIdx.x == 0) scratch.counters[row] = 0;
    }
    const float v2 = acc2;
    if (threadIdx.x == 0) {
      p1[b1] = v2;
    }
    __syncthreads();
  }
}
