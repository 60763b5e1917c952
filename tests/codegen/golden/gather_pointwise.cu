struct Meta { i64 v[21]; };
struct Ptrs { void* p[4]; };
struct Scratch { void* partial; void* partial_index; unsigned* counters; };
extern "C" __global__ void __launch_bounds__(256) gather_pointwise(const Meta meta, const Ptrs ptrs, const Scratch scratch) {
  const int n0 = (int)meta.v[0];
  const int n1 = (int)meta.v[1];
  const int off0 = (int)meta.v[2];
  const int s0_0 = (int)meta.v[3];
  const int* __restrict__ p0 = (const int*)ptrs.p[0];
  const int off1 = (int)meta.v[5];
  const int s1_0 = (int)meta.v[6];
  const float* __restrict__ p1 = (const float*)ptrs.p[1];
  const int off2 = (int)meta.v[8];
  i64* __restrict__ p2 = (i64*)ptrs.p[2];
  const int off3 = (int)meta.v[11];
  const int s3_0 = (int)meta.v[12];
  float* __restrict__ p3 = (float*)ptrs.p[3];
  const i64 q0 = meta.v[14];
  const i64 q1 = meta.v[15];
  const i64 q2 = meta.v[16];
  const i64 q3 = meta.v[17];
  const i64 q4 = meta.v[18];
  const i64 dw1 = meta.v[20];
  int rows = 1 * n0;
  const int total = rows * n1;
  for (i64 t64 = (i64)blockIdx.x * blockDim.x + threadIdx.x; t64 < total; t64 += (i64)gridDim.x * blockDim.x) {
    const int t = (int)t64;
    int row = lf_div(t, n1, dw1); int col = t - row * n1;
    int rest_ = row;
    int o0 = rest_;
    (void)rest_;
    int b0 = off0 + o0 * s0_0;
    int b1 = off1 + o0 * s1_0;
    int b2 = off2;
    int b3 = off3 + o0 * s3_0;
    int e0 = b0 + col;
    int e1 = b1;
    int e2 = b2;
    int e3 = b3 + col;
    const int v0 = __ldg(&p0[e0]);
    const int v1 = ((int)(q0));
    const int v2 = ((int)((unsigned)v0 * (unsigned)v1));
    const float v3 = ([&]{ const i64 r_ = (i64)(v2); i64 i_ = r_ < 0 ? r_ + q1 : r_; if ((unsigned long long)i_ >= (unsigned long long)q1) { p2[0] = q3; p2[1] = r_; i_ = 0; } return __ldg(&p1[(e1 + i_ * q2)]); }());
    const float v4 = ((float)(__longlong_as_double(q4)));
    const float v5 = (v3 * v4);
    p3[e3] = v5;
  }
}
