// How long NVRTC takes over the kernels of the GPU benchmark, with the emit options the H100 host
// picks for the large sizes, under several sets of NVRTC options. Every compile appends a device
// function of its own (a nonce), because NVRTC on the H100 machine caches programs across
// processes and an unchanged source would measure that cache. Needs NVRTC, no GPU. Built by hand
// against the build tree (it uses internal headers):
//   g++ -std=c++20 -O2 -I. -Iinclude bench/experiments/nvrtc_time.cpp -Lbuild -llazyfuse \
//       -Wl,-rpath,$PWD/build -ldl -o /tmp/nvrtc_time && /tmp/nvrtc_time [repeats]
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/cuda/emit.h"
#include "codegen/fuse/fuser.h"
#include "codegen/fuse/lower.h"

namespace {

using lf::Tensor;

struct Nvrtc {
  int (*create)(void**, const char*, const char*, int, const char* const*, const char* const*);
  int (*compile)(void*, int, const char* const*);
  int (*log_size)(void*, size_t*);
  int (*log)(void*, char*);
  int (*destroy)(void**);
};

Nvrtc load_nvrtc() {
  void* lib = nullptr;
  for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so.13"})
    if ((lib = dlopen(name, RTLD_NOW))) break;
  if (!lib) {
    std::fprintf(stderr, "no libnvrtc\n");
    std::exit(1);
  }
  Nvrtc n;
  n.create = reinterpret_cast<decltype(n.create)>(dlsym(lib, "nvrtcCreateProgram"));
  n.compile = reinterpret_cast<decltype(n.compile)>(dlsym(lib, "nvrtcCompileProgram"));
  n.log_size = reinterpret_cast<decltype(n.log_size)>(dlsym(lib, "nvrtcGetProgramLogSize"));
  n.log = reinterpret_cast<decltype(n.log)>(dlsym(lib, "nvrtcGetProgramLog"));
  n.destroy = reinterpret_cast<decltype(n.destroy)>(dlsym(lib, "nvrtcDestroyProgram"));
  return n;
}

// The source of the (single) kernel group behind `t`, with `opt`.
std::string source_of(const Tensor& t, lf::cuda::EmitOptions opt) {
  std::vector<lf::ir::Node*> roots{t.node().get()};
  auto order = lf::ir::topo_order(roots);
  auto p = lf::fuse::partition(order, [&](const lf::ir::Node& n) { return &n == roots[0]; }, true);
  auto low = lf::lower::lower_group(p.groups.at(0), p, 0, lf::Device::cpu());
  if (!low.kernel.row) opt.row_cache = 0, opt.row_full = false;
  return lf::cuda::emit_cuda(low.kernel, "k", opt);
}

Tensor input(lf::Shape shape) {
  Tensor x = lf::randn(shape);
  lf::sync();
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = argc > 1 ? std::atoi(argv[1]) : 3;
  Nvrtc nv = load_nvrtc();
  // Small shapes: the source depends on the structure, not the sizes; the options below are what
  // the host picks for the benchmark's large sizes (4096-wide rows: 16 cached elements a thread).
  lf::cuda::EmitOptions pointwise, row16, stream;
  pointwise.vec4 = true;
  row16.row_cache = 16;
  row16.row_full = true;
  stream.vec4 = true;
  struct Work {
    const char* name;
    std::function<Tensor()> make;
    lf::cuda::EmitOptions opt;
  };
  auto chain = [] { Tensor x = input({1024}); return lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3; };
  auto black_scholes = [] {
    Tensor s = input({1024}) * 10 + 100, k = input({1024}) * 10 + 100, t = lf::abs(input({1024})) + 0.5;
    const float r = 0.02f, v = 0.3f;
    Tensor d1 = (lf::log(s / k) + (r + 0.5f * v * v) * t) / (v * lf::sqrt(t));
    Tensor d2 = d1 - v * lf::sqrt(t);
    auto cdf = [](const Tensor& x) { return 0.5f * (1.0f + lf::erf(x * 0.70710678f)); };
    Tensor call = s * cdf(d1) - k * lf::exp(-r * t) * cdf(d2);
    Tensor put = k * lf::exp(-r * t) * cdf(-d2) - s * cdf(-d1);
    return call + put;  // one output keeps this a single group; the kernel computes both
  };
  // "scalar access": one element a thread instead of 16-byte vectors of 4 (tried for math-heavy
  // pointwise kernels: it compiles faster and runs slower, bench/RESULTS.md).
  std::vector<Work> works = {
      {"chain", chain, pointwise},
      {"gelu(x+b)", [] { return lf::gelu(input({16, 64}) + input({64})); }, pointwise},
      {"softmax", [] { return lf::softmax(input({16, 64}), -1); }, row16},
      {"layer_norm(x+r)", [] { return lf::layer_norm(input({16, 64}) + input({16, 64}), 1); }, row16},
      {"standardize", [] { Tensor x = input({16, 64}); return (x - x.mean({1}, true)) / (x.std({1}, true) + 1e-5); }, row16},
      {"sum(x*x)", [] { Tensor x = input({1 << 12}); return lf::sum(x * x); }, stream},
      {"black_scholes", black_scholes, pointwise},
      {"black_scholes, scalar access", black_scholes, lf::cuda::EmitOptions{}},
      {"chain, scalar access", chain, lf::cuda::EmitOptions{}},
  };
  struct Flags {
    const char* name;
    std::vector<const char*> extra;
  };
  std::vector<Flags> flag_sets = {
      {"-minimal (optimized build)", {"-minimal"}},
      {"--Ofast-compile=mid (quick build)", {"-minimal", "--Ofast-compile=mid"}},
      {"--Ofast-compile=max", {"-minimal", "--Ofast-compile=max"}},
      {"mid, -Xptxas -O1", {"-minimal", "--Ofast-compile=mid", "--ptxas-options=-O1"}},
  };
  std::printf("| kernel | source bytes |");
  for (const Flags& f : flag_sets) std::printf(" %s ms |", f.name);
  std::printf("\n|---|---|");
  for (size_t i = 0; i < flag_sets.size(); ++i) std::printf("---|");
  std::printf("\n");
  static int nonce = 0;
  for (const Work& w : works) {
    std::string src = source_of(w.make(), w.opt);
    std::printf("| %s | %zu |", w.name, src.size());
    for (const Flags& f : flag_sets) {
      std::vector<double> ms;
      for (int r = 0; r < repeats; ++r) {
        std::string unique = src + "\n__device__ int lf_nonce_" + std::to_string(getpid()) + "_" +
                             std::to_string(++nonce) + "() { return " + std::to_string(nonce) + "; }\n";
        std::vector<const char*> opts = {"--gpu-architecture=sm_90", "-std=c++17", "-default-device", "--restrict"};
        opts.insert(opts.end(), f.extra.begin(), f.extra.end());
        void* prog = nullptr;
        nv.create(&prog, unique.c_str(), "k.cu", 0, nullptr, nullptr);
        auto start = std::chrono::steady_clock::now();
        int rc = nv.compile(prog, static_cast<int>(opts.size()), opts.data());
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        if (rc != 0) {
          size_t n = 0;
          nv.log_size(prog, &n);
          std::string log(n, '\0');
          nv.log(prog, log.data());
          std::fprintf(stderr, "%s with %s failed (%d): %s\n", w.name, f.name, rc, log.c_str());
          ms.back() = -1;
        }
        nv.destroy(&prog);
      }
      std::sort(ms.begin(), ms.end());
      std::printf(" %.0f |", ms[ms.size() / 2]);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
}
