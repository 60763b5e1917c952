// The generated convolution and pooling kernels' CUDA C (codegen/cuda/conv_kernels.cpp, written out
// by codegen_tests with LAZYFUSE_GOLDEN_CUDA_DIR, the prelude cut off) run on the host through emu.h
// and compared with direct loops: float32 and float64 convolutions over strides, padding (also
// asymmetric), dilation, groups, depthwise, an NHWC input, 1x1, fewer grid planes than (image,
// group) pairs; float32 pooling of every kind with NaN and inf through a grid-stride loop. run.sh
// builds and runs it (a ctest test where a C++20 compiler is found).
#include "emu.h"

#include <algorithm>
#include <cstdio>
#include <random>

namespace f32 {
#include "conv2d_float32.inc"
}
#undef T
#undef ACC
#undef LD
#undef ST
namespace f32p {
#include "pool2d_float32.inc"
}
#undef T
#undef ACC
#undef LD
#undef ST
namespace f64 {
#include "conv2d_float64.inc"
}
#undef T
#undef ACC
#undef LD
#undef ST
// A convolution (padding per side, gz planes of the grid); check() runs the kernel on it and compares
// with direct loops in double. y starts at -777, so an element never written shows.
struct G { i64 N, C, H, W, O, KH, KW, sh, sw, pt, pb, pl, pr, dh, dw, G; bool nhwc; unsigned gz; };
template <class T, class Args, class K>
int check(const G& g, K kernel) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> u(-1, 1);
  i64 OH = (g.H + g.pt + g.pb - g.dh * (g.KH - 1) - 1) / g.sh + 1, OW = (g.W + g.pl + g.pr - g.dw * (g.KW - 1) - 1) / g.sw + 1;
  i64 Cg = g.C / g.G, Og = g.O / g.G;
  std::vector<T> x(g.N * g.C * g.H * g.W + 3), w(g.O * Cg * g.KH * g.KW + 5), y(g.N * g.O * OH * OW, T(-777));
  for (auto& v : x) v = T(u(rng));
  for (auto& v : w) v = T(u(rng));
  i64 sx[4];
  if (g.nhwc) { sx[0] = g.H * g.W * g.C; sx[1] = 1; sx[2] = g.W * g.C; sx[3] = g.C; }
  else { sx[0] = g.C * g.H * g.W; sx[1] = g.H * g.W; sx[2] = g.W; sx[3] = 1; }
  Args a{x.data(), w.data(), y.data(), 3, 5, {sx[0], sx[1], sx[2], sx[3]}, g.N, g.C, g.H, g.W, g.O, g.KH, g.KW, OH, OW, g.G, g.sh, g.sw, g.pt, g.pl, g.dh, g.dw};
  dim3 grid{unsigned((OH * OW + 63) / 64), unsigned((Og + 63) / 64), g.gz};
  run(kernel, grid, 256, a);
  double worst = 0;
  for (i64 n = 0; n < g.N; ++n) for (i64 o = 0; o < g.O; ++o) for (i64 oh = 0; oh < OH; ++oh) for (i64 ow = 0; ow < OW; ++ow) {
    i64 gg = o / Og; double acc = 0;
    for (i64 c = 0; c < Cg; ++c) for (i64 i = 0; i < g.KH; ++i) for (i64 j = 0; j < g.KW; ++j) {
      i64 h = oh * g.sh - g.pt + i * g.dh, q = ow * g.sw - g.pl + j * g.dw;
      if (h < 0 || h >= g.H || q < 0 || q >= g.W) continue;
      acc += double(x[3 + n * sx[0] + (gg * Cg + c) * sx[1] + h * sx[2] + q * sx[3]]) * double(w[5 + ((o * Cg + c) * g.KH + i) * g.KW + j]);
    }
    worst = std::max(worst, std::fabs(acc - double(y[((n * g.O + o) * OH + oh) * OW + ow])));
  }
  std::printf("N%lld C%lld %lldx%lld O%lld k%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld d%lld,%lld g%lld nhwc%d gz%u -> %lldx%lld: max err %.3g\n",
              g.N, g.C, g.H, g.W, g.O, g.KH, g.KW, g.sh, g.sw, g.pt, g.pb, g.pl, g.pr, g.dh, g.dw, g.G, g.nhwc, g.gz, OH, OW, worst);
  return worst < (sizeof(T) == 4 ? 1e-4 : 1e-12) ? 0 : 1;
}
int conv_main() {
  std::vector<G> gs = {
    {2, 8, 9, 11, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, 2},
    {3, 6, 13, 10, 12, 3, 2, 2, 1, 2, 2, 0, 0, 1, 2, 2, false, 2},   // groups 2, strides, dilation, z loop
    {2, 4, 20, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, true, 3},     // depthwise, NHWC
    {1, 20, 12, 12, 66, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, false, 1},  // 1x1, k = 20 (two k slices)
    {2, 3, 8, 8, 4, 4, 4, 1, 1, 1, 2, 1, 2, 1, 1, 1, false, 2},      // asymmetric "same"
  };
  int bad = 0;
  for (auto& g : gs) bad += check<float, f32::ConvArgs>(g, f32::lf_conv2d_float32);
  for (auto& g : gs) bad += check<double, f64::ConvArgs>(g, f64::lf_conv2d_float64);
  std::printf("%d failures\n", bad);
  return bad;
}

struct P { i64 kind, kh, kw, sh, sw, ph, pw, incl; i64 OH, OW; };
int pool_main() {
  i64 N = 2, C = 3, H = 9, W = 8;
  std::mt19937 rng(1); std::uniform_real_distribution<double> u(-1, 1);
  std::vector<float> x(N * C * H * W + 2);
  for (auto& v : x) v = u(rng);
  x[2 + 17] = NAN; x[2 + 100] = INFINITY; x[2 + 200] = -INFINITY;
  // NHWC strides
  i64 sx[4] = {H * W * C, 1, W * C, C};
  std::vector<P> ps = {{0, 3, 3, 2, 2, 1, 1, 1, 5, 4}, {0, 2, 2, 2, 2, 0, 0, 1, 5, 4}, {1, 3, 3, 2, 2, 1, 1, 1, 5, 4},
                       {1, 3, 3, 2, 2, 1, 1, 0, 5, 5}, {2, 0, 0, 0, 0, 0, 0, 0, 4, 3}, {2, 0, 0, 0, 0, 0, 0, 0, 9, 8}, {1, 2, 2, 2, 2, 1, 1, 0, 6, 5}};
  int bad = 0;
  for (auto& p : ps) {
    i64 total = N * C * p.OH * p.OW;
    std::vector<float> y(total, -777);
    f32p::PoolArgs a{x.data(), y.data(), 2, {sx[0], sx[1], sx[2], sx[3]}, C, H, W, p.OH, p.OW, total, p.kind, p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.incl};
    run(f32p::lf_pool2d_float32, dim3{2, 1, 1}, 32, a);  // a grid-stride loop: 64 threads for all outputs
    double worst = 0; int nanmis = 0;
    for (i64 e = 0; e < total; ++e) {
      i64 ow = e % p.OW, oh = (e / p.OW) % p.OH, pl = e / (p.OW * p.OH), n = pl / C, c = pl % C;
      i64 h0, h1, w0, w1;
      if (p.kind == 2) { h0 = oh * H / p.OH; h1 = ((oh + 1) * H + p.OH - 1) / p.OH; w0 = ow * W / p.OW; w1 = ((ow + 1) * W + p.OW - 1) / p.OW; }
      else { h0 = oh * p.sh - p.ph; w0 = ow * p.sw - p.pw; h1 = h0 + p.kh; w1 = w0 + p.kw; }
      i64 padded = (std::min(h1, H + p.ph) - h0) * (std::min(w1, W + p.pw) - w0);
      h0 = std::max<i64>(h0, 0); w0 = std::max<i64>(w0, 0); h1 = std::min(h1, H); w1 = std::min(w1, W);
      double acc = p.kind == 0 ? -INFINITY : 0;
      for (i64 h = h0; h < h1; ++h) for (i64 q = w0; q < w1; ++q) {
        double v = x[2 + n * sx[0] + c * sx[1] + h * sx[2] + q * sx[3]];
        if (p.kind) acc += v; else if (v > acc || std::isnan(v)) acc = std::isnan(acc) ? acc : v;
      }
      if (p.kind == 1) acc /= double(p.incl ? padded : (h1 - h0) * (w1 - w0)); else if (p.kind == 2) acc /= double((h1 - h0) * (w1 - w0));
      if (std::isnan(acc) != std::isnan(y[e]) || (std::isinf(acc) && acc != y[e])) { ++nanmis; continue; }
      if (std::isfinite(acc)) worst = std::max(worst, std::fabs(acc - y[e]));
    }
    std::printf("kind %lld k%lld s%lld p%lld incl%lld -> %lldx%lld: max err %.3g, special mismatches %d\n", p.kind, p.kh, p.sh, p.ph, p.incl, p.OH, p.OW, worst, nanmis);
    bad += worst > 1e-6 || nanmis;
  }
  std::printf("%d failures\n", bad);
  return bad;
}

int main() { return conv_main() + pool_main() ? 1 : 0; }
