struct Meta { i64 v[14]; };
struct Ptrs { void* p[3]; };
struct Scratch { void* partial; void* partial_index; unsigned* counters; };
extern "C" __global__ void __launch_bounds__(256) pointwise_broadcast(const Meta meta, const Ptrs ptrs, const Scratch scratch) {
  const int n0 = (int)meta.v[0];
  const int n1 = (int)meta.v[1];
  const int off0 = (int)meta.v[2];
  const int s0_0 = (int)meta.v[3];
  const float* __restrict__ p0 = (const float*)ptrs.p[0];
  const int off1 = (int)meta.v[5];
  const float* __restrict__ p1 = (const float*)ptrs.p[1];
  const int off2 = (int)meta.v[8];
  const int s2_0 = (int)meta.v[9];
  float* __restrict__ p2 = (float*)ptrs.p[2];
  const i64 q0 = meta.v[11];
  int rows = 1 * n0;
  const int cols4 = n1 / 4;
  const int total = rows * cols4;
  for (i64 t64 = (i64)blockIdx.x * blockDim.x + threadIdx.x; t64 < total; t64 += (i64)gridDim.x * blockDim.x) {
    const int t = (int)t64;
    const int row = t / cols4, col = (t - row * cols4) * 4;
    int rest_ = row;
    int o0 = rest_;
    (void)rest_;
    int b0 = off0 + o0 * s0_0;
    int b1 = off1;
    int b2 = off2 + o0 * s2_0;
    const int eb0 = b0 + col;
    const float4 L0v = *(const float4*)(p0 + eb0);
    const float L0[4] = {L0v.x, L0v.y, L0v.z, L0v.w};
    const int eb1 = b1 + col;
    const float4 L1v = *(const float4*)(p1 + eb1);
    const float L1[4] = {L1v.x, L1v.y, L1v.z, L1v.w};
    const int eb2 = b2 + col;
    float R2[4];
    #pragma unroll
    for (int u_ = 0; u_ < 4; ++u_) {
      const int e0 = eb0 + u_;
      const int e1 = eb1 + u_;
      const int e2 = eb2 + u_;
      const float v0 = L0[u_];
      const float v1 = ((float)(__longlong_as_double(q0)));
      const float v2 = (v0 * v1);
      const float v3 = L1[u_];
      const float v4 = (v2 + v3);
      const float v5 = (v4 < 0.0f ? 0.0f : v4);
      R2[u_] = v5;
    }
    *(float4*)(p2 + eb2) = make_float4(R2[0], R2[1], R2[2], R2[3]);
  }
}
