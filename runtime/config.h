// Every environment variable LazyFuse reads, read in this one place (README, "Environment").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lf::rt {

struct Config {
  std::optional<std::string> device;  // LAZYFUSE_DEVICE: "cpu" or "cuda[:N]"
  bool fusion = true;                 // LAZYFUSE_FUSION=0 runs every op as its own kernel
  int log_level = 0;                  // LAZYFUSE_LOG: 0 quiet, 1 flushes and groups, 2 also generated code
  int64_t trace_limit = 16384;        // LAZYFUSE_TRACE_LIMIT: pending nodes that force a flush
  bool flush_plans = true;            // LAZYFUSE_FLUSH_PLANS=0: fuse and lower every flush afresh
  int num_threads = 0;                // LAZYFUSE_NUM_THREADS: CPU worker threads (0: one per core)
  // LAZYFUSE_CACHE_DIR, else $XDG_CACHE_HOME/lazyfuse, else $HOME/.cache/lazyfuse; "off" (or no
  // home directory) leaves it empty: no persistent kernel cache.
  std::string cache_dir;
  uint64_t cache_max_bytes = uint64_t{1024} << 20;  // LAZYFUSE_CACHE_MAX_MB, least recently used go first
  std::string dump_dir;  // LAZYFUSE_DUMP_DIR: every compiled kernel's source is written here (empty: off)
  // LAZYFUSE_MATMUL: the GPU matmul path for groups with an epilogue: "auto" (a cost rule),
  // "cublaslt" (cuBLASLt plus an epilogue pass unless cuBLASLt declines) or "generated" (the
  // generated kernel with the epilogue inside whenever it can run it).
  std::string matmul = "auto";
  // LAZYFUSE_CONV: the convolution path: "auto" (the device's library where it is loaded and takes
  // the problem: cuDNN on a GPU, oneDNN on the CPU; else our own), "cudnn" or "onednn" (the same,
  // said explicitly) or "generated" (our own always: the generated NVRTC kernel on a GPU, im2col +
  // the packed GEMM on the CPU).
  std::string conv = "auto";
  // LAZYFUSE_LINALG: the linear-algebra path (lf::linalg): "auto" (cuSOLVER on a GPU; LAPACK through
  // dlopen on the host where it loads, else the reference), "host" (a GPU's too on the host: LAPACK,
  // else the reference) or "reference" (the plain C++ reference always; CI tests both).
  std::string linalg = "auto";
  // LAZYFUSE_FFT: the FFT path (lf::fft): "auto" (our host FFT, a GPU's too: cuFFT is not wired
  // yet) or "reference" (the O(n^2) DFT in float64 always; the tests compare the two).
  std::string fft = "auto";
  // LAZYFUSE_CONV_TF32=0: float32 convolutions in cuDNN in full float32 (FMA math) instead of on
  // TF32 tensor cores (PyTorch's torch.backends.cudnn.allow_tf32, on by default there too).
  bool conv_tf32 = true;
  // LAZYFUSE_MATMUL_TF32=1: float32 matmuls in cuBLASLt and float32 attention may use TF32 tensor
  // cores (PyTorch's torch.backends.cuda.matmul.allow_tf32, off by default there too): cuBLASLt's
  // CUBLAS_COMPUTE_32F_FAST_TF32, and one TF32 product a product in the attention kernel instead
  // of three. 0 (default): full float32. The CPU computes in float32 either way.
  bool matmul_tf32 = false;
  // LAZYFUSE_CONV_BENCHMARK=1: cuDNN's algorithm for a new convolution shape is the fastest of every
  // one it runs and times (cudnnFindConvolutionForwardAlgorithm; PyTorch's
  // torch.backends.cudnn.benchmark, off by default there too) instead of its heuristic's first.
  bool conv_benchmark = false;
  // LAZYFUSE_CONV_NHWC=0: cuDNN convolutions take and write NCHW (cuDNN then transposes around its
  // kernels); 1 (default): NHWC, the layout its tensor-core kernels run on (codegen/cuda/cudnn.h).
  bool conv_nhwc = true;
  int attention_rows = 0;  // LAZYFUSE_ATTENTION_ROWS: query rows a block of the GPU's tensor-core attention (0: auto)
  // LAZYFUSE_ATTENTION_WGMMA: whether the tensor-core attention kernels take Hopper's warpgroup MMA
  // (wgmma) instead of mma.sync. -1 (default): the 16-bit kernel wherever it can, the float32 kernel
  // on grids where it is the faster (attention_f32_many_blocks); 1: both wherever they can; 0: neither.
  int attention_wgmma = -1;
  // LAZYFUSE_ATTENTION_KEYS: keys a K/V tile of the wgmma attention kernel at head dims up to 64
  // (64 or 128; 0: by the grid's size).
  int attention_keys = 0;
  // LAZYFUSE_ATTENTION_PAIRS: 1: every causal block of the 16-bit attention kernel takes a heavy and
  // a light query block of one head; 0: one query block a block; -1 (default): the wgmma kernel's
  // grids that keep 3 blocks an SM in pairs (attention_tc_pairs).
  int attention_pairs = -1;
  // LAZYFUSE_FEW_ROWS: the fuser's few-rows cost rule (fuse::Costs::few_rows): -1 (default): each
  // backend's answer (Backend::fuse_costs); 0: off; N: row groups over fewer than N long rows, on
  // every backend (for comparisons and tests).
  int64_t few_rows = -1;
  // LAZYFUSE_TIERED_COMPILE=0: a new GPU kernel is compiled fully optimized before its first
  // launch, instead of a quick build first and the optimized build on a background thread.
  bool tiered_compile = true;
  // LAZYFUSE_CUDA_GRAPHS=0: a replayed flush plan on a GPU launches its kernels one by one instead
  // of as one CUDA graph.
  bool cuda_graphs = true;
  // LAZYFUSE_LAUNCH_THREAD=0: CUDA graph launches are made on the flushing thread, never handed to
  // the launch thread (runtime/launch_queue.h) when flushes come back to back.
  bool launch_thread = true;
  // LAZYFUSE_PROFILE=1: every kernel launch and flush is timed, and a table of kernels is printed
  // to stderr at exit (runtime/profile.h; lf::profile_begin/profile_report for a scope).
  bool profile = false;
  // LAZYFUSE_PROFILE_FLOOR_GBS: the machine's copy bandwidth (GB/s); the profile then shows each
  // kernel's time as a ratio to the time a copy of its bytes takes. 0: unknown, the column omitted.
  double profile_floor_gbs = 0;
  // LAZYFUSE_DETERMINISTIC=1: ops whose GPU path is not deterministic (scatter_add's float atomics)
  // take a deterministic path instead (the ordered host path, slower).
  bool deterministic = false;
  // LAZYFUSE_HOST_CACHE_ALL=1: the host keeps freed blocks of every size for reuse (by default only
  // blocks of 1 MiB or more), as a GPU's caching allocator does: the buffer an intermediate frees
  // inside a flush comes back at the same address for the next output of its size, the hand-over
  // flush plans record. A testing aid: the fuzzer's CPU runs take it (a plan-replay bug of session
  // 19 showed only on a GPU until the CPU reused addresses so).
  bool host_cache_all = false;
  // LAZYFUSE_CPU_LOADER: what maps compiled CPU kernels (object files) into the process: "elf" our
  // own ELF loader (x86-64 only; needs no LLVM), "orc" LLVM ORC's JITLink (in the LLVM plugin; every
  // target), "auto" (default) the ELF loader on x86-64 and ORC elsewhere (codegen/cpu/loader.h).
  std::string cpu_loader = "auto";
  // LAZYFUSE_TRACE_FILE: a Chrome/Perfetto trace (flushes, fusing, compiles, launches) is written
  // here at exit (empty: off).
  std::string trace_file;
};

// Read once, at first use. Malformed values throw lf::Error naming the variable.
const Config& config();

// Tests use this to change settings without touching the process environment.
Config& mutable_config();

}  // namespace lf::rt
