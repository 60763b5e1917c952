struct Meta { i64 v[13]; };
struct Ptrs { void* p[3]; };
struct Scratch { void* partial; void* partial_index; unsigned* counters; };
extern "C" __global__ void __launch_bounds__(256) int_arange_exact(const Meta meta, const Ptrs ptrs, const Scratch scratch) {
  const int n0 = (int)meta.v[0];
  const int off0 = (int)meta.v[1];
  const int off1 = (int)meta.v[3];
  const int off2 = (int)meta.v[5];
  i64* __restrict__ p2 = (i64*)ptrs.p[2];
  const i64 q0 = meta.v[7];
  const i64 q1 = meta.v[8];
  const i64 q2 = meta.v[9];
  const i64 q3 = meta.v[10];
  const i64 q4 = meta.v[11];
  int rows = 1;
  const int total = rows * n0;
  for (i64 t64 = (i64)blockIdx.x * blockDim.x + threadIdx.x; t64 < total; t64 += (i64)gridDim.x * blockDim.x) {
    const int t = (int)t64;
    const int row = 0, col = t;
    int rest_ = row;
    (void)rest_;
    int b0 = off0;
    int b1 = off1;
    int b2 = off2;
    int e0 = b0 + col;
    int e1 = b1 + col;
    int e2 = b2 + col;
    const i64 v0 = ([&]{ double s_ = __longlong_as_double(q0), t_ = __longlong_as_double(q1); return lf_integral(s_) && lf_integral(t_) ? (i64)((u64)(i64)s_ + (u64)(e0) * (u64)(i64)t_) : ([&]{ auto f_ = (s_ + (double)(e0) * t_); return f_ != f_ ? (i64)0 : (i64)f_; }()); }());
    const int v1_ = ((int)q2);
    const i64 v1 = v1_;
    const i64 v2 = ((i64)((u64)v0 * (u64)v1));
    const int v3 = ([&]{ double s_ = __longlong_as_double(q3), t_ = __longlong_as_double(q4); return lf_integral(s_) && lf_integral(t_) ? ((int)((i64)((u64)(i64)s_ + (u64)(e1) * (u64)(i64)t_))) : ([&]{ auto f_ = (s_ + (double)(e1) * t_); return f_ != f_ ? (int)0 : (int)f_; }()); }());
    const int v4_ = ((int)(v3));
    const i64 v4 = v4_;
    const i64 v5 = ((i64)((u64)v2 + (u64)v4));
    p2[e2] = v5;
  }
}
