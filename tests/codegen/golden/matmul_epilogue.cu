struct Meta { i64 v[16]; };
struct Ptrs { void* p[4]; };
struct Scratch { void* partial; void* partial_index; unsigned* counters; };
struct Gemm { const void* a; const void* b; i64 m, n, k, a_off, a_sm, a_sk, b_off, b_sk, b_sn, batch_rank; i64 batch[4], a_bs[4], b_bs[4]; };
extern "C" __global__ void __launch_bounds__(256) matmul_epilogue(const Meta meta, const Ptrs ptrs, const Scratch scratch, const Gemm g) {
  const int n0 = (int)meta.v[0];
  const int n1 = (int)meta.v[1];
  const int off0 = (int)meta.v[2];
  const int s0_0 = (int)meta.v[3];
  const float* __restrict__ p0 = (const float*)ptrs.p[0];
  const int off1 = (int)meta.v[5];
  const float* __restrict__ p1 = (const float*)ptrs.p[1];
  const int off2 = (int)meta.v[8];
  const int s2_0 = (int)meta.v[9];
  const float* __restrict__ p2 = (const float*)ptrs.p[2];
  const int off3 = (int)meta.v[11];
  const int s3_0 = (int)meta.v[12];
  float* __restrict__ p3 = (float*)ptrs.p[3];
  __shared__ float As_[8][128], Bs_[8][128];
  const int tx_ = threadIdx.x % 16, ty_ = threadIdx.x / 16;
  const i64 bb_ = blockIdx.z, m0_ = (i64)blockIdx.y * 128, n0_ = (i64)blockIdx.x * 128;
  i64 ab_ = g.a_off, bb0_ = g.b_off;
  { i64 r_ = bb_; for (int d_ = (int)g.batch_rank - 1; d_ >= 0; --d_) { i64 i_ = r_ % g.batch[d_]; r_ /= g.batch[d_]; ab_ += i_ * g.a_bs[d_]; bb0_ += i_ * g.b_bs[d_]; } }
  const float* __restrict__ A_ = (const float*)g.a;
  const float* __restrict__ B_ = (const float*)g.b;
  float acc_[8][8];
  #pragma unroll
  for (int i = 0; i < 8; ++i)
    #pragma unroll
    for (int j = 0; j < 8; ++j) acc_[i][j] = 0;
  for (i64 k0_ = 0; k0_ < g.k; k0_ += 8) {
    #pragma unroll
    for (int l_ = 0; l_ < 4; ++l_) {
      const int t_ = threadIdx.x + 256 * l_;
      const int kk_ = t_ % 8, mm_ = t_ / 8;
      const i64 gm_ = m0_ + mm_, gk_ = k0_ + kk_;
      As_[kk_][mm_] = (gm_ < g.m && gk_ < g.k) ? (float)(A_[ab_ + gm_ * g.a_sm + gk_ * g.a_sk]) : (float)0;
      const int nn_ = t_ % 128, kb_ = t_ / 128;
      const i64 gn_ = n0_ + nn_, gkb_ = k0_ + kb_;
      Bs_[kb_][nn_] = (gn_ < g.n && gkb_ < g.k) ? (float)(B_[bb0_ + gkb_ * g.b_sk + gn_ * g.b_sn]) : (float)0;
    }
    __syncthreads();
    #pragma unroll
    for (int kk_ = 0; kk_ < 8; ++kk_) {
      float a_[8], b_[8];
      #pragma unroll
      for (int i = 0; i < 8; ++i) a_[i] = As_[kk_][ty_ + 16 * i];
      #pragma unroll
      for (int j = 0; j < 8; ++j) b_[j] = Bs_[kk_][tx_ + 16 * j];
      #pragma unroll
      for (int i = 0; i < 8; ++i)
        #pragma unroll
        for (int j = 0; j < 8; ++j) acc_[i][j] += a_[i] * b_[j];
    }
    __syncthreads();
  }
  #pragma unroll
  for (int ii_ = 0; ii_ < 8; ++ii_) {
    const i64 i64_ = m0_ + ty_ + 16 * ii_;
    if (i64_ >= g.m) continue;
    const int row = (int)(bb_ * g.m + i64_);
    int rest_ = row;
    int o0 = rest_;
    (void)rest_;
    int b0 = off0 + o0 * s0_0;
    int b1 = off1;
    int b2 = off2 + o0 * s2_0;
    int b3 = off3 + o0 * s3_0;
    #pragma unroll
    for (int jj_ = 0; jj_ < 8; ++jj_) {
      const i64 j64_ = n0_ + tx_ + 16 * jj_;
      if (j64_ >= g.n) continue;
      const int col = (int)j64_;
      const float mmv_ = acc_[ii_][jj_];
      int e0 = b0 + col;
      int e1 = b1 + col;
      int e2 = b2 + col;
      int e3 = b3 + col;
      const float v0 = mmv_;
      const float v1 = __ldg(&p1[e1]);
      const float v2 = (v0 + v1);
      const float v3 = (0.5f * v2 * (1.0f + erff(v2 * 0.70710678118654757f)));
      const float v4 = __ldg(&p2[e2]);
      const float v5 = (v3 + v4);
      p3[e3] = v5;
    }
  }
}
