// An existing Eigen program (a damped nonlinear oscillator per particle, stepped with
// semi-implicit Euler) whose hot loop moves onto LazyFuse by changing the loop body only: the
// state stays in the program's Eigen arrays, LazyFuse reads them in place (lf::from_eigen, no
// copy), runs the update as one fused kernel, and the body writes the results back.
//
//   build/lazyfuse-eigen-hot-loop [particles] [steps]
//
// It runs both bodies on the same start state and prints their times and largest difference.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <lazyfuse/eigen.h>
#include <lazyfuse/lazyfuse.h>

namespace {

constexpr float kDt = 0.01f, kStiffness = 4.0f, kDamping = 0.3f, kNonlinear = 0.5f;

struct State {
  Eigen::ArrayXf x, v;
};

State start(Eigen::Index n) {
  State s;
  s.x = Eigen::ArrayXf::LinSpaced(n, -2.0f, 2.0f);
  s.v = Eigen::ArrayXf::Zero(n);
  return s;
}

// The original loop, as the program had it.
void run_eigen(State& s, int steps) {
  for (int step = 0; step < steps; ++step) {
    Eigen::ArrayXf force = -kStiffness * s.x - kNonlinear * s.x.cube() - kDamping * s.v.tanh();
    s.v += kDt * force;
    s.x += kDt * s.v;
  }
}

// The same loop; only the body changed.
void run_lazyfuse(State& s, int steps) {
  for (int step = 0; step < steps; ++step) {
    lf::Tensor x = lf::from_eigen(s.x), v = lf::from_eigen(s.v);  // no copy
    lf::Tensor force = -kStiffness * x - kNonlinear * x * x * x - kDamping * lf::tanh(v);
    lf::Tensor v_next = v + kDt * force;
    lf::Tensor x_next = x + kDt * v_next;
    lf::sync();  // one fused pass computes both; nothing reads s.x or s.v after this
    s.v = lf::as_eigen<float>(v_next);
    s.x = lf::as_eigen<float>(x_next);
  }
}

double seconds_of(void (*run)(State&, int), State& s, int steps) {
  auto t0 = std::chrono::steady_clock::now();
  run(s, steps);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const Eigen::Index n = argc > 1 ? std::atol(argv[1]) : (1 << 20);
  const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
  if (n <= 0 || steps <= 0) {
    std::fprintf(stderr, "usage: %s [particles > 0] [steps > 0]\n", argv[0]);
    return 2;
  }
  State warm = start(n);
  run_lazyfuse(warm, 2);  // compiles (or loads) the kernel once
  State a = start(n), b = start(n);
  const double eigen_s = seconds_of(run_eigen, a, steps);
  const double lf_s = seconds_of(run_lazyfuse, b, steps);
  const float diff = (a.x - b.x).abs().maxCoeff();
  std::printf("%ld particles, %d steps: Eigen %.1f ms, LazyFuse %.1f ms; largest difference in x %.3g\n",
              static_cast<long>(n), steps, eigen_s * 1e3, lf_s * 1e3, static_cast<double>(diff));
  return diff < 1e-3f ? 0 : 1;
}
