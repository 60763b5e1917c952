// The CPU backend: kernel IR -> LLVM IR -> optimized (loop vectorizer, glibc's libmvec for vector
// transcendentals) -> an object file, in the LLVM plugin (codegen/cpu/plugin.h, loaded on the
// first compile); the object loaded by our own ELF loader (codegen/cpu/elf_loader.h, no LLVM); and
// launching over the thread pool. backend() is its backend::Backend (codegen/backend/backend.h).
// This header shows no LLVM types.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/status.h"
#include "codegen/backend/backend.h"
#include "codegen/backend/compiled.h"
#include "codegen/cpu/emit_options.h"
#include "codegen/kir/kernel_ir.h"

namespace lf::cpu {

class KernelImage;
enum class Loader : uint8_t;

// Runs rows [row_begin, row_end); within each row, the first inner dim over [col_begin, col_end)
// (a pointwise kernel's columns; a row kernel is called with the whole range).
using KernelFn = void (*)(const int64_t* meta, void* const* ptrs, int64_t row_begin, int64_t row_end,
                          int64_t col_begin, int64_t col_end);
// A long row's reduction split over threads (kir/split.h, SplitInfo).
using PartFn = void (*)(const int64_t* meta, void* const* ptrs, int64_t row, int64_t begin, int64_t end,
                        int64_t level, const void* state, void* out);
using CombineFn = void (*)(int64_t level, const void* parts, int64_t nparts, void* state);
using FinishFn = void (*)(const int64_t* meta, void* const* ptrs, int64_t row, const void* state);
// Column-block kernels (kir::column_blocks): rows [row_begin, row_end) over the outermost reduced
// indices [begin, end), each row's accumulators at out + (row - row_begin) * stride.
using ColumnPartFn = void (*)(const int64_t* meta, void* const* ptrs, int64_t row_begin, int64_t row_end,
                              int64_t begin, int64_t end, void* out, int64_t stride);

struct CompiledKernel : lf::CompiledKernel {
  KernelFn fn = nullptr;  // source: the LLVM IR before optimization
  // Set for row kernels whose outputs are all per-row values.
  PartFn part = nullptr;
  CombineFn combine = nullptr;
  FinishFn finish = nullptr;
  ColumnPartFn column_part = nullptr;  // set for column-block kernels
  std::shared_ptr<const KernelImage> image;  // the mapped code the functions point into (loader.h)
};

// The CPU backend.
const backend::Backend& backend();
// The kernel cache key of a CPU kernel: generator fingerprint, LLVM and CPU target, options, kernel IR.
std::string cache_key(const kir::Kernel& kernel, const EmitOptions& options = {});
// A matmul group (backend::Backend::matmul; codegen/cpu/matmul.cpp).
void run_matmul(backend::MatmulCall& call);
void run_conv(backend::ConvCall& call);  // conv.cpp
void run_pool(backend::PoolCall& call);  // pool.cpp
void run_sort(backend::SortCall& call);  // sort.cpp
void run_attention(backend::AttentionCall& call);  // attention.cpp
void run_scan(backend::ScanCall& call);        // scan.cpp
void run_nearest(backend::NearestCall& call);  // nearest.cpp
void run_scatter(backend::ScatterCall& call);  // scatter.cpp

// Generates, optimizes and compiles `kernel` as function `name`.
lf::StatusOr<std::shared_ptr<CompiledKernel>> compile(const kir::Kernel& kernel, const std::string& name,
                                                      const EmitOptions& options = {});

// Loads an object file `compile` produced earlier for `kernel` (CompiledKernel::binary, from the
// persistent cache) with the loader LAZYFUSE_CPU_LOADER picks (loader.h) and finds its functions in
// it. With the ELF loader (x86-64's default) needs no LLVM.
lf::StatusOr<std::shared_ptr<CompiledKernel>> load(const std::string& name, const std::string& object,
                                                     const kir::Kernel& kernel);
// The same with the given loader (tests: both loaders on one object).
lf::StatusOr<std::shared_ptr<CompiledKernel>> load(const std::string& name, const std::string& object,
                                                     const kir::Kernel& kernel, Loader loader);

// The LLVM IR `compile` would start from (for logs and golden files).
std::string emit_ir(const kir::Kernel& kernel, const std::string& name, const EmitOptions& options = {});

// What the generated code depends on besides the IR: the LLVM version the plugin is built with, the
// CPU (the cpuid words LLVM reads to pick the CPU name and features) and libmvec. Needs no LLVM.
const std::string& target_id();

// Whether the host runs AVX-512F code: the CPU has it and the OS saves its registers.
bool host_has_avx512f();
// Whether the host runs AVX2 and FMA code (256-bit vectors), likewise.
bool host_has_avx2_fma();

// Whether a launch of `kernel` with `args` should write its element outputs with streaming stores
// (EmitOptions::stream_stores): on x86-64, for at least kStreamMinBytes of element outputs, one
// inner dim, outputs of one storage size whose addresses agree modulo 64, no row plan that keeps
// values in an output between passes, and no transcendental per element (such kernels are bound
// by arithmetic, and ran a few percent slower streaming). A normal store first reads the line it
// writes (the "read for ownership"), so a pass over data far larger than the caches moves 3 bytes
// for every 2 it needs; a streaming store writes the line without reading it, and leaves it out of
// the caches. On the 2-core machine x * 2 over 2^24 floats ran 2.2x faster, layer_norm and
// standardization over 4096x4096 1.4x and 1.7x (bench/RESULTS.md); below some tens of MB the
// output would still be in the last-level cache for its next reader.
inline constexpr int64_t kStreamMinBytes = int64_t{16} << 20;
bool wants_streaming_stores(const kir::Kernel& kernel, const kir::LaunchArgs& args);

// Runs the kernel over all rows and columns, split over the CPU thread pool. Rows of at least
// kSplitMinElements elements of a kernel with split functions are reduced in chunks of about
// kSplitGrain elements, combined in chunk order: the chunks depend on the sizes only, so a result
// is the same whatever the number of threads.
inline constexpr int64_t kSplitMinElements = int64_t{1} << 16;
inline constexpr int64_t kSplitGrain = int64_t{1} << 15;
void launch(const CompiledKernel& compiled, const kir::Kernel& kernel, const kir::LaunchArgs& args,
            const EmitOptions& options = {});

// How launch() cuts a kernel's work into parallel chunks (a function of the sizes and the thread
// count, so tests can check it without timing): split reductions (`Split`: rows x chunks per
// row), ranges of rows (`Rows`), or, for fewer rows than chunks of a pointwise kernel, ranges of
// columns within each row (`Columns`: chunks per row). `chunks` is the number of parallel tasks.
struct LaunchPlan {
  enum class Mode : uint8_t { None, Split, Rows, Columns, ColumnSplit } mode = Mode::None;
  int64_t chunks = 0;  // parallel tasks
  int64_t per_row = 1; // Split and Columns: chunks of each row
  int64_t align = 1;    // Rows: chunks start at multiples of this many rows
};
// A kernel whose rows are columns of memory (kir::column_blocks) is never split row by row (a part
// would read one strided column). With at least kColumnGrain elements for each of 2 or more
// chunks of its outermost reduced dim, and kColumnMinSpan reduced indices a chunk, it runs as
// `ColumnSplit`: per_row chunks of the reduced dim, each over every row (a thread reads whole
// stretches of memory), combined per row in chunk order; else in ranges of rows (`Rows`) that
// start at multiples of kColumnAlign (whole vectors of the kept dim), one a thread. The choice
// and the chunks depend on the sizes only, so a result is the same for any thread count.
inline constexpr int64_t kColumnGrain = int64_t{1} << 18;
inline constexpr int64_t kColumnMinSpan = 64;
inline constexpr int64_t kColumnMaxChunks = 64;
inline constexpr int64_t kColumnAlign = 16;
LaunchPlan plan_launch(const kir::Kernel& kernel, const kir::LaunchArgs& args, bool has_split, int64_t threads,
                       bool has_column_part = false);

// The optimized LLVM IR and the assembly LLVM makes of `kernel` (tests check that loops vectorize).
lf::StatusOr<Inspection> inspect(const kir::Kernel& kernel, const std::string& name, const EmitOptions& options = {});

}  // namespace lf::cpu
