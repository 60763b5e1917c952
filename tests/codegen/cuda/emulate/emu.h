// Just enough of CUDA to run a generated kernel's CUDA C on the host: a block is `threads`
// std::threads with a std::barrier for __syncthreads, blocks one after another (so a function's
// static locals stand for __shared__ memory). For checking the logic of the generated convolution
// and pooling kernels where there is no GPU (run.sh); nothing about speed or the GPU's arithmetic.
#pragma once

#include <barrier>
#include <cmath>
#include <thread>
#include <vector>

typedef long long i64;
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 gridDim, blockDim;
inline std::barrier<>* g_bar;
#define __global__
#define __launch_bounds__(n)
#define __restrict__
#define __shared__ static
#define __syncthreads() g_bar->arrive_and_wait()

template <class Args>
void run(void (*kernel)(Args), dim3 grid, unsigned threads, Args a) {
  gridDim = grid;
  blockDim = {threads, 1, 1};
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        std::barrier<> bar(threads);
        g_bar = &bar;
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < threads; ++t)
          ts.emplace_back([&, t] {
            threadIdx = {t, 0, 0};
            blockIdx = {x, y, z};
            kernel(a);
          });
        for (auto& th : ts) th.join();
      }
}
